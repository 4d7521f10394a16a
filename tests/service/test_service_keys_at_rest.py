"""Issue 47, item 2: no API key at rest, in any form.

A real `groundwire serve` on loopback is sent every configured key in every spelling a client may give it (as it
is, percent-encoded in upper or lower case hex or with `+` for a space, base64 and base64url, JSON-escaped) in
every place a request has (path, query, headers, body fields, a JSON field name, a document, feedback); then the
SQLite database, its WAL, the server's log (access log and the rest) and /metrics are searched for every spelling of
every key: none may be there. A canary text sent beside the keys must be there, so that the search can fail."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterator

import httpx
import pytest
from live_server import LiveServer

pytest.importorskip("fastapi")

KEYS = {
    "gw+k3y/w1th=signs==": "alpha",  # the characters percent-encoding changes
    "plain-key-0123456789": "beta",
    "has space+q/x=1\"\\z": "gamma",  # a space (`+` in a form), a quote and a backslash (JSON escapes them)
}
AUTH = {"X-API-Key": "plain-key-0123456789"}
CANARY = "canary-77311"


def spellings(key: str) -> dict[str, str]:
    """Every spelling of `key` the test sends and then searches for."""
    upper = urllib.parse.quote(key, safe="")
    b64 = base64.b64encode(key.encode()).decode()
    url64 = base64.urlsafe_b64encode(key.encode()).decode()
    return {
        "raw": key,
        "percent, upper hex": upper,
        "percent, lower hex": re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), upper),
        "percent, + for space": urllib.parse.quote_plus(key),
        "percent, / kept": urllib.parse.quote(key),
        "base64": b64,
        "base64, unpadded": b64.rstrip("="),
        "base64url": url64,
        "base64url, unpadded": url64.rstrip("="),
        "JSON-escaped": json.dumps(key)[1:-1],
        "JSON-escaped, \\/ and \\u": "".join(f"\\u{ord(c):04x}" if not c.isalnum() else c for c in key),
    }


def _json_with_raw(template: dict[str, object], spelled: str) -> bytes:
    """`template` as JSON text with its "@" string replaced by `spelled` written into the JSON text as it is, where
    that is a valid JSON string (so that a JSON-escaped spelling reaches the server as escapes), else encoded."""
    try:
        json.loads(f'"{spelled}"')
        literal = f'"{spelled}"'
    except ValueError:
        literal = json.dumps(spelled)
    return json.dumps(template).replace('"@"', literal).encode()


def _send_everywhere(client: httpx.Client, spelled: str, request_id: str) -> list[int]:
    """`spelled` in every place of a request; the statuses."""
    plain = json.dumps(spelled)  # the spelling as a JSON string value (decoded, it is `spelled` itself)
    quoted = urllib.parse.quote(spelled, safe="")
    json_body = {"Content-Type": "application/json", **AUTH}
    sent = [
        client.get(f"/v1/requests/{quoted}", headers=AUTH),  # the key in a path the routes read
        client.get(f"/v1/requests/{spelled}", headers=AUTH),  # as it is (a `/` in it makes another route)
        client.get(f"/v1/nowhere/{quoted}", headers=AUTH),  # a path no route has
        client.get(f"/v1/requests?limit=5&api_key={quoted}", headers=AUTH),
        client.get(f"/v1/requests?limit={quoted}", headers=AUTH),  # 422: a value the route reads
        client.get(f"/v1/requests?{quoted}", headers=AUTH),
        client.get("/v1/requests", headers={**AUTH, "X-Debug": spelled.encode("latin-1", "replace").decode()}),
        client.post("/v1/verify", headers=json_body, content=(
            f'{{"question": "Why {CANARY} " , "answer": "The pump runs at 40 litres. Token {plain[1:-1]}.", '
            f'"chunks": [{{"id": {plain}, "text": "The pump runs at 40 litres. {plain[1:-1]}"}}]}}').encode()),
        client.post("/v1/verify", headers=json_body, content=_json_with_raw(
            {"answer": "The pump runs at 40 litres.", "chunks": [{"id": "S1", "text": "@"}]}, spelled)),
        client.post("/v1/repair", headers=json_body, content=json.dumps(
            {"answer": f"The pump runs at 40 litres. {spelled} is the key.",
             "chunks": [{"id": "S1", "text": "The pump runs at 40 litres."}]}).encode()),
        client.post("/v1/verify", headers=json_body, content=json.dumps(
            {"answer": "x", "chunks": [{"id": "S1", "text": "x"}], spelled: 1}).encode()),  # a field name: 422
        client.post("/v1/verify", headers=json_body, content=json.dumps(
            {"answer": "x", "doc_ids": [spelled]}).encode()),  # 404 naming the ids
        client.post("/v1/verify", headers=json_body, content=b'{"answer": "' + spelled.encode() + b'", oops'),
        client.post("/v1/ingest", headers={**json_body, "Authorization": "Bearer gw+k3y/w1th=signs=="},
                    content=json.dumps({"documents": [{"doc_id": f"doc {CANARY}", "text": f"Key: {spelled}."}]})),
        client.post("/v1/feedback", headers=json_body, content=json.dumps({"request_id": spelled[:100]})),
        client.post("/v1/feedback", headers=json_body,
                    content=json.dumps({"request_id": request_id, "correction": f"{CANARY} {spelled}"})),
    ]
    return [response.status_code for response in sent]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, list[int], bytes]]:
    workdir = tmp_path_factory.mktemp("at_rest")
    live = LiveServer(workdir, api_keys=KEYS, extra_args=("--log-level", "info"))
    with live, httpx.Client(base_url=live.url, timeout=60) as client:
        first = client.post("/v1/verify", headers=AUTH, json={
            "answer": "The pump runs at 40 litres.", "chunks": [{"id": "S1", "text": "The pump runs at 40 litres."}]})
        assert first.status_code == 200, first.text
        statuses = []
        for key in KEYS:
            for spelled in spellings(key).values():
                statuses += _send_everywhere(client, spelled, first.json()["request_id"])
        metrics = client.get("/metrics").content
        listed = client.get("/v1/requests?limit=1000", headers=AUTH).content
        # While the server runs, the WAL holds what is not yet checkpointed into the database file.
        while_running = {path.name: path.read_bytes() for path in workdir.glob("groundwire.db*")}
        assert "groundwire.db-wal" in while_running
        yield live, statuses, metrics + listed + b"".join(while_running.values())


def _at_rest(live: LiveServer, extra: bytes) -> bytes:
    files = b"".join(path.read_bytes() for path in live.workdir.glob("groundwire.db*"))
    return files + live.log_path.read_bytes() + extra


def test_no_key_in_any_spelling_is_at_rest_after_it_was_sent_everywhere(
        served: tuple[LiveServer, list[int], bytes]) -> None:
    live, statuses, seen = served
    everything = _at_rest(live, seen)
    # The requests were answered (2xx and 4xx alike), and what they left is there to search: the canary, the error
    # rows (whose route once held the key), and access-log lines.
    assert statuses and all(status < 500 for status in statuses), statuses
    assert {200, 404, 422} <= set(statuses), sorted(set(statuses))
    assert CANARY.encode() in everything
    assert b"GET /v1/requests/[redacted]" in everything
    assert b'"GET /v1/requests/[redacted] HTTP/1.1" 404' in live.log_path.read_bytes()
    found = [(key, name) for key in KEYS for name, spelled in spellings(key).items()
             if spelled.encode() in everything]
    assert not found, found


def test_after_shutdown_the_database_holds_no_key_either(served: tuple[LiveServer, list[int], bytes]) -> None:
    live, _, _ = served
    live.stop()  # the WAL is checkpointed into the database file
    everything = _at_rest(live, b"")
    assert CANARY.encode() in everything
    found = [(key, name) for key in KEYS for name, spelled in spellings(key).items()
             if spelled.encode() in everything]
    assert not found, found
