"""Detection metrics over answer-level labels (positive class = hallucinated).

Plain numpy, so that `pip install groundwire` needs no scikit-learn or scipy (about 195 MB) for `eval`.
tests/evaluation/test_metrics.py checks every figure against hand-computed values and, where it is installed, scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np


@dataclass(frozen=True, slots=True)
class DetectionMetrics:
    n: int
    positives: int
    balanced_accuracy: float | None
    f1_hallucinated: float
    auroc: float | None
    """Balanced accuracy and AUROC are None when only one class is present (they are undefined then)."""

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Curve:
    """Points of a ROC (x = false-positive rate, y = true-positive rate) or precision-recall curve
    (x = recall, y = precision); `thresholds[i]` is the support score at or below which an answer is flagged."""

    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray


def detection_metrics(
    hallucinated: Sequence[bool], scores: Sequence[float], flagged: Sequence[bool]
) -> DetectionMetrics:
    """`scores` are support scores (high = grounded); `flagged` is the verifier's own decision (not accepted)."""
    y = np.asarray(hallucinated, dtype=bool)
    predicted = np.asarray(flagged, dtype=bool)
    both_classes = bool(y.any() and not y.all())
    return DetectionMetrics(
        n=int(y.size),
        positives=int(y.sum()),
        balanced_accuracy=balanced_accuracy(y, predicted) if both_classes else None,
        f1_hallucinated=f1(y, predicted),
        auroc=auroc(y, -np.asarray(scores, dtype=float)) if both_classes else None,
    )


def balanced_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    """Mean of the recall of each class (both classes must be present)."""
    return float((predicted[labels].mean() + (~predicted[~labels]).mean()) / 2)


def f1(labels: np.ndarray, predicted: np.ndarray) -> float:
    """F1 of the positive class; 0.0 when it is undefined (no positive predicted and none present)."""
    true_pos = int((labels & predicted).sum())
    denominator = int(labels.sum()) + int(predicted.sum())
    return 2 * true_pos / denominator if denominator else 0.0


def auroc(labels: np.ndarray, risk: np.ndarray) -> float:
    """Area under the ROC curve of `risk` (high = positive): the Mann-Whitney U statistic over average ranks,
    so tied scores count one half, as in scikit-learn's roc_auc_score."""
    labels = np.asarray(labels, dtype=bool)
    ranks = _average_ranks(np.asarray(risk, dtype=float))
    positives = int(labels.sum())
    negatives = labels.size - positives
    u = ranks[labels].sum() - positives * (positives + 1) / 2
    return float(u / (positives * negatives))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their mean rank (scipy.stats.rankdata's 'average')."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    new_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(new_group) - 1
    starts = np.flatnonzero(new_group)
    ends = np.r_[starts[1:], ordered.size]
    mean_rank = (starts + ends + 1) / 2  # mean of the 1-based ranks starts+1 .. ends
    ranks = np.empty(values.size, dtype=float)
    ranks[order] = mean_rank[group]
    return ranks


def _flag_counts(labels: Sequence[bool], scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each distinct score t (ascending): hallucinated and faithful answers flagged by 'score <= t'."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    order = np.argsort(s, kind="mergesort")
    s, y = s[order], y[order]
    last_of_tie = np.r_[s[1:] != s[:-1], True]
    return s[last_of_tie], np.cumsum(y)[last_of_tie], np.cumsum(~y)[last_of_tie]


def roc_curve(hallucinated: Sequence[bool], scores: Sequence[float]) -> Curve:
    """The ROC curve of flagging answers whose support score is at or below a threshold; starts at (0, 0)."""
    thresholds, true_pos, false_pos = _flag_counts(hallucinated, scores)
    positives, negatives = max(int(true_pos[-1]), 1), max(int(false_pos[-1]), 1)
    return Curve(np.r_[0.0, false_pos / negatives], np.r_[0.0, true_pos / positives], np.r_[-np.inf, thresholds])


def precision_recall_curve(hallucinated: Sequence[bool], scores: Sequence[float]) -> Curve:
    """Precision and recall of the hallucinated class at each threshold (score at or below it is flagged)."""
    thresholds, true_pos, false_pos = _flag_counts(hallucinated, scores)
    recall = true_pos / max(int(true_pos[-1]), 1)
    precision = true_pos / (true_pos + false_pos)
    return Curve(recall, precision, thresholds)


def auroc_interval(hallucinated: Sequence[bool], scores: Sequence[float], *, rounds: int = 1000,
                   level: float = 0.95, seed: int = 0) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the AUROC (answers resampled with replacement): how far a
    figure on a few dozen hallucinated answers can move by chance alone. None without both classes."""
    y = np.asarray(hallucinated, dtype=bool)
    risk = -np.asarray(scores, dtype=float)
    if y.all() or not y.any():
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(rounds):
        idx = rng.integers(0, len(y), len(y))
        if y[idx].any() and not y[idx].all():
            values.append(auroc(y[idx], risk[idx]))
    low, high = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)


def wilson_interval(hits: float, n: float, *, level: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of a rate of `hits` in `n` (a false-accept rate on 40 hallucinated answers is a
    rate of a few answers: the interval says how far it can be from the rate on answers not seen). None for n = 0."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    rate = hits / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
