"""`groundwire train fp32-form` and `blockwise-form`: the bundle's int8 weights, run in fp32 or as 8-bit blocks."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.dequantize import dequantize_bundle
from groundwire.train.export import torch_probs
from groundwire.train.forms import BLOCKWISE_FORM_FILE, FP32_FORM_FILE, write_blockwise_form, write_fp32_form

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


@pytest.mark.skipif(importlib.util.find_spec("onnx_ir") is None,
                    reason="onnxruntime's MatMulNBits quantizer needs onnx-ir (the train extra)")
def test_the_blockwise_form_scores_the_int8_weights_in_8_bit_blocks(tiny_model_dir: Path, tiny_bundle: Path,
                                                                   tmp_path: Path) -> None:
    import onnx

    bundle = tmp_path / "bundle"
    shutil.copytree(tiny_bundle, bundle)
    path = write_blockwise_form(bundle, tiny_model_dir)
    assert path == bundle / BLOCKWISE_FORM_FILE
    forms = json.loads((bundle / "config.json").read_text())["forms"]
    assert list(forms) == ["int8", "blockwise"] and forms["blockwise"]["min_onnxruntime"] == "1.22"
    ops = [node.op_type for node in onnx.load(str(path)).graph.node]
    # 2 layers x (Q, K, V, attention output, intermediate, output) as 8-bit blocks; no per-run quantize node.
    assert ops.count("MatMulNBits") == 2 * 6 and "DynamicQuantizeLinear" not in ops
    rebuilt = torch_probs(dequantize_bundle(bundle, tiny_model_dir, tmp_path / "fp32"), PAIRS, max_length=64)
    blockwise = OnnxScorer(bundle, form="blockwise")
    assert blockwise.form == "blockwise"
    np.testing.assert_allclose(blockwise.probabilities(PAIRS), rebuilt, atol=0.02)
    # Building another form keeps the forms listed before it.
    write_fp32_form(bundle, tiny_model_dir, min_size=256)
    assert list(json.loads((bundle / "config.json").read_text())["forms"]) == ["int8", "blockwise", "fp32"]
