"""Detection metrics over answer-level labels (positive class = hallucinated)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass


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


def detection_metrics(
    hallucinated: Sequence[bool], scores: Sequence[float], flagged: Sequence[bool]
) -> DetectionMetrics:
    """`scores` are support scores (high = grounded); `flagged` is the verifier's own decision (not accepted)."""
    from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

    y = [int(h) for h in hallucinated]
    predicted = [int(f) for f in flagged]
    both_classes = len(set(y)) == 2
    return DetectionMetrics(
        n=len(y),
        positives=sum(y),
        balanced_accuracy=float(balanced_accuracy_score(y, predicted)) if both_classes else None,
        f1_hallucinated=float(f1_score(y, predicted, zero_division=0.0)),
        auroc=float(roc_auc_score(y, [-s for s in scores])) if both_classes else None,
    )


def auroc_interval(hallucinated: Sequence[bool], scores: Sequence[float], *, rounds: int = 1000,
                   level: float = 0.95, seed: int = 0) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the AUROC (answers resampled with replacement): how far a
    figure on a few dozen hallucinated answers can move by chance alone. None without both classes."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    y = np.asarray(hallucinated, dtype=int)
    s = -np.asarray(scores, dtype=float)
    if len(set(y.tolist())) < 2:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(rounds):
        idx = rng.integers(0, len(y), len(y))
        if y[idx].min() != y[idx].max():
            values.append(roc_auc_score(y[idx], s[idx]))
    low, high = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)
