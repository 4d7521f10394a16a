"""The bundle's other forms, built from its int8 model alone, for CPUs whose int8 kernels are slow.

The fp32 form: the int8 model's own weights, run in fp32.

onnxruntime's int8 matrix kernels are fast where the CPU has VNNI (AVX512-VNNI, AVX-VNNI, AMX); without it the
same int8 graph takes several times longer (issue 35: 6x on a 2-core EPYC), while fp32 kernels do not depend on
VNNI. The fp32 form is built from the int8 bundle alone, so it scores what the shipped model scores:
  1. the int8 graph's weights come back as (q - zero_point) x scale (`train/dequantize.py`);
  2. exported to fp32 ONNX and fused by onnxruntime's transformer optimizer (Attention, SkipLayerNorm, BiasGelu);
  3. every large weight is stored again as int8 on its own grid behind a DequantizeLinear, so the file is as small
     as the int8 one (23 MB, not 91), and the runtime folds those nodes into fp32 constants when the session loads
     (`session.disable_quant_qdq`, which the bundle's config names).
Step 3 is exact: a weight is stored only when every value lies on the grid (within 1e-4 of a step).

The blockwise form (issue 48): the same fp32 export, its MatMul weights stored as 8-bit blocks of 128 values with a
scale each (onnxruntime's MatMulNBits, `accuracy_level` 4: int8 kernels) and its embedding tables as the int8
model's uint8 ones. The kernel quantizes each activation row per block as it multiplies, so the graph has no
DynamicQuantizeLinear and a pair's scores barely depend on the other pairs of a batch. It agrees with fp32 at
least as well as the int8 form on the agreement pairs; static int8 and 4-bit weights were tried and do not
(`scripts/quant_forms.py`, figures in docs/accuracy.md). It needs onnxruntime 1.22 (x86 kernels for 8-bit
MatMulNBits).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from groundwire.train.dequantize import dequantize_bundle
from groundwire.train.export import BUNDLE_CONFIG, MODEL_FILE, export_onnx, write_config

if TYPE_CHECKING:
    import onnx

FP32_FORM_FILE = "model.fp32w8.onnx"
FP32_SESSION_CONFIG = {"session.disable_quant_qdq": "1"}
"""Fold the weights' DequantizeLinear nodes at load instead of running int8 kernels on them."""
BLOCKWISE_FORM_FILE = "model.blockwise.onnx"
BLOCKWISE = {"bits": 8, "block_size": 128, "accuracy_level": 4}
"""8-bit weight blocks of 128 values (block 32 and 64 agreed no better), run by int8 kernels (accuracy level 4)."""
BLOCKWISE_MIN_ONNXRUNTIME = "1.22"
_GRID_STEPS = (64, 63, 127)  # reduce_range int8 (7-bit) weights first, then full 8-bit


def write_fp32_form(bundle: str | Path, base_model: str | Path, *, min_size: int = 4096) -> Path:
    """Write `bundle`/model.fp32w8.onnx and name it under config.json's "forms"; returns its path. Weights of
    fewer than `min_size` values (biases, LayerNorm) stay fp32."""
    import onnx
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoConfig

    bundle = Path(bundle)
    architecture = AutoConfig.from_pretrained(str(base_model))
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = fp32_export(bundle, base_model, Path(tmp))
        fused = optimize_model(str(fp32), model_type="bert", num_heads=architecture.num_attention_heads,
                               hidden_size=architecture.hidden_size, opt_level=1)
        graph = fused.model
    stored = _store_weights_on_grid(graph, onnx.load(str(bundle / MODEL_FILE)), min_size)
    out = bundle / FP32_FORM_FILE
    onnx.save(graph, str(out))
    _list_form(bundle, "fp32", {"model_file": FP32_FORM_FILE, "batch_size": 1, "session_config": FP32_SESSION_CONFIG,
                                "weights_on_int8_grid": stored})
    return out


def write_blockwise_form(bundle: str | Path, base_model: str | Path) -> Path:
    """Write `bundle`/model.blockwise.onnx and name it under config.json's "forms"; returns its path."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    bundle = Path(bundle)
    out = bundle / BLOCKWISE_FORM_FILE
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = fp32_export(bundle, base_model, Path(tmp))
        config = DefaultWeightOnlyQuantConfig(is_symmetric=True, op_types_to_quantize=("MatMul",), **BLOCKWISE)
        quantizer = MatMulNBitsQuantizer(onnx.load(str(fp32)), algo_config=config, is_symmetric=True,
                                         op_types_to_quantize=("MatMul",), **BLOCKWISE)
        quantizer.process()
        blocks = Path(tmp) / "blocks.onnx"
        quantizer.model.save_model_to_file(str(blocks), use_external_data_format=False)
        # The embedding tables as the int8 graph stores them (uint8 rows, dequantized after the Gather): their
        # values lie on that grid already, so this gives back the int8 model's own tables.
        quantize_dynamic(str(blocks), str(out), op_types_to_quantize=["Gather"], weight_type=QuantType.QUInt8)
    _list_form(bundle, "blockwise", {"model_file": BLOCKWISE_FORM_FILE, "batch_size": 1,
                                     "min_onnxruntime": BLOCKWISE_MIN_ONNXRUNTIME, **BLOCKWISE})
    return out


def fp32_export(bundle: Path, base_model: str | Path, tmp: Path) -> Path:
    """The int8 graph's weights as an fp32 ONNX export (unfused, as `train export` writes it), in `tmp`."""
    checkpoint = dequantize_bundle(bundle, base_model, tmp / "checkpoint")
    return export_onnx(checkpoint, tmp / "fp32.onnx")


def _list_form(bundle: Path, name: str, block: dict[str, object]) -> None:
    """Name a form under config.json's "forms", after those listed (the int8 model first)."""
    config = json.loads((bundle / BUNDLE_CONFIG).read_text())
    forms = dict(config.get("forms") or {"int8": {"model_file": MODEL_FILE, "batch_size": 1}})
    forms[name] = block
    write_config(bundle, {"forms": forms})


def _store_weights_on_grid(graph: onnx.ModelProto, int8_model: onnx.ModelProto, min_size: int) -> int:
    """Replace each large fp32 weight of `graph` by int8 values x a per-column scale (MatMul and Attention
    weights) or by the int8 model's own uint8 table (embeddings), behind a DequantizeLinear; returns how many."""
    from onnx import helper, numpy_helper

    consumers: dict[str, set[str]] = {}
    for node in graph.graph.node:
        for name in node.input:
            consumers.setdefault(name, set()).add(node.op_type)
    quantized_tables = {init.name: init for init in int8_model.graph.initializer}
    dequantize_nodes = []
    for init in list(graph.graph.initializer):
        weight = numpy_helper.to_array(init)
        if weight.dtype != np.float32 or weight.ndim != 2 or weight.size < min_size:
            continue
        table = quantized_tables.get(f"{init.name}_quantized")
        if table is not None:  # an embedding table: the int8 graph's uint8 values, scale and zero point
            parts = [table, quantized_tables[f"{init.name}_scale"], quantized_tables[f"{init.name}_zero_point"]]
            axis = None
        elif consumers.get(init.name, set()) <= {"MatMul", "Attention"}:
            columns = _on_grid(weight)
            if columns is None:
                continue
            values, scale = columns
            zero = np.zeros(weight.shape[1], dtype=np.int8)
            parts = [numpy_helper.from_array(a) for a in (values, scale, zero)]
            axis = 1
        else:
            continue
        names = [f"{init.name}{suffix}" for suffix in ("_q", "_scale", "_zero_point")]
        for part, name in zip(parts, names, strict=True):
            copy = type(part).FromString(part.SerializeToString())
            copy.name = name
            graph.graph.initializer.append(copy)
        graph.graph.initializer.remove(init)
        node = helper.make_node("DequantizeLinear", names, [init.name])
        if axis is not None:
            node.attribute.append(helper.make_attribute("axis", axis))
        dequantize_nodes.append(node)
    for position, node in enumerate(dequantize_nodes):
        graph.graph.node.insert(position, node)
    return len(dequantize_nodes)


def _on_grid(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """int8 values and one scale per column that give back `weight` exactly, if its columns lie on a grid."""
    peak = np.abs(weight).max(axis=0)
    for steps in _GRID_STEPS:
        scale = np.where(peak > 0, peak / steps, 1.0).astype(np.float32)
        values = weight / scale
        if np.abs(values - np.round(values)).max() < 1e-4 * steps:
            return np.round(values).astype(np.int8), scale
    return None
