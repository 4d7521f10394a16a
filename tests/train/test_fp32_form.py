"""`groundwire train fp32-form`: the bundle's int8 weights, run in fp32, stored as small as the int8 graph."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.dequantize import dequantize_bundle
from groundwire.train.export import torch_probs
from groundwire.train.forms import FP32_FORM_FILE, write_fp32_form

PAIRS = [("The museum sold 4,500 tickets in March.", "It sold 4,500 tickets."),
         ("The report was written by Ann and reviewed by Bob.", "Bob wrote the report."),
         ("The office is closed on Mondays.", "The office is open on Mondays.")]


def test_the_fp32_form_scores_the_int8_weights_in_fp32(tiny_model_dir: Path, tiny_bundle: Path,
                                                       tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(tiny_bundle, bundle)
    path = write_fp32_form(bundle, tiny_model_dir, min_size=256)
    assert path == bundle / FP32_FORM_FILE
    forms = json.loads((bundle / "config.json").read_text())["forms"]
    assert set(forms) == {"int8", "fp32"}
    # 2 layers x (Q, K, V, attention output, intermediate, output), fused QKV counted once, plus the embeddings.
    assert forms["fp32"]["weights_on_int8_grid"] >= 2 * 3
    # Stored as int8 on their grid: far smaller than the fp32 export, and no weight lost on the way.
    assert path.stat().st_size < 0.5 * (bundle / "model.fp32.onnx").stat().st_size
    rebuilt = torch_probs(dequantize_bundle(bundle, tiny_model_dir, tmp_path / "fp32"), PAIRS, max_length=64)
    fp32 = OnnxScorer(bundle, form="fp32")
    assert fp32.form == "fp32"
    np.testing.assert_allclose(fp32.probabilities(PAIRS), rebuilt, atol=1e-4)
