"""Rebuild an fp32 transformers checkpoint from an int8 bundle, so a shipped model can be trained further.

Only the int8 ONNX of a shipped model is kept (the fp32 checkpoints lived outside the repository and were lost
with a work machine), yet a controlled experiment on the shipped model (issue 19's distillation) has to start
from its weights. The int8 graph holds all of them:
  - each Linear as MatMulInteger over a per-channel int8 weight (in x out, one scale per output column), whose
    result feeds Cast -> Mul(activation scale x weight scale) -> Add(<module>.bias): the bias names the module;
  - the embedding tables as per-tensor uint8 Gathers, dequantized by a DequantizeLinear whose scale is named
    `<table>.weight_scale`;
  - every LayerNorm weight and bias in fp32, under its own name.
Weights come back as (q - zero_point) x scale: the int8 model's weights exactly, not the fp32 ones it was
quantized from. The architecture (layer count, sizes, vocabulary) comes from the base checkpoint's config.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.train.export import MODEL_FILE
from groundwire.train.hf import load_tokenizer
from groundwire.train.loop import ID2LABEL

if TYPE_CHECKING:
    import onnx


def _initializers(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Every initializer by name, and by the names of the Identity nodes that alias one: the exporter keeps one
    copy of equal tensors (e.g. freshly initialised biases) and names the others through Identity."""
    from onnx import numpy_helper

    arrays = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays[node.output[0]] = arrays[node.input[0]]
    return arrays


def _bias_after(node: onnx.NodeProto, consumers: dict[str, list[onnx.NodeProto]], names: set[str]) -> str | None:
    """The bias initializer of the first Add downstream of `node` (through Cast and Mul), if there is one."""
    out = node.output[0]
    for _ in range(4):
        following = consumers.get(out, [])
        if len(following) != 1:
            return None
        nxt = following[0]
        if nxt.op_type == "Add":
            return next((name for name in nxt.input if name in names and name.endswith(".bias")), None)
        if nxt.op_type not in ("Cast", "Mul"):
            return None
        out = nxt.output[0]
    return None


def int8_state_dict(onnx_path: str | Path) -> dict[str, np.ndarray]:
    """fp32 arrays under the transformers parameter names, read from a dynamic-int8 graph (`quantize_int8`)."""
    import onnx

    graph = onnx.load(str(onnx_path)).graph
    inits = _initializers(graph)
    names = set(inits)
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state = {name: array.astype(np.float32) for name, array in inits.items()
             if array.dtype == np.float32 and array.ndim >= 1 and not name.startswith(("onnx::", "/"))
             and not name.endswith(("_scale", "_zero_point"))}
    for node in graph.node:
        if node.op_type == "MatMulInteger":
            weight = node.input[1].removesuffix("_quantized")
            bias = _bias_after(node, consumers, names)
            if bias is None:
                raise InputError(f"{onnx_path}: no bias follows the int8 weight {weight}; not a quantize_int8 graph",
                                 code=ErrorCode.INVALID_FILE)
            q = inits[f"{weight}_quantized"].astype(np.float32)
            zero = inits[f"{weight}_zero_point"].astype(np.float32)
            scale = inits[f"{weight}_scale"].astype(np.float32)
            # (in, out) with one scale per output column; torch's Linear keeps (out, in).
            state[bias.removesuffix(".bias") + ".weight"] = ((q - zero) * scale).T.copy()
        elif node.op_type == "DequantizeLinear" and node.input[1].endswith(".weight_scale"):
            table = node.input[1].removesuffix("_scale")
            q = inits[f"{table}_quantized"].astype(np.float32)
            state[table] = (q - inits[f"{table}_zero_point"].astype(np.float32)) * inits[node.input[1]]
    return state


def dequantize_bundle(bundle: str | Path, base_model: str | Path, out: str | Path) -> Path:
    """Write a transformers checkpoint (weights of `bundle`'s int8 graph, architecture and tokenizer of
    `base_model`) to `out`; every parameter of the model must be found in the graph."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = AutoConfig.from_pretrained(str(base_model), num_labels=len(ID2LABEL), id2label=ID2LABEL,
                                        label2id={v: k for k, v in ID2LABEL.items()})
    model = AutoModelForSequenceClassification.from_config(config)  # type: ignore[no-untyped-call]
    arrays = int8_state_dict(Path(bundle) / MODEL_FILE)
    expected = dict(model.named_parameters())
    missing = sorted(set(expected) - set(arrays))
    if missing:
        raise InputError(f"{bundle}: the int8 graph lacks {len(missing)} parameters of {base_model}'s "
                         f"architecture, e.g. {missing[:3]}", code=ErrorCode.INVALID_FILE)
    with torch.no_grad():
        for name, param in expected.items():
            value = torch.from_numpy(arrays[name])
            if value.shape != param.shape:
                raise InputError(f"{bundle}: {name} is {tuple(value.shape)} in the graph, {tuple(param.shape)} "
                                 f"in {base_model}'s architecture", code=ErrorCode.INVALID_FILE)
            param.copy_(value)
    out = Path(out)
    model.save_pretrained(out)
    load_tokenizer(base_model).save_pretrained(out)
    return out
