"""Quantised forms of the bundled model without a per-run DynamicQuantizeLinear (issue 48, item 3): build each
candidate from the bundle's own weights, and print how well it agrees with fp32, what onnxruntime runs and what it
costs. The shipped forms (int8, fp32, blockwise) are measured beside them, from the bundle's files.

    .venv/bin/python scripts/quant_forms.py                  # every candidate (about 5 minutes on 2 busy cores)
    .venv/bin/python scripts/quant_forms.py --only static-minmax nbits4-b32

Candidates, all from the fp32 export of the int8 weights (`train/forms.py: fp32_export`):
  static-*   onnxruntime.quantization.quantize_static, QDQ, per-channel 7-bit weights (as the int8 form), uint8
             activations whose scales are fixed from calibration pairs: premise/hypothesis pairs drawn from the
             training files (--train; never the agreement pairs), 16 a file. "qlinear" quantizes each MatMul's
             output too (onnxruntime runs QLinearMatMul); the others leave outputs in fp32 (MatMulIntegerToFloat
             with a fixed input scale); "moving-average" takes each activation's range as the moving average of
             the calibration pairs' ranges instead of their extremes.
  nbits4-*   MatMulNBits, 4-bit weight blocks of 16/32/128 values, int8 kernels (accuracy_level 4).
The bar (what the form trial may ship): agreement with fp32 at least as good as the int8 form's, measured here on
the same 30 pairs (tests/train/fixtures/agreement.json) by the same scorer code: max and mean absolute probability
error, and the same label on each pair fp32 is confident about (p > 0.7).

Per form it prints: that agreement; operators of the graph onnxruntime runs after its own fusions: quantize
operators per run (dynamic: DynamicQuantizeLinear, or fused in DynamicQuantizeMatMul; static: QuantizeLinear) and
the MatMul kernels by type; the file's size; CPU seconds to score the 30 pairs and the 4 trial pairs on one thread,
median of --rounds interleaved rounds (CPU time, so that other processes on the machine move it less). Last, the
share of the int8 form's operator time its DynamicQuantizeLinear nodes take when not fused (what a form without
them could save at most). It never asserts a time.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from groundwire.scoring.forms import TRIAL_PAIRS, bundle_forms
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.forms import fp32_export
from groundwire.train.loop import default_base_model

ROOT = Path(__file__).resolve().parents[1]
AGREEMENT = ROOT / "tests" / "train" / "fixtures" / "agreement.json"
TRAIN = ROOT.parent / "shared" / "data" / "train"  # beside the checkout, as bench/ finds the dev files
QUANTIZE_OPS = {"dynamic": ("DynamicQuantizeLinear", "DynamicQuantizeMatMul"), "static": ("QuantizeLinear",)}


def calibration_pairs(train: Path, per_file: int, seed: int = 0) -> list[tuple[str, str]]:
    """`per_file` premise/hypothesis pairs drawn from each training file."""
    rng = random.Random(seed)
    pairs = []
    for path in sorted(train.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.open()]
        pairs += [(row["premise"], row["hypothesis"]) for row in rng.sample(rows, min(per_file, len(rows)))]
    return pairs


def calibration_reader(bundle: Path, pairs: list[tuple[str, str]]) -> object:
    """A CalibrationDataReader that feeds the pairs one at a time, framed and truncated as the scorer frames them."""
    from onnxruntime.quantization import CalibrationDataReader

    scorer = OnnxScorer(bundle, form="int8")

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.feeds = self._feeds()

        def _feeds(self) -> Iterator[dict[str, np.ndarray]]:
            for encoding in scorer._encode(pairs)[0]:
                ids = np.array([encoding.ids], dtype=np.int64)
                yield {"input_ids": ids, "attention_mask": np.ones_like(ids),
                       "token_type_ids": np.array([encoding.type_ids], dtype=np.int64)}

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    return Reader()


def build_static(fp32: Path, out: Path, reader: Callable[[], object], *, outputs: bool, moving_average: bool) -> None:
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    graph = onnx.load(str(fp32)).graph
    weights = {init.name for init in graph.initializer}
    # The MatMuls and Gemms of a Linear, and the embedding Gathers: those the int8 form quantizes.
    nodes = [node.name for node in graph.node
             if node.op_type in ("MatMul", "Gemm", "Gather") and any(name in weights for name in node.input)]
    options: dict[str, object] = {"CalibMovingAverage": moving_average}
    if not outputs:
        options["OpTypesToExcludeOutputQuantization"] = ["MatMul", "Gemm"]
    quantize_static(str(fp32), str(out), reader(), quant_format=QuantFormat.QDQ, per_channel=True, reduce_range=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax, nodes_to_quantize=nodes,
                    op_types_to_quantize=["MatMul", "Gemm", "Gather"], extra_options=options)


def build_nbits(fp32: Path, out: Path, *, bits: int, block_size: int, symmetric: bool) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    settings = {"bits": bits, "block_size": block_size, "accuracy_level": 4, "is_symmetric": symmetric}
    config = DefaultWeightOnlyQuantConfig(op_types_to_quantize=("MatMul",), **settings)  # type: ignore[arg-type]
    quantizer = MatMulNBitsQuantizer(onnx.load(str(fp32)), algo_config=config, op_types_to_quantize=("MatMul",),
                                     **settings)  # type: ignore[arg-type]
    quantizer.process()
    blocks = out.with_suffix(".blocks.onnx")
    quantizer.model.save_model_to_file(str(blocks), use_external_data_format=False)
    quantize_dynamic(str(blocks), str(out), op_types_to_quantize=["Gather"], weight_type=QuantType.QUInt8)
    blocks.unlink()


def operators(path: Path, scratch: Path, session_config: Mapping[str, str]) -> collections.Counter[str]:
    """Operator types of the graph onnxruntime runs (after its fusions, at the level the scorer loads with)."""
    import onnx
    import onnxruntime as ort

    options = ort.SessionOptions()
    for key, value in session_config.items():
        options.add_session_config_entry(key, value)
    options.optimized_model_filepath = str(scratch / f"optimized-{path.name}")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED  # portable across CPUs
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return collections.Counter(node.op_type for node in onnx.load(options.optimized_model_filepath).graph.node)


def quantize_share(scorer: OnnxScorer, pairs: list[tuple[str, str]], scratch: Path) -> float:
    """The share of the int8 form's operator time spent in DynamicQuantizeLinear, with the fusions that hide it
    inside DynamicQuantizeMatMul and MatMulIntegerToFloat turned off (onnxruntime's profiler, one thread)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = str(scratch / "profile")
    session = ort.InferenceSession(str(scorer.bundle / "model.onnx"), options, providers=["CPUExecutionProvider"],
                                   disabled_optimizers=["DynamicQuantizeMatMulFusion", "MatMulIntegerToFloatFusion"])
    names = {i.name for i in session.get_inputs()}
    for encoding in scorer._encode(pairs)[0]:
        ids = np.array([encoding.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64)}
        session.run(["logits"], {k: v for k, v in feed.items() if k in names})
    by_op: collections.Counter[str] = collections.Counter()
    for event in json.loads(Path(session.end_profiling()).read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"]
    return by_op["DynamicQuantizeLinear"] / sum(by_op.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=bundled_path())
    parser.add_argument("--train", type=Path, default=TRAIN, help="training pairs to calibrate on")
    parser.add_argument("--per-file", type=int, default=16, help="calibration pairs per training file")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="*", help="candidates to build (default: all)")
    args = parser.parse_args()
    data = json.loads(AGREEMENT.read_text())
    pairs = [(str(a), str(b)) for a, b in data["pairs"]]
    reference = np.array(data["fp32_probs"])
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "bundle"
        shutil.copytree(args.bundle, work)
        fp32 = fp32_export(work, default_base_model(), Path(tmp))
        calibration = calibration_pairs(args.train, args.per_file)
        if not calibration and any(name.startswith("static") for name in args.only or ["static"]):
            sys.exit(f"--train {args.train}: no *.jsonl pairs to calibrate on (shared/data/train)")
        candidates: dict[str, Callable[[Path], None]] = {
            "static-qlinear": lambda out: build_static(fp32, out, lambda: calibration_reader(work, calibration),
                                                       outputs=True, moving_average=False),
            "static-minmax": lambda out: build_static(fp32, out, lambda: calibration_reader(work, calibration),
                                                      outputs=False, moving_average=False),
            "static-moving-average": lambda out: build_static(fp32, out, lambda: calibration_reader(work, calibration),
                                                              outputs=False, moving_average=True),
            **{f"nbits4-b{block}": (lambda out, block=block: build_nbits(fp32, out, bits=4, block_size=block,
                                                                         symmetric=False))
               for block in (16, 32, 128)},
        }
        shipped = bundle_forms(json.loads((work / "config.json").read_text()))
        files = {name: form.model_file for name, form in shipped.items()}
        for name, build in candidates.items():
            if args.only and name not in args.only:
                continue
            files[name] = f"{name}.onnx"
            print(f"building {name} ...", file=sys.stderr, flush=True)
            build(work / files[name])
        scorers = {name: OnnxScorer(work, form=name, threads=1) if name in shipped
                   else OnnxScorer(work, model_file=file, threads=1) for name, file in files.items()}
        rows = {}
        for name, scorer in scorers.items():
            probs = scorer.probabilities(pairs)
            error = np.abs(probs - reference)
            clear = reference.max(axis=1) > 0.7
            ops = operators(work / files[name], Path(tmp), shipped[name].session_config if name in shipped else {})
            rows[name] = {
                "max": float(error.max()), "mean": float(error.mean()),
                "labels": f"{int((probs[clear].argmax(1) == reference[clear].argmax(1)).sum())}/{int(clear.sum())}",
                "quantize": {kind: sum(ops[op] for op in names) for kind, names in QUANTIZE_OPS.items()},
                "matmul": {op: n for op, n in sorted(ops.items()) if "MatMul" in op or "Gemm" in op},
                "mib": (work / files[name]).stat().st_size / 2**20,
            }
        timed = pairs + list(TRIAL_PAIRS)
        cpu: dict[str, list[float]] = {name: [] for name in scorers}
        for _ in range(args.rounds):  # interleaved, so that a busy spell slows every form alike
            for name, scorer in scorers.items():
                started = time.process_time()
                scorer.probabilities(timed)
                cpu[name].append(time.process_time() - started)
        share = quantize_share(scorers["int8"], pairs * 3, Path(tmp))
    bar = rows["int8"]
    print(f"{'form':22s} {'max err':>7s} {'mean':>6s} {'labels':>6s} {'bar':>4s} {'dyn q':>5s} {'st q':>4s} "
          f"{'MiB':>5s} {'cpu s':>6s} {'x int8':>6s}  MatMul kernels")
    for name, row in rows.items():
        passes = row["max"] <= bar["max"] and row["mean"] <= bar["mean"] and row["labels"] == bar["labels"]
        seconds = statistics.median(cpu[name])
        print(f"{name:22s} {row['max']:7.4f} {row['mean']:6.4f} {row['labels']:>6s} {'ok' if passes else 'FAIL':>4s} "
              f"{row['quantize']['dynamic']:5d} {row['quantize']['static']:4d} {row['mib']:5.1f} {seconds:6.3f} "
              f"{seconds / statistics.median(cpu['int8']):6.2f}  {row['matmul']}")
    print(f"({len(timed)} pairs on one thread, median of {args.rounds} rounds; bar: the int8 form's agreement here)")
    print(f"int8's DynamicQuantizeLinear, unfused: {share:.1%} of its operator time on this CPU")


if __name__ == "__main__":
    main()
