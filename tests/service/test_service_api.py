"""The HTTP contract, in process (TestClient): errors, limits, scopes, the request log, the review queue."""

from __future__ import annotations

import json

import pytest
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")

CHUNKS = [
    {"id": "S1", "text": "The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase.", "score": 0.91},
    {"id": "S2", "text": "Support is available by email on weekdays.", "score": 0.42},
]
GOOD = "The Pro plan costs $10 a month."
BAD = "The Pro plan costs $10 a month. Refunds are issued within 90 days of purchase."


def verify(client, answer: str, *, headers=ALPHA, question: str | None = None, chunks=CHUNKS):
    body = {"answer": answer, "chunks": chunks}
    if question is not None:
        body["question"] = question
    response = client.post("/v1/verify", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def assert_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["status"] == status
    assert isinstance(error["message"], str) and error["message"]
    if code is not None:
        assert error["code"] == code
    return error


def test_health_reports_the_model_loaded_once_for_many_requests(client) -> None:
    verifier = client.app.state.runtime.verifier
    for _ in range(3):
        verify(client, GOOD)
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    assert health["model_loads"] == 1
    assert health["model_id"] == verifier.model_id
    assert client.app.state.runtime.verifier is verifier


def test_openapi_spec_lists_every_endpoint_and_the_error_shape(client) -> None:
    spec = client.get("/openapi.json").json()
    for path, method in [("/v1/verify", "post"), ("/v1/repair", "post"), ("/v1/generate", "post"),
                         ("/v1/ingest", "post"), ("/v1/feedback", "post"), ("/v1/requests/{request_id}", "get"),
                         ("/healthz", "get")]:
        assert method in spec["paths"][path], path
    assert "ErrorResponse" in spec["components"]["schemas"]
    assert "413" in spec["paths"]["/v1/verify"]["post"]["responses"]


def test_verify_grades_claims_and_returns_the_chunks(client) -> None:
    out = verify(client, BAD)
    claims = out["report"]["claims"]
    assert [c["verdict"] for c in claims] == ["SUPPORTED", "CONTRADICTED"]
    assert out["report"]["route"] == "reject"
    assert {c["id"] for c in out["chunks"]} == {"S1", "S2"}
    cited = claims[1]
    start, end = cited["evidence_span"]
    assert "30 days" in CHUNKS[0]["text"][start:end]


@pytest.mark.parametrize("headers, code", [({}, "missing_api_key"),
                                            ({"Authorization": "Bearer nope"}, "invalid_api_key"),
                                            ({"X-API-Key": "key-alph"}, "invalid_api_key")])
def test_requests_without_a_valid_key_get_401_json(client, headers, code) -> None:
    response = client.post("/v1/verify", json={"answer": GOOD, "chunks": CHUNKS}, headers=headers)
    assert_error(response, 401, code)
    assert response.headers["www-authenticate"] == "Bearer"
    assert_error(client.get("/v1/requests", headers=headers), 401, code)


def test_oversized_body_gets_413_json_and_is_logged_only_as_a_failure(client, settings) -> None:
    big = {"answer": "x" * (settings.max_body_bytes + 10), "chunks": CHUNKS}
    error = assert_error(client.post("/v1/verify", json=big, headers=ALPHA), 413, "payload_too_large")
    assert error["details"]["max_bytes"] == settings.max_body_bytes
    logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert [(row["endpoint"], row["status"], row["answer"]) for row in logged] == [("error", 413, "")]


def test_oversized_chunked_body_without_content_length_gets_413(client, settings) -> None:
    payload = json.dumps({"answer": "y" * (settings.max_body_bytes * 2), "chunks": CHUNKS}).encode()

    def pieces():
        for start in range(0, len(payload), 8192):
            yield payload[start:start + 8192]

    response = client.post("/v1/verify", content=pieces(), headers={**ALPHA, "Content-Type": "application/json"})
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "payload_too_large")


@pytest.mark.parametrize("body", [
    {"answer": GOOD},  # no context at all
    {"answer": GOOD, "chunks": CHUNKS, "doc_ids": ["d1"]},  # both kinds of context
    {"chunks": CHUNKS},  # no answer
    {"answer": GOOD, "chunks": [{"id": "S1", "text": "a"}, {"id": "S1", "text": "b"}]},  # duplicate ids
    {"answer": GOOD, "chunks": CHUNKS, "temperature": 0.3},  # unknown field
    {"answer": GOOD, "chunks": [{"id": "S1", "text": "a", "type": "video"}]},  # bad chunk type
    {"answer": GOOD, "chunks": CHUNKS, "task": "poetry"},  # unknown task type
])
def test_malformed_bodies_get_422_json_naming_the_problem(client, body) -> None:
    error = assert_error(client.post("/v1/verify", json=body, headers=ALPHA), 422, "invalid_request")
    assert error["details"] and all("msg" in d and "loc" in d for d in error["details"])


def test_invalid_json_and_input_errors_are_json_4xx(client) -> None:
    response = client.post("/v1/verify", content=b"{not json", headers={**ALPHA, "Content-Type": "application/json"})
    assert_error(response, 422, "invalid_request")
    # The verifier's own InputError (an empty answer) is a 422 too, with its message and its code (docs/errors.md).
    error = assert_error(client.post("/v1/verify", json={"answer": "  ", "chunks": CHUNKS}, headers=ALPHA), 422,
                         "empty_answer")
    assert "empty" in error["message"]


def test_unknown_paths_and_methods_are_json(client) -> None:
    assert_error(client.get("/v1/nothing-here", headers=ALPHA), 404, "not_found")
    assert_error(client.get("/v1/verify", headers=ALPHA), 405)


def test_unexpected_errors_are_json_500_without_internals(settings) -> None:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    app = create_app(settings)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internal detail")

    with TestClient(app, raise_server_exceptions=False) as test_client:
        error = assert_error(test_client.get("/boom"), 500, "internal_error")
    assert "secret" not in error["message"]


def test_every_request_is_logged_with_the_fields_of_the_issue(client) -> None:
    out = verify(client, BAD, question="How long do refunds take?")
    entry = client.get(f"/v1/requests/{out['request_id']}", headers=ALPHA).json()
    assert entry["request_id"] == out["request_id"]
    assert entry["endpoint"] == "verify"
    assert entry["question"] == "How long do refunds take?"
    assert entry["retrieved"] == [{"cite_id": c["id"], "score": c["score"]} for c in CHUNKS]
    assert json.loads(entry["context"]) == CHUNKS  # the context exactly as sent
    assert entry["response_text"] == BAD
    report = out["report"]
    assert [(c["verdict"], c["score"]) for c in entry["claims"]] == [(c["verdict"], c["score"]) for c in report["claims"]]
    assert entry["route"] == entry["decision"] == report["route"] == "reject"  # decision: deprecated, one release
    assert entry["escalations"] == sum(c["route"] == "escalate" for c in report["claims"])
    assert entry["refused"] is False
    assert entry["latency_ms"] > 0
    assert entry["model_ids"]["scorer"] == report["model_id"]
    assert entry["release"] == "test-release"
    assert entry["response"] == out  # the whole response body, so the page can re-open it


def test_refusal_is_logged_as_refused(client) -> None:
    out = verify(client, "NOT_IN_CONTEXT")
    entry = client.get(f"/v1/requests/{out['request_id']}", headers=ALPHA).json()
    assert entry["refused"] is True


def test_scopes_never_see_each_others_logs_documents_or_feedback(client) -> None:
    ingest = client.post("/v1/ingest", headers=ALPHA, json={"documents": [
        {"doc_id": "runbook", "title": "Runbook", "page": 3, "text": "Start the cluster with gw start."}]})
    assert ingest.status_code == 200, ingest.text
    alpha = client.post("/v1/verify", headers=ALPHA, json={"answer": "Start the cluster with gw start.",
                                                            "doc_ids": ["runbook"]}).json()
    assert alpha["report"]["claims"][0]["chunk_id"] == ingest.json()["chunks"][0]["id"]
    request_id = alpha["request_id"]

    # Another scope's request id looks exactly like one that never existed.
    theirs = assert_error(client.get(f"/v1/requests/{request_id}", headers=BETA), 404, "request_not_found")
    nobody = assert_error(client.get("/v1/requests/0123456789abcdef", headers=BETA), 404, "request_not_found")
    assert theirs.keys() == nobody.keys()
    # Beta's log holds only its own two failed lookups, logged as failures.
    beta_log = client.get("/v1/requests", headers=BETA).json()["requests"]
    assert [(r["endpoint"], r["status"]) for r in beta_log] == [("error", 404), ("error", 404)]
    assert client.get("/v1/review", headers=BETA).json()["items"] == []
    assert_error(client.post("/v1/feedback", headers=BETA, json={"request_id": request_id, "thumbs": "down"}), 404)
    assert_error(client.post("/v1/verify", headers=BETA, json={"answer": "x y z", "doc_ids": ["runbook"]}), 404,
                 "document_not_found")
    # Beta ingesting a document with the same doc_id does not touch alpha's.
    client.post("/v1/ingest", headers=BETA, json={"documents": [
        {"doc_id": "runbook", "title": "Other", "text": "Stop the cluster with gw stop."}]})
    again = client.post("/v1/verify", headers=ALPHA, json={"answer": "Start the cluster with gw start.",
                                                            "doc_ids": ["runbook"]}).json()
    assert again["chunks"] == alpha["chunks"]
    # Alpha still sees its own.
    assert client.get(f"/v1/requests/{request_id}", headers=ALPHA).status_code == 200
    assert {r["request_id"] for r in client.get("/v1/requests", headers=ALPHA).json()["requests"]} == {
        request_id, again["request_id"]}


def test_ingest_gives_durable_ids_and_versions_only_on_change(client) -> None:
    doc = {"doc_id": "manual", "title": "Manual", "page": None, "text": "Para one.\n\nPara two."}
    first = client.post("/v1/ingest", headers=ALPHA, json={"documents": [doc]}).json()
    same = client.post("/v1/ingest", headers=ALPHA, json={"documents": [doc]}).json()
    assert [c["id"] for c in first["chunks"]] == [c["id"] for c in same["chunks"]]
    assert all(c["id"].startswith("c_") for c in first["chunks"])
    assert same["doc_set_version"] == first["doc_set_version"]
    assert same["changed_doc_ids"] == []
    changed = client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**doc, "text": "Para three."}]}).json()
    assert int(changed["doc_set_version"]) == int(first["doc_set_version"]) + 1
    assert changed["changed_doc_ids"] == ["manual"]
    assert_error(client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**doc, "page": 0}]}), 422)
    # Query parameters are checked too, with the same error shape.
    assert_error(client.get("/v1/requests", params={"limit": 0}, headers=ALPHA), 422, "invalid_request")


def test_review_queue_takes_low_scores_and_risky_patterns_until_reviewed(client) -> None:
    low = verify(client, BAD)
    risky = verify(client, GOOD, question="What dosage is safe?")
    fine = verify(client, GOOD)
    # Supported text, but it cites a chunk that was never retrieved: a validator fires.
    fabricated = verify(client, "The Pro plan costs $10 a month [S7].")
    assert low["review"]["queued"] and risky["review"]["queued"] and not fine["review"]["queued"]
    assert any("high-risk" in reason for reason in risky["review"]["reasons"])
    assert fabricated["report"]["score"] >= 0.5
    # A fabricated citation escalates the answer: it is queued for both.
    assert fabricated["review"]["reasons"] == ["escalated (score 1.00): the routing asks a person",
                                               "validator: fabricated_citation"]
    queue = client.get("/v1/review", headers=ALPHA).json()
    assert {item["request_id"] for item in queue["items"]} == {
        low["request_id"], risky["request_id"], fabricated["request_id"]}
    client.post("/v1/feedback", headers=ALPHA, json={"request_id": fabricated["request_id"], "thumbs": "down"})

    feedback = client.post("/v1/feedback", headers=ALPHA, json={
        "request_id": low["request_id"], "thumbs": "down", "correction": "Refunds take 30 days."})
    assert feedback.status_code == 200, feedback.text
    queue = client.get("/v1/review", headers=ALPHA).json()
    assert [item["request_id"] for item in queue["items"]] == [risky["request_id"]]
    entry = client.get(f"/v1/requests/{low['request_id']}", headers=ALPHA).json()
    assert entry["feedback"][0]["thumbs"] == -1
    assert entry["feedback"][0]["correction"] == "Refunds take 30 days."
    assert_error(client.post("/v1/feedback", headers=ALPHA, json={"request_id": low["request_id"]}), 422)


def test_repair_drops_the_unsupported_claim_and_logs_the_repaired_answer(client) -> None:
    response = client.post("/v1/repair", headers=ALPHA, json={"answer": BAD, "chunks": CHUNKS})
    assert response.status_code == 200, response.text
    out = response.json()
    repaired = out["repaired"]
    actions = {a["claim"]: a["action"] for a in repaired["actions"]}
    assert actions == {"The Pro plan costs $10 a month.": "keep",
                       "Refunds are issued within 90 days of purchase.": "drop"}
    assert "90 days" not in repaired["answer"] and "$10" in repaired["answer"]
    assert repaired["report"]["score"] > out["report"]["score"]
    entry = client.get(f"/v1/requests/{out['request_id']}", headers=ALPHA).json()
    assert entry["endpoint"] == "repair"
    assert entry["response_text"] == repaired["answer"]


def test_eval_dashboard_covers_only_the_callers_scope(client) -> None:
    outs = [verify(client, GOOD), verify(client, BAD), verify(client, "NOT_IN_CONTEXT")]
    verify(client, BAD, headers=BETA)
    data = client.get("/v1/eval", headers=ALPHA).json()
    metrics = data["metrics"]
    assert metrics["n"] == 3
    answered = [o["report"] for o in outs if not o["report"]["abstained"]]
    shares = [sum(c["verdict"] == "SUPPORTED" for c in r["claims"]) / len(r["claims"]) for r in answered]
    assert metrics["faithfulness"] == pytest.approx(sum(shares) / len(shares))
    assert metrics["refusal_rate"] == pytest.approx(1 / 3)
    assert [r["release"] for r in data["releases"]] == ["test-release"]
    assert [p["score"] for p in data["series"]] == [o["report"]["score"] for o in outs]
    # One answer has an unsupported claim: one failure (undetermined: the scope has no corpus to search).
    assert sum(metrics[f"failures_{k}"] for k in ("retrieval_miss", "generator_drift", "undetermined")) == 1
    assert metrics["failures_undetermined"] == 1
    assert client.get("/v1/eval", headers=BETA).json()["metrics"]["n"] == 1

    assert client.post("/v1/eval/runs", headers=ALPHA).status_code == 200
    assert len(client.get("/v1/eval", headers=ALPHA).json()["history"]) == 1
    assert client.get("/v1/eval", headers=BETA).json()["history"] == []
    report = client.get("/v1/eval/report", headers=ALPHA)
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    assert "<svg" in report.text


def test_generate_without_an_llm_endpoint_is_a_clear_503(client) -> None:
    response = client.post("/v1/generate", headers=ALPHA, json={"question": "How much is Pro?", "chunks": CHUNKS})
    error = assert_error(response, 503, "llm_not_configured")
    assert "--llm" in error["message"]


def test_judge_without_an_llm_endpoint_is_a_clear_422(client) -> None:
    response = client.post("/v1/verify", headers=ALPHA, json={"answer": GOOD, "chunks": CHUNKS, "judge": True})
    assert assert_error(response, 422, "judge_not_available")["message"].startswith("judge=true")
    logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert [(r["endpoint"], r["status"], r["error"]["code"]) for r in logged] == [("error", 422, "judge_not_available")]
    # The same request without the judge is answered.
    assert client.post("/v1/verify", headers=ALPHA, json={"answer": GOOD, "chunks": CHUNKS}).status_code == 200


def test_task_selects_the_calibration_on_verify_and_is_refused_where_nothing_uses_it(client) -> None:
    response = client.post("/v1/verify", json={"answer": GOOD, "chunks": CHUNKS, "task": "qa"}, headers=ALPHA)
    assert response.status_code == 200, response.text
    assert response.json()["report"]["meta"]["task"] == "qa"
    assert verify(client, GOOD)["report"]["meta"]["task"] is None
    # /v1/generate writes its own answer and has no task calibration: the field is not silently ignored.
    refused = client.post("/v1/generate", json={"question": "How much?", "chunks": CHUNKS, "task": "qa"}, headers=ALPHA)
    assert_error(refused, 422, "invalid_request")
