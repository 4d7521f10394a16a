"""The service's answers to a fixed set of requests, recorded before the verify path was refactored (issue 57, item
2), replayed against a fresh app and compared byte for byte: status, content type and body.

Every route is asked (GET, POST and HEAD), errors included where a test can reach them deterministically (401, 403,
404, 405, 413, 415, 422, 429); the lexical scorer and fixed inputs make every report deterministic. What is not:

- ids the service draws at random (request ids: 32 hex digits) are replaced by `<hex-N>`, N in order of first
  appearance, so a feedback that names an earlier request's id still matches;
- times are replaced: the report's `timings` values, `latency_ms`, `seconds`, ISO timestamps, and days on their
  own (the eval report's `by_day` keys: recorded on one day, replayed on another);
- the HTML and static pages (/, /favicon.ico, /docs, the eval report) and /metrics are recorded by status and
  content type only (the eval report holds dates; /metrics holds durations), and /openapi.json by status only
  (its component names are the response models' names, which the refactor may rename; test_service_schema.py reads
  what it must describe).

A request names an earlier answer's request id as `{id:NAME}` (NAME: that request's name). Run this file as a script
to record the fixture again: `PYTHONPATH=src python tests/service/test_recorded_responses.py`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # service_common, when run as a script
from service_common import ALPHA, BETA, KEYS

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "recorded_responses.json"

GAMMA_RO = {"X-API-Key": "key-gamma"}
WRONG = {"Authorization": "Bearer not-a-key"}
POLICY = ("The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase. Support answers by "
          "email on weekdays.")
CHUNKS = [{"id": "S1", "text": POLICY, "doc_id": "policy", "page": 2, "score": 0.9},
          {"id": "S2", "text": "The Team plan costs $25 a month per seat.", "type": "table"}]
FAITHFUL = "The Pro plan costs $10 a month [S1]. Refunds are issued within 30 days of purchase."
FABRICATED = "The Pro plan costs $12 a month. Refunds are issued within 90 days of purchase."
UNSUPPORTED = "The Pro plan costs $10 a month. It includes a dedicated phone line for urgent support."
RECORD = [{"id": "R1", "text": json.dumps({"name": "Pump 7", "flow_lpm": 40, "site": "North"})}]

# (name, method, path, headers, json body or raw bytes or None, extra headers): the main sequence, one app.
MAIN: list[tuple[str, str, str, dict[str, str], Any]] = [
    ("health", "GET", "/healthz", {}, None),
    ("health_head", "HEAD", "/healthz", {}, None),
    ("page", "GET", "/", {}, None),
    ("favicon", "GET", "/favicon.ico", {}, None),
    ("docs", "GET", "/docs", {}, None),
    ("openapi", "GET", "/openapi.json", {}, None),
    ("missing_page", "GET", "/nothing-here", {}, None),
    ("missing_api", "GET", "/v1/nothing-here", ALPHA, None),
    ("verify_get", "GET", "/v1/verify", ALPHA, None),
    ("verify_no_key", "POST", "/v1/verify", {}, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("verify_wrong_key", "POST", "/v1/verify", WRONG, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("verify_faithful", "POST", "/v1/verify", ALPHA,
     {"answer": FAITHFUL, "chunks": CHUNKS, "question": "What does Pro cost?", "task": "qa"}),
    ("verify_fabricated", "POST", "/v1/verify", ALPHA, {"answer": FABRICATED, "chunks": CHUNKS}),
    ("verify_unsupported", "POST", "/v1/verify", BETA,
     {"answer": UNSUPPORTED, "chunks": CHUNKS, "require_citations": True}),
    ("verify_abstained", "POST", "/v1/verify", ALPHA, {"answer": "NOT_IN_CONTEXT", "chunks": CHUNKS}),
    ("verify_record", "POST", "/v1/verify", ALPHA,
     {"answer": "Pump 7 at the North site pumps 40 litres per minute.", "chunks": RECORD}),
    ("verify_dosage", "POST", "/v1/verify", ALPHA,
     {"answer": "The dosage is $10 a month.", "chunks": CHUNKS, "question": "What dosage?"}),
    ("verify_unicode", "POST", "/v1/verify", ALPHA,
     {"answer": "Le plan Pro coûte 10 € par mois — «vraiment».", "chunks": [{"id": "é1", "text":
                                                                               "Le plan Pro coûte 10 € par mois."}]}),
    ("verify_empty_answer", "POST", "/v1/verify", ALPHA, {"answer": "  ", "chunks": CHUNKS}),
    ("verify_extra_field", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS, "colour": "red"}),
    ("verify_both_contexts", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS, "doc_ids": ["x"]}),
    ("verify_duplicate_ids", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": [CHUNKS[0], CHUNKS[0]]}),
    ("verify_bad_id", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": [{"id": "S\u202e1", "text": "x"}]}),
    ("verify_not_json", "POST", "/v1/verify", ALPHA, b"{not json"),
    ("verify_judge", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS, "judge": True}),
    ("verify_too_many_chunks", "POST", "/v1/verify", ALPHA,
     {"answer": FAITHFUL, "chunks": [{"id": f"S{i}", "text": "Pumps run."} for i in range(5)]}),
    ("verify_too_many_claims", "POST", "/v1/verify", ALPHA,
     {"answer": " ".join(f"Pump {i} runs at {i} bar." for i in range(8)), "chunks": CHUNKS}),
    ("verify_too_many_pairs", "POST", "/v1/verify", ALPHA,
     {"answer": "Pump 1 runs. Pump 2 runs. Pump 3 runs.",
      "chunks": [{"id": "S1", "text": " ".join(f"Pump {i} runs at {i} bar in hall {i}." for i in range(400))}]}),
    ("verify_body_too_large", "POST", "/v1/verify", ALPHA, {"answer": "x" * 60_000, "chunks": CHUNKS}),
    ("verify_gzip", "POST", "/v1/verify", {**ALPHA, "Content-Encoding": "gzip"}, {"answer": FAITHFUL,
                                                                                "chunks": CHUNKS}),
    ("verify_unknown_docs", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "doc_ids": ["handbook"]}),
    ("ingest", "POST", "/v1/ingest", ALPHA,
     {"documents": [{"doc_id": "handbook", "title": "Handbook", "page": 1, "text": POLICY},
                    {"doc_id": "prices", "text": "The Team plan costs $25 a month per seat.", "type": "table"}]}),
    ("ingest_read_only", "POST", "/v1/ingest", GAMMA_RO, {"documents": [{"doc_id": "d", "text": "Pumps run."}]}),
    ("ingest_empty", "POST", "/v1/ingest", ALPHA, {"documents": []}),
    ("verify_docs", "POST", "/v1/verify", ALPHA, {"answer": FABRICATED, "doc_ids": ["handbook", "prices"]}),
    ("verify_docs_other_scope", "POST", "/v1/verify", BETA, {"answer": FAITHFUL, "doc_ids": ["handbook"]}),
    ("repair", "POST", "/v1/repair", ALPHA, {"answer": FABRICATED, "chunks": CHUNKS, "question": "Prices?"}),
    ("repair_faithful", "POST", "/v1/repair", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("repair_docs", "POST", "/v1/repair", ALPHA, {"answer": UNSUPPORTED, "doc_ids": ["handbook"]}),
    ("generate", "POST", "/v1/generate", ALPHA, {"question": "What does Pro cost?", "chunks": CHUNKS}),
    ("generate_no_question", "POST", "/v1/generate", ALPHA, {"chunks": CHUNKS}),
    ("feedback", "POST", "/v1/feedback", ALPHA,
     {"request_id": "{id:verify_fabricated}", "faithful": False, "unfaithful_claims": [0], "thumbs": "down"}),
    ("feedback_again", "POST", "/v1/feedback", ALPHA, {"request_id": "{id:verify_fabricated}", "faithful": True}),
    ("feedback_thumbs", "POST", "/v1/feedback", ALPHA,
     {"request_id": "{id:verify_faithful}", "thumbs": "up", "correction": "Fine."}),
    ("feedback_other_scope", "POST", "/v1/feedback", BETA, {"request_id": "{id:verify_faithful}", "thumbs": "up"}),
    ("feedback_unknown", "POST", "/v1/feedback", ALPHA, {"request_id": "nope", "thumbs": "up"}),
    ("feedback_nothing", "POST", "/v1/feedback", ALPHA, {"request_id": "{id:verify_faithful}"}),
    ("feedback_read_only", "POST", "/v1/feedback", GAMMA_RO, {"request_id": "x", "thumbs": "up"}),
    ("requests", "GET", "/v1/requests", ALPHA, None),
    ("requests_beta", "GET", "/v1/requests?limit=5", BETA, None),
    ("requests_head", "HEAD", "/v1/requests", ALPHA, None),
    ("requests_bad_limit", "GET", "/v1/requests?limit=0", ALPHA, None),
    ("request_verify", "GET", "/v1/requests/{id:verify_faithful}", ALPHA, None),
    ("request_fabricated", "GET", "/v1/requests/{id:verify_fabricated}", ALPHA, None),
    ("request_record", "GET", "/v1/requests/{id:verify_record}", ALPHA, None),
    ("request_repair", "GET", "/v1/requests/{id:repair}", ALPHA, None),
    ("request_docs", "GET", "/v1/requests/{id:verify_docs}", ALPHA, None),
    ("request_other_scope", "GET", "/v1/requests/{id:verify_faithful}", BETA, None),
    ("request_unknown", "GET", "/v1/requests/nope", ALPHA, None),
    ("review", "GET", "/v1/review", ALPHA, None),
    ("review_arrival", "GET", "/v1/review?order=arrival&limit=2", ALPHA, None),
    ("review_bad_order", "GET", "/v1/review?order=random", ALPHA, None),
    ("eval", "GET", "/v1/eval", ALPHA, None),
    ("eval_runs_body", "POST", "/v1/eval/runs", ALPHA, {"limit": 3}),
    ("eval_runs", "POST", "/v1/eval/runs", ALPHA, None),
    ("eval_runs_read_only", "POST", "/v1/eval/runs", GAMMA_RO, None),
    ("eval_report", "GET", "/v1/eval/report", ALPHA, None),
    ("profile", "GET", "/v1/profile", ALPHA, None),
    ("profile_rollback", "POST", "/v1/profile/rollback", ALPHA, {}),
    ("profile_rollback_extra", "POST", "/v1/profile/rollback", ALPHA, {"to": "v1", "why": "x"}),
    ("metrics", "GET", "/metrics", {}, None),
]

# A rate-limited service: the third request of a key within the minute is 429.
RATE_LIMITED = [
    ("first", "GET", "/v1/requests", ALPHA, None),
    ("second", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("third", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("other_key", "GET", "/v1/requests", BETA, None),
]

# A two-stage cascade (lexical, then lexical again): an answer the first stage escalates is checked by the second.
CASCADE = [
    ("escalated", "POST", "/v1/verify", ALPHA, {"answer": "The dosage is $10 a month.", "chunks": CHUNKS}),
    ("rejected", "POST", "/v1/verify", ALPHA, {"answer": UNSUPPORTED, "chunks": CHUNKS}),
    ("accepted", "POST", "/v1/verify", ALPHA, {"answer": FAITHFUL, "chunks": CHUNKS}),
    ("repaired", "POST", "/v1/repair", ALPHA, {"answer": "The dosage is $10 a month.", "chunks": CHUNKS}),
    ("logged", "GET", "/v1/requests/{id:escalated}", ALPHA, None),
]

BODY_NOT_RECORDED = ("/", "/favicon.ico", "/docs", "/v1/eval/report", "/metrics")
"""Paths whose body is not compared (see the module docstring); /openapi.json's content type is not either."""


def sections(tmp: Path) -> Iterator[tuple[str, Any, list[tuple[str, str, str, dict[str, str], Any]]]]:
    """(name, settings, requests) of each recorded section, each on a fresh database under `tmp`."""
    from groundwire.pipeline import CheckSettings
    from groundwire.service import ServiceSettings

    base = ServiceSettings(
        db_url=f"sqlite:///{tmp / 'main.db'}", api_keys=dict(KEYS), read_only_keys=frozenset({"key-gamma"}),
        check=CheckSettings(scorer="lexical"), max_body_bytes=50_000, max_chunks=4, max_claims=6, max_pairs=60,
        review_threshold=0.5, review_audit_share=0.0, high_risk_patterns=(r"\bdosage\b",), release="test-release")
    yield "main", base, MAIN
    yield "rate_limited", replace(base, db_url=f"sqlite:///{tmp / 'rate.db'}", rate_limit="2/minute"), RATE_LIMITED
    cascade = CheckSettings(scorer="lexical", cascade="lexical")
    yield "cascade", replace(base, db_url=f"sqlite:///{tmp / 'cascade.db'}", check=cascade), CASCADE


def replay(tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """Every section's requests sent in order to a fresh app; each answer as recorded (normalised)."""
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    recorded: dict[str, list[dict[str, Any]]] = {}
    for section, settings, requests in sections(tmp):
        ids: dict[str, str] = {}  # request name -> the request id its answer gave
        out: list[dict[str, Any]] = []
        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            for name, method, path, headers, body in requests:
                path = _with_ids(path, ids)
                sent: dict[str, Any] = {}
                if isinstance(body, bytes):
                    sent["content"] = body
                elif body is not None:
                    sent["content"] = _with_ids(json.dumps(body), ids).encode()
                    sent["headers"] = {"Content-Type": "application/json", **headers}
                response = client.request(method, path, headers=sent.pop("headers", headers), **sent)
                if response.headers.get("content-type", "").startswith("application/json") and response.content:
                    answered = json.loads(response.content)
                    if isinstance(answered, dict) and isinstance(answered.get("request_id"), str):
                        ids[name] = answered["request_id"]
                out.append(_entry(name, method, path, response))
        recorded[section] = out
    names = iter(range(1, 1_000_000))
    hexes: dict[str, str] = {}
    for entries in recorded.values():
        for entry in entries:
            for key in ("request", "path", "body"):
                if isinstance(entry.get(key), str):
                    entry[key] = _HEX.sub(lambda m: hexes.setdefault(m.group(), f"<hex-{next(names)}>"), entry[key])
    return recorded


_HEX = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
_TIMINGS = re.compile(r'"timings":\{[^{}]*\}')
_NUMBER = re.compile(r":-?[0-9][0-9.eE+-]*")
_TIMED = re.compile(r'"(latency_ms|seconds|duration_s|elapsed_s)":-?[0-9][0-9.eE+-]*')
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)?")
_ISO_DAY = re.compile(r'"\d{4}-\d{2}-\d{2}"')
"""A day on its own, as the eval report keys its figures by day: the day the test runs on."""


def _with_ids(text: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{id:(\w+)\}", lambda m: ids[m.group(1)], text)


def _entry(name: str, method: str, path: str, response: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "request": f"{method} {path}", "path": path,
                             "status": response.status_code}
    bare = path.split("?", 1)[0]
    if bare == "/openapi.json":
        return entry
    entry["content_type"] = response.headers.get("content-type")
    if bare in BODY_NOT_RECORDED:
        return entry
    entry["body"] = normalised(response.content.decode("utf-8"))
    return entry


def normalised(body: str) -> str:
    """The body with its times replaced (the module docstring says which); ids are replaced by `replay`."""
    body = _TIMINGS.sub(lambda m: _NUMBER.sub(":0", m.group()), body)
    body = _TIMED.sub(lambda m: f'"{m.group(1)}":0', body)
    return _ISO_DAY.sub('"<day>"', _ISO_TIME.sub("<time>", body))


def test_the_service_answers_the_recorded_requests_as_it_did(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    got = replay(tmp_path)
    assert list(got) == list(expected)
    for section, entries in expected.items():
        assert [e["name"] for e in got[section]] == [e["name"] for e in entries], section
        for was, now in zip(entries, got[section], strict=True):
            assert now == was, f"{section}/{was['name']} ({was['request']}) answers otherwise than recorded"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        recorded = replay(Path(folder))
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {sum(map(len, recorded.values()))} answers in {FIXTURE}")
