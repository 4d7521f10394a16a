"""`groundwire train blockwise-form`: the bundle's weights as 8-bit blocks (MatMulNBits), with no quantize node."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from groundwire.scoring.onnx import OnnxScorer
from groundwire.train.dequantize import dequantize_bundle
from groundwire.train.export import torch_probs
from groundwire.train.forms import BLOCKWISE_FORM_FILE, write_blockwise_form, write_fp32_form

pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBits quantizer needs onnx-ir (the train extra)")

PAIRS = [("The museum sold 4,500 tickets in March.", "It sold 4,500 tickets."),
         ("The report was written by Ann and reviewed by Bob.", "Bob wrote the report."),
         ("The office is closed on Mondays.", "The office is open on Mondays.")]


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
