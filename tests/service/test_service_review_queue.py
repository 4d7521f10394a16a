"""The review queue that teaches (issue 56 item 3), over HTTP: every escalated answer is queued, the teach order puts
the verdicts that teach the refit most first (tasks with few labels, sources nobody reviewed; never by score), an audit share of decided answers is queued, and every item says
why it is where it is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNKS = [
    {"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase."},
    {"id": "S2", "text": "Support is available by email on weekdays."},
]
OTHER_SOURCE = [{"id": "S1", "text": "The Team plan costs $30 a month. Refunds are issued within 30 days."},
                {"id": "S2", "text": "Support is available by email on weekdays."}]
# Lexical scores, routed by accept_at 0.9 and reject_at 0.1.
NEAR_EDGE = "Refunds are issued quickly within 30 days."  # 0.875, near accept_at
MIDDLE = "Support answers email on weekdays and weekends."  # 0.667
ACCEPTED = "Support is available on weekdays."  # 1.0


@pytest.fixture
def make_client(settings) -> Iterator:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    opened = []

    def make(**changes):
        base = replace(settings, review_threshold=None, check=settings.check.model_copy(
            update={"accept_at": 0.9, "reject_at": 0.1}))
        client = TestClient(create_app(replace(base, **changes)), raise_server_exceptions=False)
        opened.append(client.__enter__())
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


def verify(client, answer: str, chunks=CHUNKS) -> dict:
    response = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": chunks})
    assert response.status_code == 200, response.text
    return response.json()


def queue(client, **params) -> dict:
    response = client.get("/v1/review", headers=ALPHA, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_escalated_answer_reaches_the_queue_whatever_its_score(make_client) -> None:
    client = make_client(review_audit_share=0.0)
    middle = verify(client, MIDDLE)
    assert middle["report"]["route"] == "escalate" and middle["report"]["score"] > 0.5
    assert middle["review"] == {"queued": True, "reasons": ["escalated (score 0.67): the routing asks a person"]}
    accepted = verify(client, ACCEPTED)
    assert accepted["report"]["route"] == "accept" and not accepted["review"]["queued"]
    items = queue(client)["items"]
    assert [(i["request_id"], i["reason"], i["reasons"]) for i in items] == [
        (middle["request_id"], "escalated", ["escalated"])]


def test_limit_bounds_the_items_returned_not_the_requests_looked_at(make_client) -> None:
    client = make_client(review_audit_share=0.0)
    escalated = verify(client, MIDDLE)["request_id"]
    for _ in range(3):
        verify(client, ACCEPTED)
    # Before, the queue looked only at the newest `limit` requests: here three accepted answers.
    body = queue(client, limit=1)
    assert [i["request_id"] for i in body["items"]] == [escalated] and body["total"] == 1


def test_teach_order_does_not_rank_by_score_and_arrival_is_the_newest_first(make_client) -> None:
    client = make_client(review_audit_share=0.0)
    near = verify(client, NEAR_EDGE)["request_id"]
    middle = verify(client, MIDDLE)["request_id"]
    other = verify(client, NEAR_EDGE, chunks=OTHER_SOURCE)["request_id"]
    written = client.post("/v1/feedback", headers=ALPHA, json={"request_id": other, "faithful": True})
    assert written.status_code == 200, written.text
    teach = queue(client)
    assert teach["order"] == "teach"
    # Same task, same unreviewed source: equal teaching, so the newer first, whatever the score (an edge-first order
    # biased the refit: evaluation/review_order.py).
    assert [i["request_id"] for i in teach["items"]] == [middle, near]
    assert [i["position"] for i in teach["items"]] == [1, 2]
    assert teach["items"][0]["teach"] == teach["items"][1]["teach"] == {
        "scarcity": pytest.approx(1 / (1 + 1 / 50), abs=1e-4), "novelty": 1.0,
        "total": pytest.approx(1 + 1 / (1 + 1 / 50), abs=1e-4)}
    assert [i["request_id"] for i in queue(client, order="arrival")["items"]] == [middle, near]
    # The service's default order is a setting (serve --order): a service on the same log, started with arrival.
    arrival_service = make_client(review_order="arrival", review_audit_share=0.0)
    assert [i["request_id"] for i in queue(arrival_service)["items"]] == [middle, near]


def test_a_source_nobody_reviewed_comes_before_one_already_reviewed(make_client) -> None:
    client = make_client(review_audit_share=0.0)
    reviewed = verify(client, MIDDLE)["request_id"]
    written = client.post("/v1/feedback", headers=ALPHA, json={"request_id": reviewed, "faithful": True})
    assert written.status_code == 200, written.text
    seen = verify(client, MIDDLE)["request_id"]
    unseen = verify(client, MIDDLE, chunks=OTHER_SOURCE)["request_id"]
    seen_again = verify(client, MIDDLE)["request_id"]  # newer than `unseen`, but its source has a label
    items = queue(client)["items"]
    assert [i["request_id"] for i in items] == [unseen, seen_again, seen]
    assert [i["teach"]["novelty"] for i in items] == [1.0, 0.0, 0.0]
    assert items[1]["teach"]["scarcity"] == pytest.approx(1 / (1 + 1 / 50), abs=1e-4)  # one label of its task


def test_the_audit_share_queues_decided_answers_by_request_id(make_client) -> None:
    everything = make_client(review_audit_share=1.0)
    accepted = verify(everything, ACCEPTED)
    assert accepted["review"]["reasons"] == ["audit: one of the 100% of accepted answers a person checks"]
    near = verify(everything, NEAR_EDGE)["request_id"]
    body = queue(everything)
    assert body["audit_share"] == 1.0 and body["total"] == 2
    # Audit items lead: they are few at a real share, and an audit nobody reviews measures nothing.
    assert [(i["request_id"], i["reason"]) for i in body["items"]] == [
        (accepted["request_id"], "audit"), (near, "escalated")]
    none = make_client(review_audit_share=0.0)
    assert not verify(none, ACCEPTED)["review"]["queued"]
    assert {i["reason"] for i in queue(none)["items"]} == {"escalated"}


def test_every_item_says_why_and_shows_each_claims_evidence(make_client) -> None:
    client = make_client(review_audit_share=0.0, high_risk_patterns=(r"\bweekends\b",))
    verify(client, MIDDLE)
    verify(client, "The Pro plan costs $12 a month.")  # rejected: not queued at share 0
    verify(client, "The Pro plan costs $10 a month [S7].")  # a fabricated citation: escalated, and a validator fired
    items = queue(client)["items"]
    assert sorted(tuple(i["reasons"]) for i in items) == [("escalated", "high_risk"), ("escalated", "validator")]
    assert all(i["reason"] == "escalated" and i["review"]["queued"] for i in items)
    claim = next(i for i in items if "high_risk" in i["reasons"])["claims"][0]
    assert claim["evidence"] == "Support is available by email on weekdays."
    lacking = [claim["text"][start:end] for start, end in claim["lacking"]]
    assert lacking and all(word in claim["text"] for word in lacking) and "weekends" in " ".join(lacking)


def test_a_bad_order_is_a_422(make_client) -> None:
    response = make_client().get("/v1/review", headers=ALPHA, params={"order": "oldest"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
