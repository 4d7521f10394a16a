"""The JSON shape of the service's answers, pinned: keys in the order they are sent, and the type of each value.

The handlers return pydantic response models (service/models.py); these tests hold the bodies clients see, and
the response body the request log keeps, to what they were when the handlers returned plain dicts.
"""

from __future__ import annotations

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNKS = [
    {"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase.", "score": 0.91},
    {"id": "S2", "text": "Support is available by email on weekdays.", "doc_id": "faq", "page": 2},
]
ANSWER = "The Pro plan costs $10 a month. Refunds are issued within 90 days of purchase."

REVIEW = [("queued", "bool"), ("reasons", "list")]
VERIFY = [("request_id", "str"), ("report", "dict"), ("review", "dict"), ("chunks", "list")]
VERIFY_CHUNK = [("id", "str"), ("text", "str"), ("doc_id", "NoneType"), ("page", "NoneType"), ("type", "str")]
VERIFY_CHUNK_WITH_SOURCE = [("id", "str"), ("text", "str"), ("doc_id", "str"), ("page", "int"), ("type", "str")]
REPAIRED = [("answer", "str"), ("abstained", "bool"), ("surviving_share", "float"), ("actions", "list"),
            ("report", "dict"), ("original_score", "float"), ("summary", "str")]
INGEST = [("doc_set_version", "str"), ("chunks", "list"), ("changed_doc_ids", "list"), ("retired_ids", "list"),
          ("cache_invalidated", "int")]
INGEST_CHUNK = [("id", "str"), ("doc_id", "str"), ("title", "str"), ("page", "int"), ("type", "str"),
                ("text", "str")]
FEEDBACK = [("feedback_id", "str"), ("request_id", "str"), ("verdict", "NoneType"), ("replaces", "NoneType")]
HEALTH = [("status", "str"), ("model_id", "str"), ("model_form", "NoneType"), ("model_loads", "int"), ("release", "str"),
          ("store", "str")]


def shape(value: dict) -> list[tuple[str, str]]:
    return [(key, type(item).__name__) for key, item in value.items()]


def post(client, path: str, body: dict) -> dict:
    response = client.post(path, json=body, headers=ALPHA)
    assert response.status_code == 200, response.text
    return response.json()


def test_verify_sends_and_logs_the_same_shape(client) -> None:
    out = post(client, "/v1/verify", {"answer": ANSWER, "chunks": CHUNKS, "question": "What does Pro cost?"})
    assert shape(out) == VERIFY
    assert shape(out["review"]) == REVIEW
    assert [shape(chunk) for chunk in out["chunks"]] == [VERIFY_CHUNK, VERIFY_CHUNK_WITH_SOURCE]
    assert out["report"]["answer"] == ANSWER
    # The log keeps the body as sent, its report stored once and put back at the end.
    logged = client.get(f"/v1/requests/{out['request_id']}", headers=ALPHA).json()["response"]
    assert [key for key, _ in shape(logged)] == ["request_id", "review", "chunks", "report"]
    assert logged == out


def test_repair_sends_and_logs_the_same_shape(client) -> None:
    out = post(client, "/v1/repair", {"answer": ANSWER, "chunks": CHUNKS})
    assert shape(out) == [*VERIFY, ("repaired", "dict")]
    assert shape(out["repaired"]) == REPAIRED
    assert shape(out["review"]) == REVIEW
    assert [shape(chunk) for chunk in out["chunks"]] == [VERIFY_CHUNK, VERIFY_CHUNK_WITH_SOURCE]
    logged = client.get(f"/v1/requests/{out['request_id']}", headers=ALPHA).json()["response"]
    assert [key for key, _ in shape(logged)] == ["request_id", "review", "chunks", "repaired", "report"]
    assert logged == out


def test_ingest_sends_the_same_shape(client) -> None:
    documents = [{"doc_id": "handbook", "title": "Handbook", "page": 1, "text": "Refunds take 30 days."}]
    out = post(client, "/v1/ingest", {"documents": documents})
    assert shape(out) == INGEST
    assert [shape(chunk) for chunk in out["chunks"]] == [INGEST_CHUNK]
    assert out["changed_doc_ids"] == ["handbook"] and out["retired_ids"] == [] and out["cache_invalidated"] == 0


def test_feedback_sends_the_same_shape(client) -> None:
    request_id = post(client, "/v1/verify", {"answer": ANSWER, "chunks": CHUNKS})["request_id"]
    out = post(client, "/v1/feedback", {"request_id": request_id, "thumbs": "down"})
    assert shape(out) == FEEDBACK
    assert out["request_id"] == request_id


def test_health_sends_the_same_shape(client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200, response.text
    assert shape(response.json()) == HEALTH


def test_the_log_lists_reviews_in_the_same_shape(client) -> None:
    post(client, "/v1/verify", {"answer": ANSWER, "chunks": CHUNKS})
    listed = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert shape(listed[0]["review"]) == REVIEW


def test_the_review_queue_and_eval_dashboard_keep_their_shape(client) -> None:
    post(client, "/v1/verify", {"answer": ANSWER, "chunks": CHUNKS})
    queue = client.get("/v1/review", headers=ALPHA).json()
    assert shape(queue) == [("threshold", "float"), ("patterns", "list"), ("order", "str"), ("audit_share", "float"),
                            ("total", "int"), ("items", "list")]
    assert [key for key, _ in shape(queue["items"][0])] == [
        "request_id", "created_at", "endpoint", "question", "answer", "score", "route", "decision", "review", "feedback",
        "verdict", "claims", "reason", "reasons", "position", "teach"]
    assert [key for key, _ in shape(queue["items"][0]["claims"][0])] == [
        "index", "text", "verdict", "score", "chunk_id", "evidence", "lacking"]
    assert [key for key, _ in shape(queue["items"][0]["teach"])] == ["scarcity", "novelty", "total"]
    dashboard = client.get("/v1/eval", headers=ALPHA).json()
    assert shape(dashboard) == [("metrics", "dict"), ("releases", "list"), ("segments", "list"), ("by_day", "dict"),
                                ("series", "list"), ("failure_examples", "list"), ("history", "list"),
                                ("meta", "dict"), ("labels", "dict")]
    labels = dashboard["labels"]
    assert [key for key, _ in shape(labels)] == ["scope", "counts", "refit"]
    assert [key for key, _ in shape(labels["refit"])] == [
        "status", "command", "targets", "in_force", "thresholds", "combiner_changes", "profile", "refusal", "needed"]
    assert [shape(point) for point in dashboard["series"]] == [[("created_at", "str"), ("score", "float")]]
