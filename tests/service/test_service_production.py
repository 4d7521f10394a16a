"""Issue 14, production defaults of the service: rate limits, work limits, the eval cache, offline /docs,
the OpenAPI security scheme, slow bodies, read-only keys and the logging of failed requests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")

CHUNK = {"id": "S1", "text": "The pump runs at 40 litres per minute."}
VERIFY = {"answer": "The pump runs at 40 litres per minute.", "chunks": [CHUNK]}


@contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client


# --- 1. rate limiting ---------------------------------------------------------------------------------------


def test_rate_limit_is_per_key_and_answers_429_with_retry_after(settings) -> None:
    with serving(settings, rate_limit="3/minute") as client:
        for _ in range(3):
            assert client.get("/v1/requests", headers=ALPHA).status_code == 200
        limited = client.get("/v1/requests", headers=ALPHA)
        assert limited.status_code == 429, limited.text
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        error = limited.json()["error"]
        assert error["code"] == "rate_limited" and error["details"]["limit"] == "3/minute"
        # Another key has its own budget.
        assert client.get("/v1/requests", headers=BETA).status_code == 200
        # A 429 costs no write: it is not logged as a failed request.
        assert client.app.state.runtime.store.requests(scope="alpha") == []


def test_429s_take_their_turn_in_the_refusal_pace(settings) -> None:
    """A caller over its limit that resends at once is answered at the refusal pace (here 20 a second), not as fast
    as the event loop can go: five 429s in a row take at least 0.2 s. (A lower bound: a slow machine only makes it
    later.)"""
    import time

    with serving(settings, rate_limit="1/minute", refusal_rate=20.0) as client:
        assert client.get("/v1/requests", headers=ALPHA).status_code == 200
        started = time.monotonic()
        statuses = [client.get("/v1/requests", headers=ALPHA).status_code for _ in range(5)]
        elapsed = time.monotonic() - started
    assert statuses == [429] * 5
    assert elapsed >= 4 / 20


def test_wrong_keys_are_rate_limited_by_address(settings) -> None:
    with serving(settings, rate_limit="2/minute") as client:
        wrong = {"Authorization": "Bearer not-a-key"}
        assert [client.get("/v1/requests", headers=wrong).status_code for _ in range(3)] == [401, 401, 429]


def test_no_rate_limit_by_default(settings) -> None:
    assert settings.rate_limit is None
    with serving(settings) as client:
        assert {client.get("/v1/requests", headers=ALPHA).status_code for _ in range(30)} == {200}


def test_a_malformed_rate_limit_fails_at_start_up(settings) -> None:
    from groundwire.foundation.errors import InputError

    with pytest.raises(InputError, match="60 a minute"):
        replace(settings, rate_limit="60 a minute")


def test_the_rate_limit_can_come_from_groundwire_toml(tmp_path) -> None:
    from groundwire.config import load_config

    (tmp_path / "groundwire.toml").write_text('[serve]\nrate_limit = "100/minute"\n')
    assert load_config(tmp_path / "groundwire.toml", env={}).serve.rate_limit == "100/minute"


# --- 2. claims and pairs per request ------------------------------------------------------------------------


def _count_scoring_calls(client: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scorer = client.app.state.runtime.verifier.scorer
    calls: list[int] = []
    real = scorer.score

    def counted(pairs: Any) -> Any:
        calls.append(len(pairs))
        return real(pairs)

    monkeypatch.setattr(scorer, "score", counted)
    return calls


def test_claims_and_pairs_over_the_limit_are_a_413_before_scoring(settings, monkeypatch) -> None:
    three_claims = "The pump runs at 40 litres per minute. It weighs 12 kilograms. It costs 300 euros."
    many_chunks = [{"id": f"S{i}", "text": f"Pump {i} runs at {i} litres per minute."} for i in range(12)]
    with serving(settings, max_claims=2, max_pairs=10) as client:
        scored = _count_scoring_calls(client, monkeypatch)
        too_many_claims = client.post("/v1/verify", headers=ALPHA, json={"answer": three_claims, "chunks": [CHUNK]})
        assert too_many_claims.status_code == 413, too_many_claims.text
        error = too_many_claims.json()["error"]
        assert error["details"] == {"limit": "max_claims", "max": 2, "got": 3} and "max_claims" in error["message"]
        work = client.app.state.runtime.verifier.workload(VERIFY["answer"], [c["text"] for c in many_chunks])
        assert work.claims == 1 and work.pairs > 10  # one claim against 12 separate windows
        too_many_pairs = client.post("/v1/repair", headers=ALPHA, json={**VERIFY, "chunks": many_chunks})
        assert too_many_pairs.status_code == 413, too_many_pairs.text
        assert too_many_pairs.json()["error"]["details"]["limit"] == "max_pairs"
        assert scored == []  # neither request reached the scoring call
        # Lines with no claim count too (issue 38): lines of "x" were accepted after seconds of splitting.
        filler = client.post("/v1/verify", headers=ALPHA, json={"answer": "x\n" * 10_000, "chunks": [CHUNK]})
        assert filler.status_code == 413, filler.text
        assert filler.json()["error"]["details"]["limit"] == "max_claims" and "sentences" in filler.text
        assert scored == []
        within = client.post("/v1/verify", headers=ALPHA, json=VERIFY)
        assert within.status_code == 200 and len(scored) >= 1


# --- 3. eval results cached per release -------------------------------------------------------------------


def test_eval_results_are_cached_until_the_log_changes(client, monkeypatch) -> None:
    docs = [{"doc_id": "pump", "title": "Pump", "text": "The pump runs at 40 litres per minute."},
            {"doc_id": "spec", "title": "Spec", "text": "The spare pump runs at 90 litres per minute."}]
    assert client.post("/v1/ingest", headers=ALPHA, json={"documents": docs}).status_code == 200
    wrong = client.post("/v1/verify", headers=ALPHA,
                        json={"answer": "The pump runs at 90 litres per minute.", "doc_ids": ["pump"]}).json()
    verifier = client.app.state.runtime.verifier
    calls: list[str] = []
    real = verifier.run  # every check runs a plan (pipeline.check), so this counts the eval loop's checks
    monkeypatch.setattr(verifier, "run", lambda plan, *a, **k: calls.append(plan.answer) or real(plan, *a, **k))

    first = client.get("/v1/eval?limit=50", headers=ALPHA)
    assert first.status_code == 200 and calls, "the eval loop re-verifies the failed claim against the corpus"
    after_first = len(calls)
    again = client.get("/v1/eval?limit=50", headers=ALPHA)
    assert again.json()["metrics"] == first.json()["metrics"]
    assert client.get("/v1/eval/report?limit=50", headers=ALPHA).status_code == 200
    assert len(calls) == after_first  # served from the cache: no verifier call
    # Another sample size is its own entry.
    client.get("/v1/eval?limit=49", headers=ALPHA)
    assert len(calls) > after_first

    for change in (
        lambda: client.post("/v1/feedback", headers=ALPHA, json={"request_id": wrong["request_id"], "thumbs": "down"}),
        lambda: client.post("/v1/verify", headers=ALPHA, json={"answer": "The pump runs at 70 litres per minute.",
                                                              "doc_ids": ["pump"]}),
    ):
        assert change().status_code == 200
        before = len(calls)
        client.get("/v1/eval?limit=50", headers=ALPHA)
        assert len(calls) > before  # the new row invalidated the cached result
        before = len(calls)
        client.get("/v1/eval?limit=50", headers=ALPHA)
        assert len(calls) == before
    # A recorded run always runs, and what it found is what the next read serves.
    before = len(calls)
    recorded = client.post("/v1/eval/runs?limit=50", headers=ALPHA)
    assert recorded.status_code == 200 and len(calls) > before
    before = len(calls)
    assert client.get("/v1/eval?limit=50", headers=ALPHA).json()["history"] == recorded.json()["history"]
    assert len(calls) == before


# --- 4. /docs offline, under a CSP ----------------------------------------------------------------------------


def test_docs_load_only_local_assets_under_a_csp(client) -> None:
    import base64
    import hashlib
    import re

    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert urls and all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    assert "http" not in page.text.lower().replace("http-equiv", "")
    for url in urls:
        assert client.get(url).status_code == 200, url
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    script_policy = next(part for part in policy.split(";") if part.strip().startswith("script-src"))
    assert "unsafe-inline" not in script_policy
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
    assert len(inline) == 1
    assert base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode() in script_policy
    assert client.get("/redoc").status_code == 404  # its bundle is not shipped: no page that needs a CDN


# --- 5. the API-key security scheme in OpenAPI ----------------------------------------------------------------


def test_openapi_declares_the_api_key_schemes_on_every_v1_route(client) -> None:
    spec = client.get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>"}
    assert schemes["apiKey"]["type"] == "apiKey" and schemes["apiKey"]["in"] == "header"
    assert schemes["apiKey"]["name"] == "X-API-Key"
    operations = [(path, op) for path, item in spec["paths"].items() for op in item.values()]
    v1 = [(path, op) for path, op in operations if path.startswith("/v1/")]
    assert len(v1) >= 10
    for path, op in v1:
        assert {"bearer": []} in op["security"] and {"apiKey": []} in op["security"], path
    assert "security" not in spec["paths"]["/healthz"]["get"]


# --- 6. a body shorter than its Content-Length ---------------------------------------------------------------


def test_a_client_that_sends_less_than_its_content_length_gets_408_and_is_disconnected(tmp_path) -> None:
    import socket

    import httpx
    from live_server import LiveServer
    from service_common import KEYS

    with LiveServer(tmp_path, api_keys=KEYS, extra_args=("--body-timeout", "1")) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
            sock.sendall(b"POST /v1/verify HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer key-alpha\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"answer\": ")
            received = b""
            while chunk := sock.recv(65536):  # returns b"" once the server closes; the 60 s timeout would raise
                received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), received
        assert b"connection: close" in head.lower()
        assert b'"body_timeout"' in body
        # The server goes on serving everyone else.
        assert httpx.get(f"{server.url}/v1/requests", headers=ALPHA).status_code == 200


# --- 7. read-only keys -----------------------------------------------------------------------------------------


def test_read_only_keys_verify_and_read_but_do_not_change_the_scope(settings) -> None:
    reader = {"Authorization": "Bearer key-reader"}
    keys = {**settings.api_keys, "key-reader": "alpha"}
    with serving(settings, api_keys=keys, read_only_keys=frozenset({"key-reader"})) as client:
        verified = client.post("/v1/verify", headers=reader, json=VERIFY)
        assert verified.status_code == 200
        assert client.post("/v1/repair", headers=reader, json=VERIFY).status_code == 200
        for path in ("/v1/requests", f"/v1/requests/{verified.json()['request_id']}", "/v1/review", "/v1/eval"):
            assert client.get(path, headers=reader).status_code == 200, path
        refused = {
            "/v1/ingest": {"documents": [{"doc_id": "d", "text": "Some text."}]},
            "/v1/feedback": {"request_id": verified.json()["request_id"], "thumbs": "up"},
            "/v1/eval/runs": None,
        }
        for path, body in refused.items():
            response = client.post(path, headers=reader, json=body)
            assert response.status_code == 403, (path, response.text)
            assert response.json()["error"]["code"] == "read_only_key"
        # The reader's request is logged in the scope it shares with the read-write key, which may give feedback.
        assert client.post("/v1/feedback", headers=ALPHA, json=refused["/v1/feedback"]).status_code == 200


def test_api_keys_parse_with_an_optional_access_suffix() -> None:
    from groundwire.foundation.errors import InputError
    from groundwire.service.settings import parse_api_keys

    keys, read_only = parse_api_keys(["k1:team-a", "k2:team-a:ro", "k3:team-b:rw", "k4:a:b"])
    assert keys == {"k1": "team-a", "k2": "team-a", "k3": "team-b", "k4": "a:b"}
    assert read_only == {"k2"}
    for bad in ("k5:", "k6::ro", ":team"):
        with pytest.raises(InputError, match="KEY:SCOPE:ro"):
            parse_api_keys([bad])


# --- 8. failed requests in the request log --------------------------------------------------------------------


def test_failed_requests_are_logged_without_breaking_the_eval_loop_or_history(settings, monkeypatch) -> None:
    with serving(settings) as client:
        assert client.post("/v1/verify", headers=ALPHA, json=VERIFY).status_code == 200
        failures = [
            (client.post("/v1/verify", headers=ALPHA, json={"answer": "x"}), 422, "invalid_request", "POST /v1/verify"),
            (client.get("/v1/requests/nope", headers=ALPHA), 404, "request_not_found", "GET /v1/requests/nope"),
            (client.post("/v1/verify", headers=ALPHA, content=b"x" * 60_000), 413, "payload_too_large",
             "POST /v1/verify"),
        ]
        runtime = client.app.state.runtime
        monkeypatch.setattr(runtime.verifier, "run", lambda *a, **k: 1 / 0)
        failures.append((client.post("/v1/verify", headers=ALPHA, json=VERIFY), 500, "internal_error",
                         "POST /v1/verify"))
        # Not logged: no scope may read a request with a wrong key.
        assert client.get("/v1/requests", headers={"X-API-Key": "wrong"}).status_code == 401

        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        errors = [item for item in logged if item["endpoint"] == "error"]
        assert len(logged) == 1 + len(failures) and len(errors) == len(failures)
        expected = {(status, code, route) for response, status, code, route in failures}
        assert all(response.status_code == status for response, status, _, _ in failures)
        assert {(e["status"], e["error"]["code"], e["http_route"]) for e in errors} == expected
        assert all(e["score"] is None for e in errors)
        # Refused for their input: logged without it, not queued. The check that failed after its answer was accepted
        # (500) is logged with it and queued for review (service/failures.py).
        assert {e["error"]["code"]: e["review"]["queued"] for e in errors} == {
            "invalid_request": False, "request_not_found": False, "payload_too_large": False, "internal_error": True}
        [crashed] = [e for e in errors if e["error"]["code"] == "internal_error"]
        assert crashed["answer"] == VERIFY["answer"]
        detail = client.get(f"/v1/requests/{errors[0]['request_id']}", headers=ALPHA)
        assert detail.status_code == 200 and detail.json()["response"] is None  # the page says: no report to show
        assert client.get("/v1/requests", headers=BETA).json()["requests"] == []  # in the caller's scope only

        monkeypatch.undo()
        dashboard = client.get("/v1/eval", headers=ALPHA)
        assert dashboard.status_code == 200
        assert dashboard.json()["meta"]["sample_size"] == 1  # the eval loop sees the one verified request
        assert client.get("/v1/eval/report", headers=ALPHA).status_code == 200
        assert client.get("/v1/review", headers=ALPHA).status_code == 200


def test_a_cascade_s_second_stage_is_held_to_the_pair_limit_too(settings, monkeypatch) -> None:
    """The lexical first stage counts words; the bundled second stage counts word pieces, so it splits a chunk of
    long figures and rare words into more windows, and an escalated answer is scored there: a request within the
    limit for stage 1 but not for stage 2 is refused before anything is scored."""
    text = " ".join(f"Pumpstation {i} runs at {i}.{i * 7919} litres per minute per hydroturbine." for i in range(120))
    body = {"answer": "Pumpstation 7 runs at 7 litres per minute.", "chunks": [{"id": "S1", "text": text}]}
    cascade = settings.check.model_copy(update={"scorer": "lexical", "cascade": "bundled"})
    with serving(settings, check=cascade) as client:
        verifier = client.app.state.runtime.verifier
        first = verifier.plan(body["answer"], [text])
        second = verifier.escalate_to.plan(body["answer"], [text], claims=first.claims)
    assert first.workload.pairs < second.workload.pairs
    with serving(settings, check=cascade, max_pairs=first.workload.pairs) as client:
        scored = _count_scoring_calls(client, monkeypatch)
        refused = client.post("/v1/verify", headers=ALPHA, json=body)
        assert refused.status_code == 413, refused.text
        error = refused.json()["error"]["details"]
        assert error == {"limit": "max_pairs", "max": first.workload.pairs, "got": second.workload.pairs}
        assert scored == []
    with serving(settings, check=cascade, max_pairs=second.workload.pairs) as client:
        assert client.post("/v1/verify", headers=ALPHA, json=body).status_code == 200


def test_a_cascade_s_second_stage_is_planned_once(settings, monkeypatch) -> None:
    """The service plans every stage to hold it to the limits; the check then runs those plans, so the second stage
    splits and windows the request once, not again when the answer reaches it (issue 36)."""
    body = {"answer": "The pump station was rebuilt quickly by volunteers.",
            "chunks": [{"id": "S1", "text": "The pump station runs at 3 bar and was rebuilt in spring by the city water "
                                            "board."}]}
    cascade = settings.check.model_copy(update={"scorer": "lexical", "cascade": "lexical"})
    with serving(settings, check=cascade) as client:
        second = client.app.state.runtime.verifier.escalate_to
        planned = []
        plan = second._plan_read  # every plan of a stage, whoever asks for it (plan, plan_cascade, run)
        monkeypatch.setattr(second, "_plan_read", lambda *args, **kwargs: planned.append(args) or plan(*args, **kwargs))
        response = client.post("/v1/verify", headers=ALPHA, json=body)
        assert response.status_code == 200, response.text
        assert len(planned) == 1
        # The answer did reach the second stage (the first escalates it), so the old code planned it twice.
        report = client.app.state.runtime.verifier.verify(body["answer"], [body["chunks"][0]["text"]])
    assert report.meta.cascade is not None and report.meta.cascade[0].route == "escalate"
    assert len(planned) == 2  # that direct verify planned the second stage itself: Plan.later is the service's


def test_health_names_the_form_the_model_runs_in(settings) -> None:
    with serving(settings, check=settings.check.model_copy(update={"scorer": "bundled:fp32"})) as client:
        assert client.get("/healthz").json()["model_form"] == "fp32"
    with serving(settings) as client:  # the lexical baseline has no forms
        assert client.get("/healthz").json()["model_form"] is None
