"""The review queue's membership and order on plain records (evaluation/review_order.py): the rule its docstring
states, number for number."""

from __future__ import annotations

import pytest

from groundwire.evaluation.review_order import (
    LABELS_HALF,
    Candidate,
    Labelled,
    in_audit,
    order_queue,
    teaching,
)
from groundwire.foundation.errors import InputError


def escalated(name: str, *, arrival: float = 0.0, task: str = "qa", source: str = "doc:a") -> Candidate:
    return Candidate(id=name, arrival=arrival, route="escalate", task=task, source=source)


SEEN = Labelled(by_task={"qa": 10}, sources=frozenset({"doc:a"}))


def test_every_escalated_answer_is_queued_whatever_its_score() -> None:
    # Before issue 56 the queue held scores below 0.5 only: escalations at 0.62-0.78 never reached a reviewer. Now
    # membership is the route alone (a candidate carries no score).
    items = order_queue([escalated("e"), escalated("f", arrival=1)], audit_share=0.0)
    assert [(i.candidate.id, i.reason) for i in items] == [("f", "escalated"), ("e", "escalated")]
    decided = [Candidate(id="a", arrival=0.0, route="accept"), Candidate(id="r", arrival=0.0, route="reject")]
    assert order_queue(decided, audit_share=0.0) == []


def test_teach_order_does_not_rank_by_score_and_arrival_is_the_newest_first() -> None:
    # Same task, same (reviewed) source: nothing teaches more, so the newer answer comes first in both orders. The
    # score is not a component: edge-first ranking biased the refit (bench/learning_table.py, module docstring).
    items = [escalated("middle", arrival=3), escalated("near_accept", arrival=1), escalated("near_reject", arrival=2)]
    teach = order_queue(items, labelled=SEEN, audit_share=0.0)
    assert [i.candidate.id for i in teach] == ["middle", "near_reject", "near_accept"]
    assert {i.teaching.total for i in teach} == {teaching(items[0], SEEN).total}
    arrival = order_queue(items, labelled=SEEN, order="arrival", audit_share=0.0)
    assert [i.candidate.id for i in arrival] == ["middle", "near_reject", "near_accept"]
    new_source = order_queue([*items, escalated("new", arrival=0, source="doc:new")], labelled=SEEN, audit_share=0.0)
    assert new_source[0].candidate.id == "new"  # oldest, but from a source nobody reviewed: teach puts it first


def test_a_task_with_few_labels_and_a_source_nobody_reviewed_rank_higher() -> None:
    labelled = Labelled(by_task={"qa": 150, "summary": 0}, sources=frozenset({"doc:a"}))
    same = dict(arrival=1.0)
    items = order_queue([escalated("qa_seen", **same), escalated("summary_seen", task="summary", **same),
                         escalated("qa_new", source="doc:new", **same)], labelled=labelled, audit_share=0.0)
    # qa_new: 0.25 + 1; summary_seen: 1 + 0; qa_seen: 0.25 + 0.
    assert [(i.candidate.id, round(i.teaching.total, 9)) for i in items] == [
        ("qa_new", 1.25), ("summary_seen", 1.0), ("qa_seen", 0.25)]
    assert teaching(escalated("x"), Labelled(by_task={"qa": LABELS_HALF})).scarcity == 0.5
    assert teaching(escalated("x", source=None), Labelled()).novelty == 0.0  # unknown source: no credit


def test_ties_go_to_the_newer_answer_then_the_smaller_id() -> None:
    items = order_queue([escalated("b", arrival=1), escalated("a", arrival=1),
                         escalated("c", arrival=2)], labelled=SEEN, audit_share=0.0)
    assert [i.candidate.id for i in items] == ["c", "a", "b"]


def test_the_audit_share_is_stable_by_request_id_and_near_its_configured_share() -> None:
    ids = [f"req-{n}" for n in range(20_000)]
    decided = [Candidate(id=i, arrival=float(n), route="accept" if n % 2 else "reject")
               for n, i in enumerate(ids)]
    audited = order_queue(decided, audit_share=0.05)
    assert 0.045 <= len(audited) / len(ids) <= 0.055
    assert {i.reason for i in audited} == {"audit"}
    assert [i.candidate.id for i in order_queue(decided, audit_share=0.05)] == [i.candidate.id for i in audited]
    assert {i.candidate.route for i in audited} == {"accept", "reject"}
    # A larger share keeps every id a smaller one picked: raising it only adds audit items.
    assert {i.candidate.id for i in audited} <= {i for i in ids if in_audit(i, 0.2)}
    assert order_queue(decided[:50], audit_share=0.0) == []
    assert len(order_queue(decided[:50], audit_share=1.0)) == 50
    # Escalated answers are never "audit": they are queued anyway.
    assert order_queue([escalated(ids[0])], audit_share=1.0)[0].reasons == ("escalated",)


def test_audit_items_lead_the_teach_order_and_every_item_says_why() -> None:
    audit = Candidate(id="audit-me", arrival=0.0, route="accept")
    risky = Candidate(id="risky", arrival=5.0, route="accept", flags=("high_risk",))
    failed = Candidate(id="failed", arrival=4.0, route=None, flags=("failure",))
    both = Candidate(id="both", arrival=3.0, route="escalate", task="qa", source="doc:a", flags=("validator",))
    items = order_queue([escalated("edge", arrival=1), risky, failed, both, audit], audit_share=1.0)
    # The two audit items first (the newer of equal totals first), then by teaching: "failed" has no source, so no
    # novelty, and is last.
    assert [i.candidate.id for i in items] == ["risky", "audit-me", "both", "edge", "failed"]
    assert [i.reason for i in items] == ["audit", "audit", "escalated", "escalated", "failure"]
    reasons = {i.candidate.id: i.reasons for i in items}
    assert reasons == {"audit-me": ("audit",), "risky": ("audit", "high_risk"), "failed": ("failure",),
                       "both": ("escalated", "validator"), "edge": ("escalated",)}
    assert all(item.reasons for item in items)


@pytest.mark.parametrize("kwargs", [{"audit_share": 1.5}, {"audit_share": -0.1}, {"order": "oldest"}])
def test_bad_settings_are_refused_clearly(kwargs) -> None:
    with pytest.raises(InputError):
        order_queue([escalated("e")], **kwargs)
    with pytest.raises(InputError, match="unknown review reasons"):
        order_queue([Candidate(id="x", arrival=0.0, route=None, flags=("nope",))])  # type: ignore[arg-type]
