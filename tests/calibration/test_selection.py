"""Labels weighted by how likely the review queue was to show them (calibration/selection.py): the weights, their
strata in a request log, and what they change in a refit's guard."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from groundwire.calibration import adapt, guard
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.selection import selection_weights, weighted_by_selection
from groundwire.data.labelled import period_of, stratum_of

TARGETS = adapt.Targets()
IN_FORCE = adapt.Fitted(adapt.IDENTITY, (0.9, 0.05), {})


def test_a_label_weighs_its_stratum_s_answers_over_its_labels_scaled_to_the_effective_size() -> None:
    strata = {"a1": ("w1", "accept"), "e1": ("w1", "escalate"), "e2": ("w1", "escalate"), "e3": ("w2", "escalate")}
    traffic = {("w1", "accept"): 20, ("w1", "escalate"): 4, ("w2", "escalate"): 1}
    weights = selection_weights(strata, traffic)
    raw = {"a1": 20.0, "e1": 2.0, "e2": 2.0, "e3": 1.0}
    assert weights["a1"] / weights["e1"] == pytest.approx(10.0) and weights["e1"] / weights["e3"] == pytest.approx(2.0)
    kish = sum(raw.values()) ** 2 / sum(w * w for w in raw.values())
    assert sum(weights.values()) == pytest.approx(kish)  # what a fit's confidence margin rests on
    assert sum(weights.values()) < len(weights)
    # Every stratum labelled at the same rate: every label counts once.
    same = selection_weights({"x": ("w1", "accept"), "y": ("w1", "escalate")},
                             {("w1", "accept"): 3, ("w1", "escalate"): 3})
    assert same == pytest.approx({"x": 1.0, "y": 1.0})
    # A stratum the traffic count missed (or undercounts) counts its labels once each.
    missed = selection_weights({"x": ("w1", "accept"), "y": ("w9", "reject")}, {("w1", "accept"): 1})
    assert missed == pytest.approx({"x": 1.0, "y": 1.0})
    assert selection_weights({}, traffic) == {}


def test_the_period_is_the_utc_iso_week() -> None:
    assert period_of(datetime(2026, 12, 7, 10, tzinfo=UTC)) == "2026-W50"
    # Sunday 23:30 in New York is Monday in UTC: the next week.
    assert period_of(datetime(2026, 12, 13, 23, 30, tzinfo=timezone(timedelta(hours=-5)))) == "2026-W51"
    assert period_of(datetime(2027, 1, 1)) == "2026-W53"  # naive: read as UTC (SQLite hands them back so)
    assert period_of(None) == "unknown"
    assert stratum_of(None, None) == ("unknown", "none")


def _answer(key: str, hallucinated: bool, support: float) -> ClaimRow:
    return ClaimRow("log", key, "qa", f"doc-{key}", hallucinated, support, 0, (0, 10), None,
                    {"support": support, "n_claims": 1.0})


def _queue_sample() -> tuple[list[ClaimRow], dict[str, tuple[str, str]], dict[tuple[str, str], int]]:
    """A week of 200 answers: 100 accepted by the routing in force (20 of them hallucinated) and 100 escalated (50
    hallucinated). Reviewers labelled every escalation and audited 10 accepted answers (2 hallucinated: the
    accepted ones in proportion). The traffic's false accept is 20 / 70."""
    rng = np.random.default_rng(0)
    rows, strata = [], {}
    for i in range(10):
        rows.append(_answer(f"a{i}", i < 2, float(rng.uniform(0.92, 0.99))))
        strata[f"a{i}"] = ("w1", "accept")
    for i in range(100):
        rows.append(_answer(f"e{i}", i % 2 == 0, float(rng.uniform(0.3, 0.8))))
        strata[f"e{i}"] = ("w1", "escalate")
    return rows, strata, {("w1", "accept"): 100, ("w1", "escalate"): 100}


def test_weighted_labels_show_the_traffic_s_false_accepts_that_the_queue_hides() -> None:
    rows, strata, traffic = _queue_sample()
    unweighted = guard.guard(guard.lodo.route_by_key(IN_FORCE, rows), IN_FORCE, rows, targets=TARGETS)
    assert unweighted.in_force["false_accept"].value == pytest.approx(2 / 52)
    assert unweighted.replace  # the labels as they come: 4% false accept, well within the target

    weighted_rows = weighted_by_selection(rows, selection_weights(strata, traffic))
    held, weights, whose = guard.guard_rows(weighted_rows, TARGETS)
    assert whose == "human" and weights is not None
    decision = guard.guard(guard.lodo.route_by_key(IN_FORCE, held), IN_FORCE, held, targets=TARGETS, weights=weights)
    assert decision.weighted
    assert decision.in_force["false_accept"].value == pytest.approx(20 / 70)
    assert not decision.replace and "false-accept target" in decision.reason
    assert decision.in_force["false_accept"].n < 52  # Kish's effective size, not the count


def test_the_log_s_strata_weigh_what_logged_claim_rows_and_adapt_from_log_read(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    from groundwire.calibration.learn import logged_claim_rows
    from groundwire.calibration.selection import queue_weights
    from groundwire.data.labelled import label_strata, labels_in_force, log_traffic, read_labelled
    from groundwire.data.store import RequestRecord, Store

    store = Store(f"sqlite:///{tmp_path / 'log.db'}")
    monday = datetime(2026, 11, 30, 9, tzinfo=UTC)
    try:
        ids = {}
        for i in range(12):  # week 1: 8 escalated, 4 accepted; week 2: 2 escalated
            route, when = ("escalate", monday) if i < 8 else ("accept", monday + timedelta(days=1))
            ids[i] = store.log_request(RequestRecord(scope="ops", response=f"answer {i}", context="c", route=route,
                                                     created_at=when + timedelta(minutes=i)))
        for i in range(2):
            ids[12 + i] = store.log_request(RequestRecord(scope="ops", response=f"late {i}", context="c",
                                                          route="escalate", created_at=monday + timedelta(days=7)))
        store.log_request(RequestRecord(scope="other", response="x", context="c", route="accept", created_at=monday))
        for i in (0, 1, 8, 12, 13):  # 2 of 8 escalations, 1 of 4 accepted, both of week 2's escalations
            store.add_review(ids[i], scope="ops", faithful=i % 2 == 0)
        strata = label_strata(r for r, _ in labels_in_force(store, scope="ops"))
        traffic = log_traffic(store, scope="ops")
        assert traffic == {("2026-W49", "escalate"): 8, ("2026-W49", "accept"): 4, ("2026-W50", "escalate"): 2}
        assert strata[ids[8]] == ("2026-W49", "accept") and strata[ids[12]] == ("2026-W50", "escalate")
        assert read_labelled(store, scope="ops").strata == strata
        weights = queue_weights(store, scope="ops", strata=strata)
        assert weights[ids[0]] / weights[ids[12]] == pytest.approx(4.0)
        assert weights[ids[8]] / weights[ids[12]] == pytest.approx(4.0)
        assert logged_claim_rows(store, scope="ops", model_id="m").selection == pytest.approx(weights)
    finally:
        store.close()
