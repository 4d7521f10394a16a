"""Issue 38, the service: what it takes in. API keys from a file or the environment rather than the command line,
no key in the access log, no Content-Encoding it does not decode, a bounded request head, and the eval loop's
routes on the worker pool, whose 503 `busy` refusals cost no log row and no thread."""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from live_server import LiveServer
from service_common import ALPHA, KEYS

pytest.importorskip("fastapi")

CHUNK = {"id": "S1", "text": "The pump runs at 40 litres per minute."}
VERIFY = {"answer": "The pump runs at 40 litres per minute.", "chunks": [CHUNK]}
EVAL_ROUTES = (("GET", "/v1/eval"), ("POST", "/v1/eval/runs"), ("GET", "/v1/eval/report"))


@contextlib.contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client


# --- 1. API keys from a file or the environment ----------------------------------------------------------------


def _serve_app(args: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[int, Any]:
    """Run `groundwire serve ARGS` up to uvicorn.run, and return its exit status and the app it would serve."""
    import uvicorn

    from groundwire.cli.main import run_cli

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    monkeypatch.setenv("GROUNDWIRE_CONFIG", "")
    monkeypatch.chdir(tmp_path)
    status = run_cli(["serve", "--db", str(tmp_path / "x.db"), "--scorer", "lexical", *args])
    return status, served[0] if served else None


def test_keys_come_from_a_key_file_and_the_environment_as_well_as_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from fastapi.testclient import TestClient

    key_file = tmp_path / "keys.txt"
    key_file.write_text("\ufeff# team alpha\nfile-key-rw:alpha\n\n  file-key-ro:alpha:ro  \n", encoding="utf-8")
    key_file.chmod(0o600)
    monkeypatch.setenv("GROUNDWIRE_API_KEYS", "env-key:gamma")
    status, app = _serve_app(["--api-key-file", str(key_file)], monkeypatch, tmp_path)
    assert status == 0, capsys.readouterr().err
    settings = app.state.settings
    assert settings.api_keys == {"file-key-rw": "alpha", "file-key-ro": "alpha", "env-key": "gamma"}
    assert settings.read_only_keys == {"file-key-ro"}
    assert "warning" not in capsys.readouterr().err  # a mode-600 file is not warned about
    with TestClient(app) as client:
        assert client.get("/v1/requests", headers={"X-API-Key": "file-key-rw"}).status_code == 200
        assert client.post("/v1/ingest", headers={"X-API-Key": "file-key-ro"},
                           json={"documents": [{"doc_id": "d", "text": "Some text."}]}).status_code == 403
        assert client.get("/v1/requests", headers={"X-API-Key": "env-key"}).status_code == 200
    # --api-key still works, beside the file; a key given twice, in either, is refused.
    monkeypatch.delenv("GROUNDWIRE_API_KEYS")
    status, app = _serve_app(["--api-key-file", str(key_file), "--api-key", "cli-key:beta"], monkeypatch, tmp_path)
    assert status == 0 and set(app.state.settings.api_keys) == {"file-key-rw", "file-key-ro", "cli-key"}
    status, _ = _serve_app(["--api-key-file", str(key_file), "--api-key", "file-key-rw:beta"], monkeypatch, tmp_path)
    assert status == 2 and "given twice" in capsys.readouterr().err


def test_a_key_file_without_keys_is_refused_and_one_open_to_others_is_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GROUNDWIRE_API_KEYS", raising=False)
    empty = tmp_path / "empty.txt"
    empty.write_text("# no keys yet\n\n", encoding="utf-8")
    status, app = _serve_app(["--api-key-file", str(empty)], monkeypatch, tmp_path)
    # Served without keys, it would be open to anyone: refused, before anything is opened.
    assert status == 2 and app is None and not (tmp_path / "x.db").exists()
    assert "no API keys" in capsys.readouterr().err
    status, _ = _serve_app(["--api-key-file", str(tmp_path / "missing.txt")], monkeypatch, tmp_path)
    assert status == 2 and "file_not_found" in capsys.readouterr().err
    shared = tmp_path / "shared.txt"
    shared.write_text("file-key:alpha\n", encoding="utf-8")
    shared.chmod(0o644)
    status, app = _serve_app(["--api-key-file", str(shared)], monkeypatch, tmp_path)
    assert status == 0 and app.state.settings.api_keys == {"file-key": "alpha"}
    err = capsys.readouterr().err
    assert "open to other users (mode 644)" in err and "file-key" not in err


# --- 2 and 4: against a live `groundwire serve`, with its access log on -----------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("intake"), api_keys=KEYS, extra_args=("--log-level", "info")) as live:
        yield live


def test_the_access_log_never_shows_a_key_sent_in_the_url(server: LiveServer) -> None:
    sent = [
        httpx.get(f"{server.url}/v1/requests?api_key=key-alpha&limit=5", headers=ALPHA),
        httpx.get(f"{server.url}/healthz?token=sk-notakey123456&api%5Fkey=also-secret&bare-secret"),
        httpx.get(f"{server.url}/v1/requests/key-beta", headers=ALPHA),  # a key where an id goes
    ]
    assert [response.status_code for response in sent] == [200, 200, 404]
    log = server.log_path.read_text(encoding="utf-8", errors="replace")
    # The lines are there, with what the service reads (limit) and without what it does not.
    assert '"GET /v1/requests?api_key=[redacted]&limit=5 HTTP/1.1" 200' in log, log
    assert '"GET /healthz?token=[redacted]&api%5Fkey=[redacted]&[redacted] HTTP/1.1" 200' in log, log
    assert '"GET /v1/requests/[redacted] HTTP/1.1" 404' in log, log
    for secret in ("key-alpha", "key-beta", "sk-notakey123456", "also-secret", "bare-secret"):
        assert secret not in log, secret


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _error_code(response: bytes) -> str:
    return str(json.loads(response.split(b"\r\n\r\n", 1)[1])["error"]["code"])


def test_an_oversized_request_head_gets_431_and_a_closed_connection(server: LiveServer) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    # Whole, in one send: h11 alone takes it (it bounds only a head that is still arriving).
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head + b"X-Big: " + b"a" * 100_000 + b"\r\n\r\n")
        answer = _read_all(sock)  # returns once the server closes: the socket timeout would raise
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert _error_code(answer) == "headers_too_large"
    # In pieces, never finished: the same 431, not h11's plain-text 400.
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head + b"X-Big: " + b"a" * 10_000)
        sock.sendall(b"a" * 10_000)
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431 ") and _error_code(answer) == "headers_too_large", answer[:200]
    # A head within the default limit (16 KiB) is served, and the server goes on serving.
    assert httpx.get(f"{server.url}/healthz", headers={"X-Big": "a" * 12_000}).status_code == 200
    assert httpx.get(f"{server.url}/v1/requests", headers=ALPHA).status_code == 200


# --- 3. Content-Encoding ------------------------------------------------------------------------------------------


def test_a_body_marked_gzip_is_refused_with_415_whether_or_not_it_is_gzip(client) -> None:
    plain = json.dumps(VERIFY).encode()
    sent = {
        "gzip, not compressed": (plain, "gzip"),
        "gzip, compressed": (gzip.compress(plain), "gzip"),
        "not gzip at all": (b"\x1f\x8b not really", "gzip"),
        "deflate": (plain, "deflate"),
        "two codings": (plain, "identity, GZIP"),
    }
    for what, (body, coding) in sent.items():
        response = client.post("/v1/verify", content=body,
                               headers={**ALPHA, "Content-Type": "application/json", "Content-Encoding": coding})
        assert response.status_code == 415, (what, response.text)
        error = response.json()["error"]
        assert error["code"] == "unsupported_content_encoding" and error["status"] == 415, what
        assert error["details"]["accepted"] == ["identity"], what
        assert response.headers["accept-encoding"] == "identity", what
    identity = client.post("/v1/verify", content=plain,
                           headers={**ALPHA, "Content-Type": "application/json", "Content-Encoding": "identity"})
    assert identity.status_code == 200, identity.text
    # Nothing marked gzip was checked: the one verify row is the identity one; the refusals are error rows.
    logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    assert [row["endpoint"] for row in logged].count("verify") == 1
    assert sum(1 for row in logged if row.get("status") == 415) == len(sent)


# --- 5 and 6. the worker pool: the eval loop's routes, and what a busy refusal costs ---------------------------


HOLD_S = 120.0
"""The most a held verify waits to be let go; more than any wait of the tests below, so it never lets go early."""


@contextlib.contextmanager
def pool_held(client: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """One verify holding the pool's only worker until the block ends; yields the verify's status once done."""
    from groundwire.service import actions

    entered, release = threading.Event(), threading.Event()
    real = actions.verify

    def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        assert release.wait(timeout=HOLD_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(actions, "verify", held)
    statuses: list[int] = []
    holder = threading.Thread(target=lambda: statuses.append(client.post("/v1/verify", headers=ALPHA,
                                                                         json=VERIFY).status_code))
    holder.start()
    try:
        assert entered.wait(timeout=30), "the holding verify never started"
        yield statuses
    finally:
        release.set()
        holder.join(timeout=HOLD_S)
        monkeypatch.setattr(actions, "verify", real)


def _assert_busy(response: Any) -> None:
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "busy" and error["details"]["limit"] == "max_waiting"
    assert response.headers["retry-after"] == "1"


def test_the_eval_loop_s_routes_run_on_the_worker_pool(settings, monkeypatch) -> None:
    with serving(settings, workers=1, max_waiting=0) as client:
        with pool_held(client, monkeypatch) as statuses:
            for method, path in EVAL_ROUTES:  # the pool is full: refused, not run beside it
                _assert_busy(client.request(method, path, headers=ALPHA))
        assert statuses == [200]
        for method, path in EVAL_ROUTES:  # the pool is free again: served
            assert client.request(method, path, headers=ALPHA).status_code == 200, path


def test_a_busy_refusal_writes_no_log_row(settings, monkeypatch) -> None:
    # No reserved worker: VERIFY is small, and could run there (test_service_lanes.py tests the reserved lane).
    with serving(settings, workers=1, max_waiting=0, reserved_workers=0) as client:
        with pool_held(client, monkeypatch) as statuses:
            for path in ("/v1/verify", "/v1/repair"):
                _assert_busy(client.post(path, headers=ALPHA, json=VERIFY))
        assert statuses == [200]
        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        assert [row["endpoint"] for row in logged] == ["verify"]  # the held verify; no error rows


def test_a_busy_refusal_needs_no_thread(settings, monkeypatch) -> None:
    """With every thread of anyio's pool taken (by sync routes, say), a request the worker pool refuses is still
    answered: nothing on its way to the refusal waits for a thread."""
    with serving(settings, workers=1, max_waiting=0, reserved_workers=0) as client, pool_held(client, monkeypatch):
        limiter = client.portal.call(anyio.to_thread.current_default_thread_limiter)
        borrowers = [object() for _ in range(int(limiter.available_tokens))]
        client.portal.call(_borrow, limiter, borrowers)
        answered: list[Any] = []
        refused = threading.Thread(target=lambda: answered.append(client.post("/v1/verify", headers=ALPHA,
                                                                              json=VERIFY)))
        try:
            refused.start()
            refused.join(timeout=30)  # bounds a hang; nothing is timed
            assert answered, "a request the pool refuses waited for a thread"
        finally:
            client.portal.call(_give_back, limiter, borrowers)
            refused.join(timeout=30)
        _assert_busy(answered[0])


def _borrow(limiter: anyio.CapacityLimiter, borrowers: list[object]) -> None:
    for borrower in borrowers:
        limiter.acquire_on_behalf_of_nowait(borrower)


def _give_back(limiter: anyio.CapacityLimiter, borrowers: list[object]) -> None:
    for borrower in borrowers:
        limiter.release_on_behalf_of(borrower)
