"""Checks that fail after their input was accepted reach the review queue: a time budget spent, an LLM endpoint that
failed, an error of the service's own. Their question, answer, task and chunks are logged with the error (redacted as
every row is), the queue lists them with it, a verdict labels them, and `groundwire adapt --from-log` reads them. A
request refused for its input is logged without it, and takes no verdict."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNKS = [{"id": "S1", "text": "The pump runs at 40 litres per minute."},
          {"id": "S2", "text": "It is serviced every March.", "doc_id": "manual", "page": 3}]
ENDLESS = "Endless work: the pump runs at 90 litres per minute."
WAIT_S = 30.0


@pytest.fixture
def endless(monkeypatch: pytest.MonkeyPatch) -> None:
    """actions.verify for an answer that starts "Endless work": a check with a boundary (core.cancel.checkpoint)
    every 10 ms that never ends by itself, as a long check has; other answers are verified as ever."""
    from groundwire.core.cancel import checkpoint
    from groundwire.service import actions

    real = actions.verify

    def verify(runtime: Any, body: Any, sent: Any, *, scope: str) -> Any:
        if not body.answer.startswith("Endless work"):
            return real(runtime, body, sent, scope=scope)
        for _ in range(int(WAIT_S * 100)):  # bounded, so that a failing test does not hang
            checkpoint()
            threading.Event().wait(0.01)
        raise AssertionError("the endless check was never stopped")

    monkeypatch.setattr(actions, "verify", verify)


@pytest.fixture
def budgeted(settings, endless) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, time_budget_s=1.0)), raise_server_exceptions=False) as client:
        yield client


def _queued(client: Any) -> list[dict[str, Any]]:
    return [item for item in client.get("/v1/review", headers=ALPHA).json()["items"] if item.get("error")]


def test_a_check_past_its_time_budget_reaches_the_review_queue_and_takes_a_verdict(budgeted, settings) -> None:
    from groundwire.data.labelled import read_reviewed
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import Store

    question = "How fast does the pump run? (asked with key-alpha)"  # a key in the input is not stored
    stopped = budgeted.post("/v1/verify", headers=ALPHA, json={
        "question": question, "answer": ENDLESS, "task": "qa", "chunks": CHUNKS})
    assert stopped.status_code == 504 and stopped.json()["error"]["code"] == "time_budget_exceeded"

    [item] = _queued(budgeted)
    assert item["error"]["code"] == "time_budget_exceeded" and item["status"] == 504
    assert item["answer"] == ENDLESS and item["question"].startswith("How fast does the pump run? (asked with ")
    assert "key-alpha" not in item["question"]
    assert item["review"]["queued"] and item["claims"] == []
    assert "failed after its answer was accepted: time_budget_exceeded (504)" in item["review"]["reasons"]
    entry = budgeted.get(f"/v1/requests/{item['request_id']}", headers=ALPHA).json()
    assert entry["chunks"] == [{"id": "S1", "text": CHUNKS[0]["text"], "doc_id": None, "page": None},
                               {"id": "S2", "text": CHUNKS[1]["text"], "doc_id": "manual", "page": 3}]

    marked = budgeted.post("/v1/feedback", headers=ALPHA, json={"request_id": item["request_id"], "faithful": False,
                                                                "unfaithful_claims": [0]})
    assert marked.status_code == 422 and marked.json()["error"]["code"] == "invalid_verdict"  # no claim was checked
    given = budgeted.post("/v1/feedback", headers=ALPHA, json={"request_id": item["request_id"], "faithful": False})
    assert given.status_code == 200, given.text
    assert _queued(budgeted) == []  # reviewed: out of the queue

    store = Store(settings.db_url)
    try:
        [row] = list(read_reviewed(store, scope="alpha"))
        stored = str(store.get_request(item["request_id"], scope="alpha"))
    finally:
        store.close()
    assert isinstance(row, EvalRow)
    assert (row.answer, row.hallucinated, row.task) == (ENDLESS, True, "qa")
    assert list(row.context) == [c["text"] for c in CHUNKS]
    assert "key-alpha" not in stored


def test_a_request_refused_for_its_input_is_logged_without_it_and_takes_no_verdict(budgeted) -> None:
    empty = budgeted.post("/v1/verify", headers=ALPHA, json={"question": "q?", "answer": "  ", "chunks": CHUNKS})
    assert empty.status_code == 422
    too_much = budgeted.post("/v1/verify", headers=ALPHA, json={
        "question": "q?", "answer": "The pump runs. " * 2_000, "chunks": CHUNKS})
    assert too_much.status_code == 413 and too_much.json()["error"]["code"] == "too_much_work"
    logged = budgeted.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert sorted(row["status"] for row in logged) == [413, 422]
    assert all(row["question"] is None and not row["answer"] and not row["review"]["queued"] for row in logged)
    assert _queued(budgeted) == []
    refused = budgeted.post("/v1/feedback", headers=ALPHA, json={"request_id": logged[0]["request_id"],
                                                                 "faithful": True})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_verdict"


def test_a_repair_whose_llm_endpoint_fails_reaches_the_review_queue(settings) -> None:
    from fastapi.testclient import TestClient
    from live_server import free_port

    from groundwire.config import Config, LLMConfig
    from groundwire.service import create_app

    # Nothing listens on this loopback port: the LLM endpoint repair edits with refuses every connection.
    config = Config(llm=LLMConfig(base_url=f"http://127.0.0.1:{free_port()}/v1", model="gone", max_retries=0,
                                  connect_timeout_s=2, timeout_s=5))
    answer = "The pump is serviced each spring by the vendor."  # escalated: repair asks the LLM to edit it
    with TestClient(create_app(replace(settings, use_llm=True, config=config)),
                    raise_server_exceptions=False) as client:
        failed = client.post("/v1/repair", headers=ALPHA, json={"answer": answer, "chunks": CHUNKS})
        assert failed.status_code == 502 and failed.json()["error"]["code"] == "llm_unavailable", failed.text
        [item] = _queued(client)
    assert item["answer"] == answer and item["http_route"] == "POST /v1/repair"
    assert "failed after its answer was accepted: llm_unavailable (502)" in item["review"]["reasons"]
