"""The Scorer protocol: the only thing a backend implements.

A backend scores (premise, hypothesis) pairs. It knows nothing about claims, chunks,
windows, aggregation or routing: those are written once, in core/windows.py and core/verifier.py. A backend
may also carry a `Calibration` (thresholds and a combiner fitted on its own scores): see `CalibratedScorer`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from groundwire.foundation.types import Thresholds


@dataclass(frozen=True, slots=True)
class PairScores:
    """Scores for a batch of pairs, aligned with the input order.

    support: P(premise supports hypothesis), shape (n,).
    contradiction: P(premise contradicts hypothesis), shape (n,), or None when the backend has no such head.
    """

    support: np.ndarray
    contradiction: np.ndarray | None = None
    truncated: np.ndarray | None = None
    """Pairs the backend had to cut to fit its window (bool, shape (n,)); verify() reports them as not fully scored."""

    def __post_init__(self) -> None:
        for name in ("contradiction", "truncated"):
            other = getattr(self, name)
            if other is not None and other.shape != self.support.shape:
                raise ValueError(f"support and {name} must have the same shape")


@runtime_checkable
class Scorer(Protocol):
    model_id: str
    """A stable name for reports and logs, e.g. "lexical-baseline" or "hf:/path/to/model"."""

    max_tokens: int | None
    """The model's input window in tokens (premise + hypothesis + specials); None means unlimited."""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts of each text alone, without special tokens (used for windowing)."""
        ...

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        """Score every (premise, hypothesis) pair in one batched call."""
        ...


class Combiner(Protocol):
    """Maps claim features to a calibrated support score in [0, 1] (the hybrid verifier); it may weigh
    features differently per task type ("qa", "summary", "data2text", ...)."""

    def predict(self, features: Sequence[Mapping[str, float]], task: str | None = None) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a backend was calibrated to: routing thresholds and a combiner fitted on its own scores."""

    thresholds: Thresholds | None = None
    """Pooled (accept_at, reject_at); None: the verifier's defaults (0.8, 0.2)."""
    task_thresholds: Mapping[str, Thresholds] = field(default_factory=dict)
    """Per calibration key ("qa", "qa/long", "data2text", ...; scoring.combiner.calibration_key)."""
    decide_at: float | None = None
    """The one threshold of decided verdicts (`[verify] route = "decide"`): accept at or above it, reject below,
    pooled over tasks; None: not calibrated, and a decided check splits its accept/reject pair halfway."""
    combiner: Combiner | None = None
    """Maps claim features to the claim score; None: the claim score is the model's support."""
    canonical_figures: bool | None = None
    """How figures were read when the calibration was fitted (Verifier.canonical_figures); None: not recorded."""
    meaning: bool | None = None
    """Whether the meaning layer's features (core.meaning) were read when the calibration was fitted; None: not
    recorded, which a verifier reads as off."""
    reject_needs_finding: frozenset[str] = frozenset()
    """Calibration keys where REJECT needs a deciding check's finding, not the scorer's low support alone (the
    reject guard: core.routing.Router.reject_needs_finding); config.json's `reject_needs_finding`."""


UNCALIBRATED = Calibration()


@runtime_checkable
class CalibratedScorer(Scorer, Protocol):
    """A Scorer that also carries its calibration (the bundled ONNX verifier does)."""

    @property
    def calibration(self) -> Calibration | None: ...


def calibration_of(scorer: Scorer) -> Calibration:
    """The scorer's calibration; a plain backend (count_tokens and score only) is uncalibrated."""
    if isinstance(scorer, CalibratedScorer):
        return scorer.calibration or UNCALIBRATED
    return UNCALIBRATED


@runtime_checkable
class StagedScorer(Protocol):
    """A scorer that may also be calibrated as the second stage of a cascade (issue 19): fitted on the answers
    the first stage escalates, at the error budget the first stage leaves unspent."""

    def calibration_after(self, first_model_id: str) -> Calibration | None:
        """The calibration for answers escalated by `first_model_id`; None: not calibrated after that model."""
        ...
