"""Export a trained cross-encoder to the bundled format: ONNX, dynamic int8, tokenizer.json and a config.

The bundle directory holds:
  model.onnx       int8 weights (onnxruntime dynamic quantization)
  tokenizer.json   the fast tokenizer, read by `tokenizers` (no transformers at run time)
  config.json      labels, max_length, thresholds, model_id, and the combiner file name if there is one
The fp32 graph is written next to it only when asked (it is for the agreement check, not shipped).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from groundwire.train.hf import load_fast_tokenizer, load_tokenizer

BUNDLE_CONFIG = "config.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
# In the positional order of the models' forward(); a model gets those its tokenizer produces (MPNet has no
# token types).
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def model_input_names(model_dir: str | Path) -> tuple[str, ...]:
    produced = load_tokenizer(model_dir).model_input_names
    return tuple(name for name in INPUT_NAMES if name in produced)


def export_onnx(model_dir: str | Path, onnx_path: str | Path, *, opset: int = 17) -> Path:
    """fp32 ONNX graph with dynamic batch and sequence axes, exported with the TorchScript exporter."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    model.config.return_dict = False
    names = model_input_names(model_dir)
    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names} | {"logits": {0: "batch"}}
    onnx_path = Path(onnx_path)
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    with torch.inference_mode():
        torch.onnx.export(model, dummy, str(onnx_path), input_names=list(names), output_names=["logits"],
                          dynamic_axes=axes, opset_version=opset, dynamo=False, external_data=False)
    return onnx_path


def quantize_int8(fp32_path: str | Path, int8_path: str | Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per-channel weight scales: per-tensor int8 moved some probabilities by 0.4 on the agreement pairs,
    # per-channel keeps them within about 0.15 at the same size. reduce_range (7-bit weights) keeps the
    # u8 x s8 products of CPUs without VNNI (AVX2: VPMADDUBSW) from saturating: on v2 it took the largest
    # int8-vs-fp32 difference on the agreement pairs from 0.32 to 0.155.
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=True)
    return Path(int8_path)


def write_bundle(
    model_dir: str | Path,
    out_dir: str | Path,
    *,
    max_length: int,
    thresholds: tuple[float, float] = (0.8, 0.2),
    model_id: str = "groundwire-verifier",
    keep_fp32: bool = False,
) -> Path:
    """Export + quantize `model_dir` (a transformers checkpoint) into `out_dir`; returns out_dir."""
    from transformers import AutoConfig

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fp32 = export_onnx(model_dir, out / "model.fp32.onnx")
    quantize_int8(fp32, out / MODEL_FILE)
    if not keep_fp32:
        fp32.unlink()
    tokenizer = load_fast_tokenizer(model_dir)
    tokenizer.backend_tokenizer.save(str(out / TOKENIZER_FILE))
    config = AutoConfig.from_pretrained(str(model_dir))
    labels = [config.id2label[i] for i in range(config.num_labels)]
    write_config(out, {"model_id": model_id, "labels": labels, "max_length": max_length,
                       "accept_at": thresholds[0], "reject_at": thresholds[1],
                       "do_lower_case": bool(getattr(tokenizer, "do_lower_case", False)),
                       # Dynamic int8 quantizes activations with one scale per batch tensor: only pairs
                       # scored one at a time keep a score independent of the other pairs in the call.
                       "batch_size": 1})
    return out


def write_config(bundle: Path, updates: Mapping[str, object]) -> dict[str, object]:
    """Merge `updates` into the bundle's config.json (thresholds and the combiner are added after calibration)."""
    path = Path(bundle) / BUNDLE_CONFIG
    config: dict[str, object] = json.loads(path.read_text()) if path.exists() else {}
    config.update(updates)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return config


def torch_probs(model_dir: str | Path, pairs: Sequence[tuple[str, str]], *, max_length: int) -> list[list[float]]:
    """fp32 torch probabilities, one pair at a time (no padding at all): the reference for the agreement test."""
    import torch
    from transformers import AutoModelForSequenceClassification

    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    out = []
    with torch.inference_mode():
        for premise, hypothesis in pairs:
            enc = tokenizer(premise, hypothesis, truncation="longest_first", max_length=max_length,
                            return_tensors="pt")
            out.append(torch.softmax(model(**enc).logits[0], -1).tolist())
    return out


def copy_bundle(src: str | Path, dst: str | Path) -> None:
    """Copy the shipped files (not the fp32 graph) into the package's models/ directory."""
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    for path in Path(src).iterdir():
        if path.is_file() and path.name != "model.fp32.onnx":
            shutil.copy2(path, dst / path.name)
