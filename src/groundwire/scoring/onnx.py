"""ONNX backend: groundwire's bundled int8 verifier ("bundled") or a user's own export ("onnx:<dir>").

Runs on onnxruntime + tokenizers only: no torch, no transformers, no network. Pairs are sorted by length
and scored in padded batches with attention masks, so padding is masked out. Dynamic int8 quantizes
activations with one scale per tensor, so in a batch the other pairs can move a score (by up to 0.13 on
RAGTruth windows): an int8 bundle therefore says "batch_size": 1 in its config.json, which keeps every
score independent of the rest of the call, agrees better with fp32 (v1: max error 0.10 instead of 0.16 on
the agreement pairs) and costs about 15% of throughput on 2 cores, won back by running several one-pair runs
at once, one thread each. An fp32 export may batch freely.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from groundwire.scoring.base import Calibration, Combiner, PairScores
from groundwire.scoring.combiner import load_combiner

BUNDLED_DIR = "models/verifier"
_SUPPORT_LABEL = "entailment"
_CONTRADICTION_LABEL = "contradiction"


def bundled_path() -> Path:
    return Path(str(resources.files("groundwire") / BUNDLED_DIR))


class OnnxScorer:
    """A 3-way (entailment / neutral / contradiction) cross-encoder exported by `groundwire train export`."""

    def __init__(
        self,
        bundle: str | Path,
        *,
        batch_size: int | None = None,
        threads: int | None = None,
        model_file: str | None = None,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.bundle = Path(bundle)
        config_path = self.bundle / "config.json"
        if not config_path.is_file():
            raise FileNotFoundError(
                f"{self.bundle} is not a groundwire ONNX bundle (no config.json); "
                "create one with `groundwire train export`"
            )
        self.config: dict[str, Any] = json.loads(config_path.read_text())
        labels = [str(label).lower() for label in self.config["labels"]]
        if _SUPPORT_LABEL not in labels:
            raise ValueError(f"{config_path}: labels {labels} have no {_SUPPORT_LABEL!r}")
        self.support_index = labels.index(_SUPPORT_LABEL)
        self.contradiction_index = labels.index(_CONTRADICTION_LABEL) if _CONTRADICTION_LABEL in labels else None
        self.max_tokens: int | None = int(self.config["max_length"])
        self.model_id = model_id_of(self.bundle, self.config)
        own = _calibration(self.bundle, self.config)
        self.thresholds: tuple[float, float] | None = own.thresholds
        # Calibrated per task type where the bundle has them ({"data2text": [accept_at, reject_at], ...}).
        self.task_thresholds: dict[str, tuple[float, float]] = dict(own.task_thresholds)
        # The threshold of decided verdicts (`[verify] route = "decide"`), where the bundle has one.
        self.decide_at: float | None = own.decide_at
        self.batch_size = batch_size or int(self.config.get("batch_size", 32))
        self.tokenizer = Tokenizer.from_file(str(self.bundle / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._pair_tokenizer = Tokenizer.from_file(str(self.bundle / "tokenizer.json"))
        self._pair_tokenizer.no_padding()
        self._pair_tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        options = ort.SessionOptions()
        # onnxruntime sizes its pool to the whole machine; honour a CPU limit given the usual way (Ray sets it).
        threads = threads or int(os.environ.get("OMP_NUM_THREADS") or 0)
        # One pair per run (batch_size 1) is too small to split across cores: each run gets one thread and
        # several pairs run at once instead (a session's run() is thread-safe), which on 2 cores is ~1.5x faster.
        self.parallel_runs = (threads or os.cpu_count() or 1) if self.batch_size == 1 else 1
        if self.parallel_runs > 1:
            options.intra_op_num_threads = 1
        elif threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(
            str(self.bundle / (model_file or self.config.get("model_file", "model.onnx"))),
            options,
            providers=["CPUExecutionProvider"],
        )
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._executor: ThreadPoolExecutor | None = None
        self.combiner: Combiner | None = own.combiner
        self.canonical_figures = own.canonical_figures
        self.meaning = own.meaning
        # As the second stage of a cascade, per first-stage model id (train/calibrate.py, `--after`).
        self.stage_two: dict[str, Calibration] = {
            str(first): _calibration(self.bundle, block) for first, block in self.config.get("stage_two", {}).items()
        }

    @property
    def calibration(self) -> Calibration:
        """The bundle's thresholds and combiner (train/calibrate.py may swap the combiner out while it fits)."""
        return Calibration(
            thresholds=self.thresholds,
            task_thresholds=self.task_thresholds,
            decide_at=self.decide_at,
            combiner=self.combiner,
            canonical_figures=self.canonical_figures,
            meaning=self.meaning,
        )

    def calibration_after(self, first_model_id: str) -> Calibration | None:
        return self.stage_two.get(first_model_id)

    @classmethod
    def bundled(cls, _: str = "") -> OnnxScorer:
        path = bundled_path()
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"the bundled model is missing from {path}; reinstall groundwire")
        return cls(path)

    @classmethod
    def from_spec(cls, arg: str) -> OnnxScorer:
        return cls(arg)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax over the labels for each pair, shape (n, labels), in input order."""
        n_labels = len(self.config["labels"])
        if not pairs:
            return np.zeros((0, n_labels), dtype=np.float32)
        encodings = self._pair_tokenizer.encode_batch([(p, h) for p, h in pairs])
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        out = np.zeros((len(pairs), n_labels), dtype=np.float32)
        batches = [order[begin : begin + self.batch_size] for begin in range(0, len(pairs), self.batch_size)]

        def run(index: np.ndarray) -> None:
            width = max(len(encodings[i].ids) for i in index)
            feed = {
                name: np.zeros((len(index), width), dtype=np.int64)
                for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            for row, i in enumerate(index):
                enc = encodings[i]
                feed["input_ids"][row, : len(enc.ids)] = enc.ids
                feed["attention_mask"][row, : len(enc.ids)] = 1
                feed["token_type_ids"][row, : len(enc.ids)] = enc.type_ids
            logits = self.session.run(["logits"], {k: v for k, v in feed.items() if k in self._inputs})[0]
            logits = logits - logits.max(axis=-1, keepdims=True)
            probs = np.exp(logits)
            out[index] = probs / probs.sum(axis=-1, keepdims=True)  # batches write disjoint rows

        if self.parallel_runs > 1 and len(batches) > 1:
            list(self._pool().map(run, batches))
        else:
            for index in batches:
                run(index)
        return out

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=self.parallel_runs, thread_name_prefix="groundwire-onnx")
        return self._executor

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        probs = self.probabilities(pairs)
        truncated = np.zeros(len(pairs), dtype=bool)
        if pairs:
            lengths = np.add(self.count_tokens([p for p, _ in pairs]), self.count_tokens([h for _, h in pairs]))
            truncated = lengths + 3 > (self.max_tokens or 0)
        contradiction = probs[:, self.contradiction_index] if self.contradiction_index is not None else None
        return PairScores(
            probs[:, self.support_index].copy(), None if contradiction is None else contradiction.copy(), truncated
        )


def model_id_of(bundle: Path, config: dict[str, Any] | None = None) -> str:
    """The model id a bundle's scorer reports (its config's, else "onnx:<folder>")."""
    config = config if config is not None else json.loads((Path(bundle) / "config.json").read_text())
    return str(config.get("model_id", f"onnx:{bundle}"))


def _calibration(bundle: Path, block: dict[str, Any]) -> Calibration:
    """A calibration block of a bundle's config.json (the config itself, or one of its `stage_two` blocks):
    thresholds (None when it has none), per-task thresholds, the decide threshold (`decide_at`, optional), a
    combiner file."""
    return Calibration(
        thresholds=(float(block["accept_at"]), float(block["reject_at"])) if "accept_at" in block else None,
        task_thresholds={
            str(task): (float(pair[0]), float(pair[1])) for task, pair in block.get("task_thresholds", {}).items()
        },
        decide_at=float(block["decide_at"]) if block.get("decide_at") is not None else None,
        combiner=load_combiner(bundle / block["combiner"]) if block.get("combiner") else None,
        canonical_figures=bool(block["canonical_figures"]) if "canonical_figures" in block else None,
        meaning=bool(block["meaning"]) if "meaning" in block else None,
    )
