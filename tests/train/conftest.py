"""A tiny randomly initialised BERT cross-encoder (with the real MiniLM tokenizer), built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from groundwire.train.loop import ID2LABEL, default_base_model

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(default_base_model())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=3, id2label=ID2LABEL,
                        label2id={v: k for k, v in ID2LABEL.items()})
    model = BertForSequenceClassification(config)
    # Larger classifier weights than the default init, so the three labels differ visibly.
    torch.nn.init.normal_(model.classifier.weight, std=2.0)
    path = tmp_path_factory.mktemp("tiny-bert")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_bundle(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from groundwire.train.export import write_bundle

    return write_bundle(tiny_model_dir, tmp_path_factory.mktemp("bundle"), max_length=64, keep_fp32=True,
                        thresholds=(0.7, 0.3), model_id="tiny-test")
