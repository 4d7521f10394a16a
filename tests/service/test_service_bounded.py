"""Issue 20: every request answered in bounded time. The plan the limits read is the plan that runs (issue 18
item 2), checks run on a bounded worker pool, headers have a deadline, and the model is warm before /healthz.
Correctness only: the timings are in bench/hostile.py and bench/growth.py."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import anyio
import pytest
from live_server import LiveServer
from service_common import ALPHA, KEYS

pytest.importorskip("fastapi")


CHUNK = {"id": "S1", "text": "The plan costs 19 dollars a month."}


@contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client




# --- the plan: split once, refused cheaply ------------------------------------------------------------------


def test_a_request_splits_its_answer_once(settings, counting_decomposer) -> None:
    with serving(settings) as client:
        counting = counting_decomposer  # like the LLM decomposer: no early stop, one call per split
        client.app.state.runtime.verifier.decomposer = counting
        answer = "The plan costs 19 dollars a month. Refunds take 14 days."
        for path in ("/v1/verify", "/v1/repair"):
            before = counting.calls
            response = client.post(path, headers=ALPHA, json={"answer": answer, "chunks": [CHUNK]})
            assert response.status_code == 200, response.text
            assert len(response.json()["report"]["claims"]) == 2
            # verify: once. repair: once for the check; its own re-verification of the repaired answer is more.
            assert counting.calls - before >= 1
            if path == "/v1/verify":
                assert counting.calls - before == 1


def test_a_long_answer_is_refused_by_its_claim_count_before_it_is_split_whole(settings) -> None:
    with serving(settings, max_claims=5, max_body_bytes=1_000_000) as client:
        answer = " ".join(f"Plan {i} costs {i} dollars." for i in range(2_000))
        refused = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": [CHUNK]})
        assert refused.status_code == 413
        error = refused.json()["error"]
        assert error["code"] == "too_much_work" and error["details"] == {"limit": "max_claims", "max": 5, "got": 6}
        assert "more than 5 claims" in error["message"]
        # "1. " * n is thousands of one-figure claims: refused the same way (issue 20 item 2).
        listy = client.post("/v1/verify", headers=ALPHA, json={"answer": "1. " * 30_000, "chunks": [CHUNK]})
        assert listy.status_code == 413 and listy.json()["error"]["details"]["limit"] == "max_claims"


@pytest.mark.parametrize("answer", [
    "\n" * 50_000 + "x is y.",
    " ".join(map(str, range(18_000)))[:99_000],
    "The plan costs " + "very " * 9_000 + "much money.",
    "a" * 90_000,
])
def test_pathological_answers_get_an_answer_not_a_500(settings, answer: str) -> None:
    with serving(settings, max_body_bytes=1_000_000) as client:
        response = client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": [CHUNK]})
        assert response.status_code in (200, 413), response.text


# --- the worker pool ------------------------------------------------------------------------------------------


def test_the_pool_runs_up_to_its_workers_and_refuses_past_max_waiting() -> None:
    from groundwire.service.errors import ServiceError
    from groundwire.service.workers import WorkerPool, default_workers

    assert default_workers() >= 2
    pool = WorkerPool(workers=2, max_waiting=1)
    release = threading.Event()
    running: list[int] = []
    outcomes: list[object] = []

    def work(number: int) -> int:
        running.append(number)
        assert release.wait(timeout=10)
        return number

    async def call(number: int) -> None:
        try:
            outcomes.append(await pool.run(None, work, number))
        except ServiceError as error:
            outcomes.append(error)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for number in range(3):  # two run, one waits
                group.start_soon(call, number)
            with anyio.fail_after(10):
                while len(running) < 2 or pool.waiting < 1:
                    await anyio.sleep(0.01)
            await call(3)  # a fourth finds both workers busy and one already waiting: refused at once
            assert len(running) == 2 and len(outcomes) == 1
            release.set()

    anyio.run(main)
    refused = [o for o in outcomes if isinstance(o, ServiceError)]
    assert sorted(o for o in outcomes if isinstance(o, int)) == [0, 1, 2]
    assert len(refused) == 1 and refused[0].status == 503 and refused[0].code == "busy"
    assert refused[0].details["limit"] == "max_waiting" and refused[0].headers == {"Retry-After": "1"}


def test_one_scope_takes_at_most_its_waiting_places_and_the_others_still_wait() -> None:
    """max_waiting 3, at most 2 of one scope: with the worker held, a third of scope A is refused although a place
    is free, a check of scope B takes that place, and once the queue is full anyone is refused (max_waiting)."""
    from groundwire.service.errors import ServiceError
    from groundwire.service.workers import WorkerPool

    pool = WorkerPool(workers=1, max_waiting=3, max_waiting_per_scope=2)
    release = threading.Event()
    started: list[str] = []
    outcomes: dict[str, object] = {}

    def work(name: str) -> str:
        started.append(name)
        assert release.wait(timeout=10)
        return name

    async def call(scope: str, name: str) -> None:
        try:
            outcomes[name] = await pool.run(scope, work, name)
        except ServiceError as error:
            outcomes[name] = error

    async def settle(count: int) -> None:
        with anyio.fail_after(10):
            while len(started) + pool.waiting + sum(isinstance(o, ServiceError) for o in outcomes.values()) < count:
                await anyio.sleep(0.01)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for number, (scope, name) in enumerate([("A", "a0"), ("A", "a1"), ("A", "a2"), ("A", "a3"),
                                                    ("B", "b0"), ("B", "b1")], start=1):
                group.start_soon(call, scope, name)
                await settle(number)  # in this order: each has run, waits or is refused before the next is sent
                assert pool.full(small=False, scope="A") == (number >= 3)
            assert pool.waiting == 3 and started == ["a0"]
            release.set()

    anyio.run(main)
    refused = {name: o for name, o in outcomes.items() if isinstance(o, ServiceError)}
    assert sorted(refused) == ["a3", "b1"]
    assert refused["a3"].details == {"limit": "max_waiting_per_scope", "max": 2, "got": 3}
    assert refused["b1"].details == {"limit": "max_waiting", "max": 3, "got": 4}
    assert {name: o for name, o in outcomes.items() if name not in refused} == {n: n for n in ("a0", "a1", "a2", "b0")}
    # Places are counted as they are taken and given back: the pool is empty again, for every scope.
    assert pool.waiting == 0 and not pool.full(small=False, scope="A")


def test_the_service_sizes_its_pool_from_the_settings(settings) -> None:
    from groundwire.foundation.errors import InputError
    from groundwire.service import ServiceSettings
    from groundwire.service.workers import default_workers

    with serving(settings, workers=3, max_waiting=7) as client:
        pool = client.app.state.pool
        assert (pool.workers, pool.max_waiting) == (3, 7)
        assert client.post("/v1/verify", headers=ALPHA, json={"answer": "The plan costs 19 dollars a month.",
                                                              "chunks": [CHUNK]}).status_code == 200
    with serving(settings) as client:
        assert client.app.state.pool.workers == default_workers()
    for bad in ({"workers": 0}, {"max_waiting": -1}, {"header_timeout_s": 0}):
        with pytest.raises(InputError):
            ServiceSettings(**bad)


# --- warm before ready ----------------------------------------------------------------------------------------


def test_the_model_runs_once_before_the_service_is_ready(settings, monkeypatch) -> None:
    from groundwire.core.verifier import Verifier

    runs: list[str] = []
    real = Verifier.run
    monkeypatch.setattr(Verifier, "run", lambda self, plan, **k: runs.append(plan.answer) or real(self, plan, **k))
    with serving(settings) as client:
        assert len(runs) == 1  # at start-up, before any request
        assert client.get("/healthz").json()["model_loads"] == 1
        assert client.post("/v1/verify", headers=ALPHA, json={"answer": "The plan costs 19 dollars a month.",
                                                              "chunks": [CHUNK]}).status_code == 200
        assert len(runs) == 2


# --- header timeout, against a live `groundwire serve` --------------------------------------------------------


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_headers_that_never_finish_get_408_and_a_closed_connection(tmp_path) -> None:
    with LiveServer(tmp_path, api_keys=KEYS, extra_args=("--header-timeout", "0.5")) as server:
        head = b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: "
        # Left open: answered and closed (the socket timeout bounds the test, it is not what is measured).
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head)
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "header_timeout"
        # Trickled a byte every 0.1 s: every byte is new data, and still the deadline holds.
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head)
            sock.settimeout(0.1)
            answered = b""
            for _ in range(100):  # at most ~10 s
                try:
                    sock.sendall(b"a")
                    answered = sock.recv(65536)
                    break  # the 408, or b"" for a close
                except TimeoutError:
                    continue
                except OSError:  # reset or broken pipe: closed
                    break
            else:
                pytest.fail("a trickling client kept its connection for 10 s")
        assert answered in (b"",) or answered.startswith(b"HTTP/1.1 408 ")
        # Nothing sent at all: closed too (uvicorn's keep-alive timer is not armed on a fresh connection).
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            assert _read_all(sock).startswith(b"HTTP/1.1 408 ")


def test_the_header_deadline_spares_whole_requests_and_applies_again_on_keep_alive(tmp_path) -> None:
    with LiveServer(tmp_path, api_keys=KEYS, extra_args=("--header-timeout", "0.5")) as server:
        body = json.dumps({"answer": "The plan costs 19 dollars a month.", "chunks": [CHUNK]}).encode()
        request = (b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-alpha\r\n"
                   b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            time.sleep(0.2)  # within the deadline
            sock.sendall(request)
            first = sock.recv(65536)
            assert first.startswith(b"HTTP/1.1 200 ")
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next request's headers stall
            rest = _read_all(sock)
        assert b"HTTP/1.1 408 " in first + rest
