"""The Scorer protocol: the only thing a backend implements.

A backend scores (premise, hypothesis) pairs. It knows nothing about claims, chunks,
windows, aggregation or routing: those are written once, in windows.py and verify.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


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
