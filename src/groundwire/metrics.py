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
