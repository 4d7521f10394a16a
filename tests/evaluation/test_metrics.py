"""Detection metrics and the AUROC bootstrap interval the quality bench prints."""

from __future__ import annotations

import random

import numpy as np
import pytest

from groundwire.evaluation.metrics import (
    auroc,
    auroc_interval,
    detection_metrics,
    precision_recall_curve,
    roc_curve,
)


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


# --- numpy metrics against hand-computed values (and scikit-learn where the train extra installs it) ---------


def test_auroc_known_values_with_ties():
    # positives' risks 0.9 and 0.5; negatives' 0.5 and 0.1: pairs (0.9>0.5)=1, (0.9>0.1)=1, (0.5=0.5)=.5, (0.5>0.1)=1
    assert auroc(np.array([True, True, False, False]), np.array([0.9, 0.5, 0.5, 0.1])) == pytest.approx(3.5 / 4)
    assert auroc(np.array([True, False]), np.array([0.0, 1.0])) == 0.0
    assert auroc(np.array([True, False, True]), np.array([2.0, 1.0, 3.0])) == 1.0


def test_detection_metrics_known_values():
    # hallucinated: a, b; faithful: c, d, e. Flagged: a, c. Recall(halluc.)=1/2, specificity=2/3.
    m = detection_metrics([True, True, False, False, False], [0.1, 0.8, 0.2, 0.9, 0.7],
                          [True, False, True, False, False])
    assert m.n == 5 and m.positives == 2
    assert m.balanced_accuracy == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert m.f1_hallucinated == pytest.approx(2 * 1 / (2 + 2))  # 2TP / (positives + predicted)
    # risk = -score: a (-0.1) beats c,d,e; b (-0.8) beats d (-0.9) only -> (3 + 1) / 6
    assert m.auroc == pytest.approx(4 / 6)
    one_class = detection_metrics([False, False], [0.2, 0.3], [False, True])
    assert one_class.auroc is None and one_class.balanced_accuracy is None and one_class.f1_hallucinated == 0.0


def test_curves_known_values():
    labels, scores = [True, False, True, False], [0.1, 0.2, 0.2, 0.9]
    roc = roc_curve(labels, scores)
    assert roc.x.tolist() == [0.0, 0.0, 0.5, 1.0] and roc.y.tolist() == [0.0, 0.5, 1.0, 1.0]
    assert roc.thresholds[1:].tolist() == [0.1, 0.2, 0.9]
    pr = precision_recall_curve(labels, scores)
    assert pr.x.tolist() == [0.5, 1.0, 1.0]
    assert pr.y.tolist() == pytest.approx([1.0, 2 / 3, 0.5])
    area = float(np.sum(np.diff(roc.x) * (roc.y[1:] + roc.y[:-1]) / 2))
    assert area == pytest.approx(auroc(np.array(labels), -np.array(scores)))


def test_metrics_equal_scikit_learn_on_random_data():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    for _ in range(20):
        labels = rng.random(60) < 0.3
        scores = np.round(rng.random(60), 1)  # rounding makes ties
        flagged = scores < 0.5
        m = detection_metrics(labels.tolist(), scores.tolist(), flagged.tolist())
        assert m.auroc == pytest.approx(sklearn_metrics.roc_auc_score(labels, -scores))
        assert m.balanced_accuracy == pytest.approx(sklearn_metrics.balanced_accuracy_score(labels, flagged))
        assert m.f1_hallucinated == pytest.approx(sklearn_metrics.f1_score(labels, flagged, zero_division=0.0))
        fpr, tpr, _ = sklearn_metrics.roc_curve(labels, -scores, drop_intermediate=False)
        ours = roc_curve(labels.tolist(), scores.tolist())
        assert np.allclose(ours.x, fpr) and np.allclose(ours.y, tpr)
