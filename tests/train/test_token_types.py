"""A base without token types (MPNet) trains, resumes, exports and scores like BERT does.

all-mpnet-base-v2 is the larger base of the cascade; its tokenizer yields no token_type_ids and its forward
takes none. A tiny random MPNet stands in for it here (the real one is 418 MB).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.export import model_input_names, torch_probs, write_bundle
from groundwire.train.loop import ID2LABEL, TrainConfig, default_base_model, train

PAIRS = [
    ("The shop opens at 9 am on weekdays.", "The shop opens at 9 am."),
    ("Marie Curie won two Nobel prizes.", "She won none."),
    ("Parking is free for customers.", "Parking costs $5."),
]


@pytest.fixture(scope="module")
def tiny_mpnet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import AutoTokenizer, MPNetConfig, MPNetForSequenceClassification

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(default_base_model(), model_input_names=["input_ids", "attention_mask"])
    config = MPNetConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=130, num_labels=3, id2label=ID2LABEL,
                         label2id={v: k for k, v in ID2LABEL.items()}, pad_token_id=tokenizer.pad_token_id)
    path = tmp_path_factory.mktemp("tiny-mpnet")
    MPNetForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _data(path: Path) -> Path:
    path.mkdir()
    labels = list(ID2LABEL.values())
    rows = [{"premise": p, "hypothesis": h, "label": labels[i % 3], "source": "t", "kind": "k"}
            for i, (p, h) in enumerate(PAIRS * 4)]
    for name in ("train.jsonl", "val.jsonl"):
        (path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_base_without_token_types_trains_resumes_and_exports(tiny_mpnet: Path, tmp_path: Path) -> None:
    assert model_input_names(tiny_mpnet) == ("input_ids", "attention_mask")
    cfg = TrainConfig(base_model=str(tiny_mpnet), data_dir=str(_data(tmp_path / "data")), out_dir=str(tmp_path / "run"),
                      max_length=64, batch_size=4, threads=1, log_every=1, freeze_layers=1, val_limit=12)
    record = train(cfg, command="test")
    assert record["steps"] == 3 and record["pairs_seen"] == 12
    # The frozen lowest layer kept its weights; a trained top layer moved.
    from transformers import AutoModelForSequenceClassification

    before = AutoModelForSequenceClassification.from_pretrained(tiny_mpnet).state_dict()
    after = AutoModelForSequenceClassification.from_pretrained(tmp_path / "run" / "final").state_dict()
    assert np.allclose(before["mpnet.encoder.layer.0.output.dense.weight"], after["mpnet.encoder.layer.0.output.dense.weight"])
    assert not np.allclose(before["mpnet.encoder.layer.2.output.dense.weight"],
                           after["mpnet.encoder.layer.2.output.dense.weight"])
    # A second call resumes from the checkpoint, which is already at the end of the pass.
    assert train(cfg, command="test")["steps"] == 3

    bundle = write_bundle(tmp_path / "run" / "final", tmp_path / "bundle", max_length=64, keep_fp32=True)
    scorer = OnnxScorer(bundle, model_file="model.fp32.onnx")
    assert {i.name for i in scorer.session.get_inputs()} == {"input_ids", "attention_mask"}
    reference = np.array(torch_probs(tmp_path / "run" / "final", PAIRS, max_length=64))
    np.testing.assert_allclose(scorer.probabilities(PAIRS), reference, atol=1e-4)


def test_max_steps_ends_the_pass_early(tiny_mpnet: Path, tmp_path: Path) -> None:
    cfg = TrainConfig(base_model=str(tiny_mpnet), data_dir=str(_data(tmp_path / "data")), out_dir=str(tmp_path / "run"),
                      max_length=64, batch_size=4, threads=1, freeze_layers=1, val_limit=4, max_steps=2,
                      budget_minutes=10_000)
    record = train(cfg, command="test")
    assert record["steps"] == 2 and record["pairs_seen"] == 8 and record["batches_per_epoch"] == 3
