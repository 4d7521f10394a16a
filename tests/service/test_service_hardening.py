"""Issue 14, the service: bounded integers, strict types, per-request work limits, each report stored once."""

from __future__ import annotations

import json

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

DOC = {"doc_id": "manual", "title": "Manual", "text": "The pump runs at 40 litres per minute."}


@pytest.mark.parametrize("page", [9223372036854775808, 2**31, True, "3", 1.5])
def test_ingest_refuses_pages_the_store_cannot_hold_or_that_are_not_integers(client, page) -> None:
    response = client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**DOC, "page": page}]})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"][0]["loc"][-1] == "page"
    # The connection and the service are fine afterwards.
    ok = client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**DOC, "page": 2**31 - 1}]})
    assert ok.status_code == 200, ok.text


def test_verify_refuses_coerced_types(client) -> None:
    body = {"answer": "The pump runs at 40 litres per minute.", "chunks": [{"id": "S1", "text": DOC["text"]}]}
    assert client.post("/v1/verify", headers=ALPHA, json=body).status_code == 200
    for field, value in (("require_citations", "no"), ("judge", 0), ("answer", 40)):
        response = client.post("/v1/verify", headers=ALPHA, json={**body, field: value})
        assert response.status_code == 422, (field, response.text)


def test_work_limits_are_a_413_that_names_the_limit(settings, tmp_path) -> None:
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    tight = replace(settings, max_chunks=2, max_text_chars=60, max_context_chars=100)
    chunk = {"id": "S1", "text": DOC["text"]}
    cases = {
        "max_chunks": {"answer": "x y z", "chunks": [chunk, {**chunk, "id": "S2"}, {**chunk, "id": "S3"}]},
        "max_text_chars": {"answer": "The pump runs. " * 5, "chunks": [chunk]},
        "max_context_chars": {"answer": "x y z", "chunks": [{**chunk, "text": "word " * 30}]},
    }
    with TestClient(create_app(tight), raise_server_exceptions=False) as client:
        for limit, body in cases.items():
            response = client.post("/v1/verify", headers=ALPHA, json=body)
            assert response.status_code == 413, response.text
            error = response.json()["error"]
            assert error["details"]["limit"] == limit and limit in error["message"]
        ingested = client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**DOC, "text": "word " * 30}]})
        assert ingested.status_code == 200
        by_doc = client.post("/v1/verify", headers=ALPHA, json={"answer": "x y z", "doc_ids": ["manual"]})
        assert by_doc.status_code == 413 and by_doc.json()["error"]["details"]["limit"] == "max_context_chars"


def test_each_report_is_stored_once(client, settings) -> None:
    import sqlalchemy as sa

    body = {"answer": "The pump runs at 40 litres per minute.", "chunks": [{"id": "S1", "text": DOC["text"]}]}
    sent = client.post("/v1/verify", headers=ALPHA, json=body).json()
    engine = sa.create_engine(settings.db_url)
    with engine.connect() as conn:
        report, extra = conn.execute(sa.text("select report, extra from requests")).one()
    engine.dispose()
    assert json.dumps(sent["report"]["answer"]) in report and '"report"' not in extra
    logged = client.get(f"/v1/requests/{sent['request_id']}", headers=ALPHA).json()
    assert logged["response"] == sent  # the page still gets the response exactly as it was answered


def test_the_page_and_the_api_send_security_headers(client) -> None:
    for path in ("/", "/healthz", "/static/app.js"):
        headers = client.get(path).headers
        assert headers["x-content-type-options"] == "nosniff", path
        assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        assert "default-src 'self'" in headers["content-security-policy"], path


def test_serve_refuses_a_public_address_without_keys(tmp_path) -> None:
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "groundwire", "serve", "--host", "0.0.0.0", "--scorer", "lexical",
                           "--db", str(tmp_path / "x.db")], capture_output=True, text=True, env=environment,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "--insecure-no-auth" in done.stderr


@pytest.mark.parametrize("path", ["/v1/verify", "/v1/repair"])
def test_an_answer_whose_only_claim_is_too_long_is_a_200_unscored_escalation(client, path) -> None:
    """Issue 20, item 1: no claim fits the model window (no window at all); the service answers, never a 500."""
    body = {"answer": "The plan costs " + "very " * 300 + "much money.",
            "chunks": [{"id": "S1", "text": "The plan costs 19 dollars."}]}
    response = client.post(path, headers=ALPHA, json=body)
    assert response.status_code == 200, response.text
    report = response.json()["report"]
    assert [claim["scored"] for claim in report["claims"]] == [False]
    assert report["claims"][0]["route"] == "escalate"
    assert report["route"] == "escalate"
    # The service is fine afterwards.
    after = {"answer": "The plan costs 19 dollars.", "chunks": body["chunks"]}
    assert client.post(path, headers=ALPHA, json=after).status_code == 200


def test_page_zero_is_refused_inline_and_at_ingest_alike(client) -> None:
    """Issue 20, item 7: pages are 1-based everywhere; page 0 is a 422 naming the field on both paths."""
    chunk = {"id": "S1", "text": DOC["text"], "page": 0}
    for path, body in (("/v1/verify", {"answer": DOC["text"], "chunks": [chunk]}),
                       ("/v1/repair", {"answer": DOC["text"], "chunks": [chunk]}),
                       ("/v1/ingest", {"documents": [{**DOC, "page": 0}]})):
        response = client.post(path, headers=ALPHA, json=body)
        assert response.status_code == 422, (path, response.text)
        assert response.json()["error"]["details"][0]["loc"][-1] == "page", path
    # Page 1 is accepted on both paths.
    assert client.post("/v1/verify", headers=ALPHA,
                       json={"answer": DOC["text"], "chunks": [{**chunk, "page": 1}]}).status_code == 200
    assert client.post("/v1/ingest", headers=ALPHA, json={"documents": [{**DOC, "page": 1}]}).status_code == 200
