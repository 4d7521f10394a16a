"""bench/learning_loop.py's weekly reveal: which queue items' labels a simulated week sees, people's or a judge's."""

from __future__ import annotations

from groundwire.evaluation.review_order import Candidate, QueueItem, order_queue
from repo_scripts import load_bench


def _queue() -> list[QueueItem]:
    candidates = [Candidate(id=f"e{i}", arrival=float(i), route="escalate") for i in range(8)]
    candidates += [Candidate(id=f"a{i}", arrival=float(10 + i), route="accept") for i in range(5)]
    candidates += [Candidate(id=f"r{i}", arrival=float(20 + i), route="reject") for i in range(2)]
    return order_queue(candidates, audit_share=1.0)  # every decided answer in the audit share


def test_people_see_the_first_reviews_items_in_queue_order() -> None:
    queue = _queue()
    revealed = load_bench("learning_loop").labelled_now(queue, 4, judge_settles=False)
    assert revealed == queue[:4]
    assert {item.reason for item in revealed} == {"audit"}  # audit items lead the teach order


def test_a_judge_that_settles_escalations_labels_every_one_and_people_the_audit_items_within_their_time() -> None:
    queue = _queue()
    revealed = load_bench("learning_loop").labelled_now(queue, 4, judge_settles=True)
    audits = [item for item in revealed if item.reason == "audit"]
    escalated = [item for item in revealed if item.reason == "escalated"]
    assert audits == [item for item in queue if item.reason == "audit"][:4]
    assert sorted(item.candidate.id for item in escalated) == [f"e{i}" for i in range(8)]  # beyond the 4 reviews
    assert len(revealed) == 12
