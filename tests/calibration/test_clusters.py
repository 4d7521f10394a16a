"""Labels of one source document count once toward the labels a fit needs (calibration/clusters.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from groundwire.calibration import adapt
from groundwire.calibration.clusters import class_sources
from groundwire.calibration.combine import ClaimRow
from groundwire.foundation.errors import InputError
from groundwire.scoring.base import Calibration

SHIPPED = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})


def _rows(n: int, per_source: int, *, seed: int = 0) -> list[ClaimRow]:
    """Half hallucinated answers (support near 0.3), half faithful (near 0.75), `per_source` answers a document."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(0.3 if hallucinated else 0.75, 0.1), 0.01, 0.99))
        rows.append(ClaimRow("synthetic", f"a{i}", "qa", f"doc{i // per_source}", hallucinated, support, 0, (0, 10),
                             None, {"support": support, "n_claims": 1.0}))
    return rows


def _adapt(rows: list[ClaimRow]) -> adapt.Adapted:
    return adapt.adapt_rows(rows, SHIPPED, recipe="thresholds", targets=adapt.Targets(), c=adapt.PRIOR_C, folds=5,
                            base_model="m", calibration=Calibration(), auroc_rounds=0)


def test_a_class_counts_the_documents_its_labels_come_from() -> None:
    assert class_sources(_rows(60, 1)) == (30, 30)
    assert class_sources(_rows(60, 10)) == (6, 6)  # each document holds both classes
    rows = _rows(4, 1)
    assert class_sources([replace(rows[0], claim_index=-1), *rows[1:]]) == (1, 2)  # no checkable claim: not counted


def test_adapt_waits_for_labels_from_enough_documents_and_says_why() -> None:
    # 60 labels of 6 documents: 30 of each class as answers, 6 as documents.
    with pytest.raises(InputError, match="count once") as refused:
        _adapt(_rows(60, 10, seed=1))
    assert refused.value.code.value == "too_few_labels"
    assert "6 and 6" in str(refused.value) and "30 and 30 labelled answers" in str(refused.value)
    fitted = _adapt(_rows(60, 1, seed=1))  # the same labels, each from a document of its own
    assert fitted.sides.both and fitted.document["sides"]["accept"]["labels"] == 30  # type: ignore[index]
    # A judge's label still counts as its weight, below its documents' count.
    judged = [replace(r, weight=0.5) for r in _rows(60, 1, seed=1)]
    with pytest.raises(InputError, match="15 and 15"):
        _adapt(judged)


def test_a_routing_that_misses_the_target_is_replaced_without_waiting_for_documents() -> None:
    """The documents rule holds a lax fit back; it must not hold back a safer one. A refit on labels from six
    documents is refused against a safe routing, and put in force against one that accepts most hallucinated
    answers (it accepts fewer)."""
    from groundwire.calibration import guard

    rows = _rows(60, 10, seed=2)
    safe = guard.guarded_refit(rows, SHIPPED, SHIPPED, recipe="thresholds", targets=adapt.Targets(), base_model="m",
                               calibration=Calibration())
    assert not safe.replaces and "too_few_labels" in safe.reason and safe.labels["counted_per_document"] is True
    lax = adapt.Fitted(adapt.IDENTITY, (0.2, 0.05), {})
    replaced = guard.guarded_refit(rows, lax, SHIPPED, recipe="thresholds", targets=adapt.Targets(),
                                   base_model="m", calibration=Calibration())
    assert replaced.labels["counted_per_document"] is False
    assert replaced.replaces, replaced.reason
    assert replaced.decision is not None and "profile in force accepts" in replaced.reason
    assert replaced.decision.candidate["false_accept"].value < replaced.decision.in_force["false_accept"].value  # type: ignore[operator]
