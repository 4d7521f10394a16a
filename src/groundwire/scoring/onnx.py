"""ONNX backend: groundwire's bundled int8 verifier ("bundled") or a user's own export ("onnx:<dir>").

Runs on onnxruntime + tokenizers only: no torch, no transformers, no network. Pairs are sorted by length
and scored in padded batches with attention masks, so padding is masked out. Dynamic int8 quantizes
activations with one scale per tensor, so in a batch the other pairs can move a score (by up to 0.13 on
RAGTruth windows): an int8 bundle therefore says "batch_size": 1 in its config.json, which keeps every
score independent of the rest of the call, agrees better with fp32 (v1: max error 0.10 instead of 0.16 on
the agreement pairs) and costs about 15% of throughput on 2 cores, won back by running several one-pair runs
at once, one thread each. An fp32 export may batch freely.

A bundle may hold its model in more than one form (config.json "forms": int8, and fp32 and blockwise for CPUs
without VNNI); scoring/forms.py picks the one this CPU runs, "bundled:<form>" or GROUNDWIRE_MODEL_FORM pins it,
and `form` / `form_reason` say which and why (`groundwire doctor` prints them).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Encoding

from groundwire.scoring.base import Calibration, Combiner, PairScores
from groundwire.scoring.combiner import load_combiner
from groundwire.scoring.form_trials import FormTrials
from groundwire.scoring.forms import (
    FORM_NAMES,
    TRIAL_PAIRS,
    ModelForm,
    bundle_forms,
    choose_form,
    cpu_features,
    usable_cores,
)

BUNDLED_DIR = "models/verifier"
_log = logging.getLogger(__name__)
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
        form: str = "auto",
    ) -> None:
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
        self.tokenizer = Tokenizer.from_file(str(self.bundle / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._pair_tokenizer = Tokenizer.from_file(str(self.bundle / "tokenizer.json"))
        self._pair_tokenizer.no_padding()
        self._pair_tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        # onnxruntime sizes its pool to the whole machine; honour a CPU limit given the usual way (Ray sets it).
        self._threads = threads or int(os.environ.get("OMP_NUM_THREADS") or 0)
        self._executor: ThreadPoolExecutor | None = None
        self._timed: dict[str, InferenceSession] = {}  # sessions the form trial loaded, kept until the choice
        forms = bundle_forms(self.config)
        if model_file is not None:  # one file asked for by name (benches, the export's agreement check)
            forms = {"given": ModelForm("given", model_file, next(iter(forms.values())).batch_size)}
        self._wanted_batch_size = batch_size
        # GROUNDWIRE_MODEL_FORM pins the form of every bundle that has it (a cascade's other bundle may not); a
        # form asked for by name (`bundled:fp32`) must exist.
        preferred = os.environ.get("GROUNDWIRE_MODEL_FORM", "auto")
        if form == "auto" and (preferred not in FORM_NAMES or preferred in forms):
            form = preferred
        cpu = cpu_features()
        runtime = _onnxruntime_version()
        trials = FormTrials.for_bundle(
            self.bundle,
            [f.model_file for f in forms.values()],
            cpu_model=cpu.model,
            threads=self._threads or usable_cores(),
            batch_size=batch_size,
            onnxruntime_version=runtime,
        )
        chosen, self.form_reason = choose_form(forms, form, cpu, self._time_form, trials, onnxruntime_version=runtime)
        self._load(chosen)
        self._timed.clear()
        _log.info("%s runs its %s form (%s)", self.model_id, self.form, self.form_reason)
        self.combiner: Combiner | None = own.combiner
        self.canonical_figures = own.canonical_figures
        self.meaning = own.meaning
        self.reject_needs_finding = own.reject_needs_finding
        # As the second stage of a cascade, per first-stage model id (train/calibrate.py, `--after`).
        self.stage_two: dict[str, Calibration] = {
            str(first): _calibration(self.bundle, block) for first, block in self.config.get("stage_two", {}).items()
        }

    def _load(self, form: ModelForm) -> None:
        """Make `form` the one this scorer runs."""
        import onnxruntime as ort

        self.form = form.name
        self.batch_size = self._wanted_batch_size or form.batch_size
        options = ort.SessionOptions()
        for key, value in form.session_config.items():
            options.add_session_config_entry(key, value)
        # One pair per run (batch_size 1) is too small to split across cores: each run gets one thread and
        # several pairs run at once instead (a session's run() is thread-safe), which on 2 cores is ~1.5x faster.
        self.parallel_runs = (self._threads or usable_cores()) if self.batch_size == 1 else 1
        if self.parallel_runs > 1:
            options.intra_op_num_threads = 1
        elif self._threads:
            options.intra_op_num_threads = self._threads
        self.session = self._timed.get(form.name) or ort.InferenceSession(
            str(self.bundle / form.model_file), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self.session.get_inputs()}

    def _time_form(self, form: ModelForm) -> float:
        """Seconds `form` takes on the trial pairs."""
        self._load(form)
        self._timed[form.name] = self.session
        return self.seconds_for(TRIAL_PAIRS)

    def seconds_for(self, pairs: Sequence[tuple[str, str]]) -> float:
        """The best of three timed runs of scoring `pairs`, after one warm-up run of the first."""
        self.probabilities(pairs[:1])
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            self.probabilities(pairs)
            best = min(best, time.perf_counter() - started)
        return best

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
            reject_needs_finding=self.reject_needs_finding,
        )

    def calibration_after(self, first_model_id: str) -> Calibration | None:
        return self.stage_two.get(first_model_id)

    @classmethod
    def bundled(cls, form: str = "") -> OnnxScorer:
        """The bundled model; "bundled:int8", "bundled:fp32" or "bundled:blockwise" pins its form (else chosen for
        this CPU)."""
        path = bundled_path()
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"the bundled model is missing from {path}; reinstall groundwire")
        return cls(path, form=form or "auto")

    @classmethod
    def from_spec(cls, arg: str) -> OnnxScorer:
        return cls(arg)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def _encode(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[Encoding], np.ndarray]:
        """Each pair's model input, and whether it was truncated. Each distinct text is tokenised once, not once
        per pair: a window meets every claim, so a 5 x 5 check tokenises 10 texts instead of 25 pairs. The pair is
        then truncated and framed by the tokenizer's own rules (`post_process`), so the ids are those of
        encoding the pair whole."""
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        alone = dict(zip(texts, self.tokenizer.encode_batch(texts, add_special_tokens=False), strict=True))
        frame = self._pair_tokenizer.post_process
        encodings = [frame(alone[premise], alone[hypothesis]) for premise, hypothesis in pairs]
        lengths = np.array([len(alone[premise].ids) + len(alone[hypothesis].ids) for premise, hypothesis in pairs])
        return encodings, lengths + 3 > (self.max_tokens or 0)

    def run_size(self, pairs: Sequence[tuple[str, str]]) -> tuple[int, int]:
        """(pairs, tokens) the model runs to score `pairs`: each distinct pair once, at its framed and truncated
        length (for benches and `groundwire doctor`: counts that do not depend on the CPU)."""
        distinct = list(dict.fromkeys(pairs))
        return len(distinct), sum(len(encoding.ids) for encoding in self._encode(distinct)[0])

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax over the labels for each pair, shape (n, labels), in input order."""
        return self._scored(pairs)[0]

    def _scored(self, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities and truncation flags per pair. A pair met twice in a call (a chunk retrieved twice, a
        sentence the answer repeats) is run once: one-pair runs give it the same score either way."""
        distinct = list(dict.fromkeys(pairs))
        where = np.array(_positions(distinct, pairs), dtype=np.int64)
        encodings, truncated = self._encode(distinct)
        return self._probabilities(encodings)[where], truncated[where]

    def _probabilities(self, encodings: Sequence[Encoding]) -> np.ndarray:
        n_labels = len(self.config["labels"])
        if not encodings:
            return np.zeros((0, n_labels), dtype=np.float32)
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        out = np.zeros((len(encodings), n_labels), dtype=np.float32)
        batches = [order[begin : begin + self.batch_size] for begin in range(0, len(encodings), self.batch_size)]

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
        probs, truncated = self._scored(pairs)
        contradiction = probs[:, self.contradiction_index] if self.contradiction_index is not None else None
        return PairScores(
            probs[:, self.support_index].copy(), None if contradiction is None else contradiction.copy(), truncated
        )


def _positions(distinct: Sequence[tuple[str, str]], pairs: Sequence[tuple[str, str]]) -> list[int]:
    """Where each of `pairs` sits in `distinct` (its pairs, each once)."""
    index = {pair: position for position, pair in enumerate(distinct)}
    return [index[pair] for pair in pairs]


def _onnxruntime_version() -> str:
    import onnxruntime  # heavy: loaded with the scorer, not with the module

    return str(onnxruntime.__version__)


def model_id_of(bundle: Path, config: dict[str, Any] | None = None) -> str:
    """The model id a bundle's scorer reports (its config's, else "onnx:<folder>")."""
    config = config if config is not None else json.loads((Path(bundle) / "config.json").read_text())
    return str(config.get("model_id", f"onnx:{bundle}"))


def _calibration(bundle: Path, block: dict[str, Any]) -> Calibration:
    """A calibration block of a bundle's config.json (the config itself, or one of its `stage_two` blocks):
    thresholds (None when it has none), per-task thresholds, the decide threshold (`decide_at`, optional), a
    combiner file, and the keys where REJECT needs a deciding finding (`reject_needs_finding`, optional)."""
    return Calibration(
        thresholds=(float(block["accept_at"]), float(block["reject_at"])) if "accept_at" in block else None,
        task_thresholds={
            str(task): (float(pair[0]), float(pair[1])) for task, pair in block.get("task_thresholds", {}).items()
        },
        decide_at=float(block["decide_at"]) if block.get("decide_at") is not None else None,
        combiner=load_combiner(bundle / block["combiner"]) if block.get("combiner") else None,
        canonical_figures=bool(block["canonical_figures"]) if "canonical_figures" in block else None,
        meaning=bool(block["meaning"]) if "meaning" in block else None,
        reject_needs_finding=frozenset(str(key) for key in block.get("reject_needs_finding", ())),
    )
