"""An int8 bundle back to an fp32 checkpoint: every weight within its quantization step of the trained one, and
the rebuilt model scores as the bundle does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from groundwire.foundation.errors import InputError
from groundwire.train.dequantize import dequantize_bundle

PAIRS = [("The museum sold 4,500 tickets in March.", "It sold 4,500 tickets."),
         ("The report was written by Ann and reviewed by Bob.", "Bob wrote the report."),
         ("The office is closed on Mondays.", "The office is open on Mondays.")]


def test_weights_come_back_within_one_quantization_step(tiny_model_dir: Path, tiny_bundle: Path,
                                                        tmp_path: Path) -> None:
    from transformers import AutoModelForSequenceClassification

    rebuilt_dir = dequantize_bundle(tiny_bundle, tiny_model_dir, tmp_path / "fp32")
    trained = dict(AutoModelForSequenceClassification.from_pretrained(tiny_model_dir).named_parameters())
    rebuilt = dict(AutoModelForSequenceClassification.from_pretrained(rebuilt_dir).named_parameters())
    assert set(rebuilt) == set(trained)
    for name, param in trained.items():
        w, r = param.detach().numpy(), rebuilt[name].detach().numpy()
        if name.endswith(("bias", "LayerNorm.weight")):
            np.testing.assert_array_equal(r, w, err_msg=name)  # kept in fp32 by the int8 graph
        elif "embeddings" in name:
            step = np.ptp(w) / 255  # one uint8 scale per table
            assert np.abs(r - w).max() <= step, name
        else:
            step = np.abs(w).max(axis=1, keepdims=True) / 63  # 7-bit weights, one scale per output row
            assert (np.abs(r - w) <= step * 0.51 + 1e-7).all(), name
    assert json.loads((rebuilt_dir / "config.json").read_text())["id2label"] == {
        "0": "entailment", "1": "neutral", "2": "contradiction"}


def test_the_rebuilt_model_scores_as_the_bundle(tiny_model_dir: Path, tiny_bundle: Path, tmp_path: Path) -> None:
    from groundwire.scoring.onnx import OnnxScorer
    from groundwire.train.export import torch_probs

    rebuilt = torch_probs(dequantize_bundle(tiny_bundle, tiny_model_dir, tmp_path / "fp32"), PAIRS, max_length=64)
    int8 = OnnxScorer(tiny_bundle).score(PAIRS)
    np.testing.assert_allclose([p[0] for p in rebuilt], int8.support, atol=0.05)
    assert int8.contradiction is not None
    np.testing.assert_allclose([p[2] for p in rebuilt], int8.contradiction, atol=0.05)


def test_a_base_of_another_shape_is_refused(tiny_bundle: Path, tmp_path: Path) -> None:
    from transformers import BertConfig, BertForSequenceClassification

    from groundwire.train.loop import default_base_model

    # Three layers where the bundle has two: the third layer's weights are not in the graph.
    base = tmp_path / "three-layers"
    tiny = json.loads((Path(default_base_model()) / "config.json").read_text())
    BertForSequenceClassification(BertConfig(**{**tiny, "hidden_size": 32, "num_hidden_layers": 3,
                                                 "num_attention_heads": 2, "intermediate_size": 64,
                                                 "max_position_embeddings": 128})).save_pretrained(base)
    with pytest.raises(InputError, match="lacks"):
        dequantize_bundle(tiny_bundle, base, tmp_path / "out")
