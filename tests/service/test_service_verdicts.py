"""Reviewers' verdicts through POST /v1/feedback, over loopback: stored beside thumbs and corrections, the newest in
force and the earlier kept, shown by the request log and the review queue, refused with a code when wrong."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from live_server import live
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")

CHUNKS = [{"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase."}]
BAD = "The Pro plan costs $10 a month. Refunds are issued within 90 days of purchase."
READER = {"X-API-Key": "key-reader"}


@pytest.fixture
def api(settings) -> Iterator[httpx.Client]:
    """The service on 127.0.0.1 (uvicorn in a thread), with a read-only key on scope alpha."""
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    keys = {**settings.api_keys, "key-reader": "alpha"}
    app = create_app(replace(settings, api_keys=keys, read_only_keys=frozenset({"key-reader"})))
    with TestClient(app) as client, live(client) as port, \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        yield http


def checked(api: httpx.Client, *, task: str | None = None) -> str:
    body = {"answer": BAD, "chunks": CHUNKS, "question": "What are the refund terms?", **({"task": task} if task else {})}
    response = api.post("/v1/verify", headers=ALPHA, json=body)
    assert response.status_code == 200, response.text
    assert len(response.json()["report"]["claims"]) == 2
    return str(response.json()["request_id"])


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    return dict(response.json()["error"])


def test_a_verdict_is_recorded_beside_thumbs_and_a_later_one_replaces_it(api: httpx.Client) -> None:
    request_id = checked(api)
    queued = api.get("/v1/review", headers=ALPHA).json()["items"]
    [item] = [i for i in queued if i["request_id"] == request_id]
    # The queue lists each claim by the index a verdict marks it with.
    assert [(c["index"], c["text"]) for c in item["claims"]] == [
        (0, "The Pro plan costs $10 a month."), (1, "Refunds are issued within 90 days of purchase.")]

    first = api.post("/v1/feedback", headers=ALPHA, json={
        "request_id": request_id, "thumbs": "down", "correction": "Refunds: 30 days.", "faithful": False,
        "unfaithful_claims": [1]})
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["feedback_id"] is not None and body["replaces"] is None
    assert body["verdict"]["faithful"] is False
    assert body["verdict"]["unfaithful_claims"] == [{"index": 1, "text": "Refunds are issued within 90 days of purchase."}]
    # A verdict takes the request out of the queue, and the log shows it.
    assert request_id not in {i["request_id"] for i in api.get("/v1/review", headers=ALPHA).json()["items"]}
    [listed] = [r for r in api.get("/v1/requests", headers=ALPHA).json()["requests"] if r["request_id"] == request_id]
    assert listed["verdict"] == body["verdict"]

    second = api.post("/v1/feedback", headers=ALPHA, json={"request_id": request_id, "faithful": True})
    assert second.status_code == 200, second.text
    assert second.json()["feedback_id"] is None and second.json()["replaces"] == body["verdict"]["id"]
    entry = api.get(f"/v1/requests/{request_id}", headers=ALPHA).json()
    assert entry["verdict"] == second.json()["verdict"]
    assert [v["faithful"] for v in entry["verdicts"]] == [False, True]  # nothing lost, oldest first
    assert entry["verdicts"][0]["created_at"] <= entry["verdicts"][1]["created_at"]
    assert [(f["thumbs"], f["correction"]) for f in entry["feedback"]] == [(-1, "Refunds: 30 days.")]


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"faithful": False, "unfaithful_claims": [2]}, 422, "invalid_verdict"),  # the request has claims 0 and 1
    ({"faithful": True, "unfaithful_claims": [1]}, 422, "invalid_request"),
    ({"unfaithful_claims": [1]}, 422, "invalid_request"),
    ({"faithful": False, "unfaithful_claims": [1, 1]}, 422, "invalid_request"),
    ({"faithful": False, "unfaithful_claims": [-1]}, 422, "invalid_request"),
    ({"faithful": False, "unfaithful_claims": [True]}, 422, "invalid_request"),
    ({"faithful": False, "unfaithful_claims": ["1"]}, 422, "invalid_request"),
    ({"faithful": "no"}, 422, "invalid_request"),
])
def test_a_wrong_verdict_is_refused_with_its_code_and_nothing_is_written(api: httpx.Client, body: dict, status: int,
                                                                         code: str) -> None:
    request_id = checked(api)
    error = error_of(api.post("/v1/feedback", headers=ALPHA, json={"request_id": request_id, "thumbs": "up", **body}),
                     status)
    assert error["code"] == code
    if code == "invalid_verdict":
        assert "claims 0 to 1: no claim 2" in error["message"]
    entry = api.get(f"/v1/requests/{request_id}", headers=ALPHA).json()
    assert entry["feedback"] == [] and entry["verdicts"] == [] and entry["verdict"] is None


def test_verdicts_keep_to_the_scope_and_the_key_rules_of_feedback(api: httpx.Client) -> None:
    request_id = checked(api)
    verdict = {"request_id": request_id, "faithful": False}
    assert error_of(api.post("/v1/feedback", headers=BETA, json=verdict), 404)["code"] == "request_not_found"
    assert error_of(api.post("/v1/feedback", headers=ALPHA, json={**verdict, "request_id": "f" * 32}),
                    404)["code"] == "request_not_found"
    assert error_of(api.post("/v1/feedback", headers=READER, json=verdict), 403)["code"] == "read_only_key"
    assert error_of(api.post("/v1/feedback", json=verdict), 401)["code"] == "missing_api_key"
    assert api.get(f"/v1/requests/{request_id}", headers=ALPHA).json()["verdicts"] == []
    assert api.get(f"/v1/requests/{request_id}", headers=READER).status_code == 200  # a reader reads it


def test_the_openapi_spec_documents_the_verdict(api: httpx.Client) -> None:
    schemas = api.get("/openapi.json").json()["components"]["schemas"]
    assert {"faithful", "unfaithful_claims"} <= set(schemas["FeedbackRequest"]["properties"])
    assert {"verdict", "replaces"} <= set(schemas["FeedbackResponse"]["properties"])
    assert set(schemas["VerdictOut"]["properties"]) == {"id", "faithful", "unfaithful_claims", "created_at"}


def test_the_log_reader_gives_the_rows_eval_reads(api: httpx.Client, settings, tmp_path) -> None:
    import json

    from groundwire.data.labelled import REVIEWED_SPAN, read_reviewed, reviewed_record
    from groundwire.data.rows import EvalRow, read_rows
    from groundwire.data.store import Store

    marked, answer_level, faithful, unreviewed = (checked(api, task="qa") for _ in range(4))
    for request_id, verdict in ((marked, {"faithful": False, "unfaithful_claims": [1]}),
                                (answer_level, {"faithful": False}), (faithful, {"faithful": False}),
                                (faithful, {"faithful": True})):  # the second verdict on `faithful` is in force
        assert api.post("/v1/feedback", headers=ALPHA, json={"request_id": request_id, **verdict}).status_code == 200
    api.post("/v1/feedback", headers=ALPHA, json={"request_id": unreviewed, "thumbs": "down"})  # thumbs: no label
    store = Store(settings.db_url)
    try:
        rows = list(read_reviewed(store, scope="alpha"))
        assert list(read_reviewed(store, scope="beta")) == []
        pairs = store.reviewed(scope="alpha")
    finally:
        store.close()
    assert all(isinstance(row, EvalRow) for row in rows)
    by_id = {row.id: row for row in rows if isinstance(row, EvalRow)}
    assert set(by_id) == {marked, answer_level, faithful}
    row = by_id[marked]
    assert (row.task, row.question, row.answer, row.hallucinated) == ("qa", "What are the refund terms?", BAD, True)
    assert [(c.id, c.text) for c in row.chunks] == [("S1", CHUNKS[0]["text"])]
    [(start, end, label)] = row.spans
    assert (BAD[start:end], label) == ("Refunds are issued within 90 days of purchase.", REVIEWED_SPAN)
    assert (by_id[answer_level].hallucinated, by_id[answer_level].spans) == (True, ())
    assert (by_id[faithful].hallucinated, by_id[faithful].spans) == (False, ())
    assert row.source == "request-log:alpha"
    # Written as JSONL, the records read back through the file reader `groundwire eval` uses as the same rows.
    path = tmp_path / "reviewed.jsonl"
    path.write_text("".join(json.dumps(reviewed_record(r, v)) + "\n" for r, v in pairs), encoding="utf-8")
    from_file = {r.id: r for r in read_rows(path) if isinstance(r, EvalRow)}
    assert {k: (r.task, r.question, r.context, r.answer, r.hallucinated, r.spans, r.chunks) for k, r in
            from_file.items()} == {k: (r.task, r.question, r.context, r.answer, r.hallucinated, r.spans, r.chunks)
                                   for k, r in by_id.items()}
