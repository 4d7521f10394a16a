"""Detection metrics and the AUROC bootstrap interval the quality bench prints."""

from __future__ import annotations

import random

from groundwire.evaluation.metrics import auroc_interval, detection_metrics


def _scores(n: int, separation: float, seed: int = 0) -> tuple[list[bool], list[float]]:
    rng = random.Random(seed)
    labels = [i % 4 == 0 for i in range(n)]
    return labels, [rng.gauss(0.5 - separation if bad else 0.5, 0.2) for bad in labels]


def test_interval_brackets_the_auroc_and_narrows_with_more_answers():
    labels, scores = _scores(40, 0.15)
    auroc = detection_metrics(labels, scores, [s < 0.4 for s in scores]).auroc
    small = auroc_interval(labels, scores)
    assert small is not None and small[0] <= auroc <= small[1]
    big_labels, big_scores = _scores(2000, 0.15)
    big = auroc_interval(big_labels, big_scores)
    assert big is not None and (big[1] - big[0]) < (small[1] - small[0]) / 3


def test_interval_needs_both_classes():
    assert auroc_interval([True, True], [0.1, 0.2]) is None
