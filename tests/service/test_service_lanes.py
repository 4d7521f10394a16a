"""Issue 38, the service under load: a small check is never stuck behind large ones (the reserved lane), a worker
takes the next waiting check without the event loop, and a refusal costs as little as it can (before the body is
parsed; a 413 for too much work without waiting for a worker). Behaviour only: bench/hostile.py and
bench/service_load.py have the timings."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from live_server import live
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")

HOLD_S = 120.0
"""The most a held check waits to be let go: more than any wait below, so it never lets go early."""
WAIT_S = 30.0
"""Bounds every wait for something to happen (a hang fails the test; nothing is timed)."""
CHUNK = {"id": "S1", "text": "The plan costs 19 dollars a month. Refunds take 14 days. Support answers in 2 hours."}
TINY = {"answer": "The plan costs 19 dollars a month.", "chunks": [CHUNK]}  # 1 claim x 1 window: 1 pair
LARGE = {"answer": "The plan costs 19 dollars a month. Refunds take 14 days. Support answers in 2 hours.",
         "chunks": [CHUNK]}  # 3 pairs: over small_pairs=2 below, though short enough to look small


@contextlib.contextmanager
def serving(settings: Any, **changes: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    with TestClient(create_app(replace(settings, **changes)), raise_server_exceptions=False) as client:
        yield client


class Held:
    """The scoring of every check over small_pairs (`every`: of every check) blocks until `release` is set;
    `entered` counts them."""

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch, *, every: bool = False) -> None:
        runtime = client.app.state.runtime
        self.release = threading.Event()
        self.entered: list[int] = []
        self.changed = threading.Condition()
        real = runtime.verifier.run
        over = -1 if every else runtime.settings.small_pairs

        def run(plan: Any, *args: Any, **kwargs: Any) -> Any:
            if plan.workload.pairs > over:
                with self.changed:
                    self.entered.append(plan.workload.pairs)
                    self.changed.notify_all()
                assert self.release.wait(timeout=HOLD_S)
            return real(plan, *args, **kwargs)

        monkeypatch.setattr(runtime.verifier, "run", run)

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.entered) >= count, timeout=WAIT_S), self.entered


def in_thread(call: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    return thread, out


def until(condition: Any) -> None:
    for _ in range(int(WAIT_S / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    pytest.fail("the condition never came true")


# --- the reserved lane ------------------------------------------------------------------------------------------


def test_a_small_check_runs_beside_two_held_large_ones_and_a_large_one_never_takes_its_lane(settings,
                                                                                           monkeypatch) -> None:
    with serving(settings, workers=2, max_waiting=1, reserved_workers=1, small_pairs=2) as client:
        pool = client.app.state.pool
        held = Held(client, monkeypatch)
        post = lambda body: lambda: client.post("/v1/verify", headers=ALPHA, json=body)  # noqa: E731
        large = [in_thread(post(LARGE)) for _ in range(2)]
        third, third_answer = large[0]  # replaced below; joined in any case
        try:
            held.wait_for(2)
            assert pool.busy("main") == 2
            # Both workers are held by large checks: the tiny one still runs, on the reserved worker.
            tiny, answered = in_thread(post(TINY))
            tiny.join(timeout=WAIT_S)
            assert answered and answered[0].status_code == 200, "a tiny check waited for a large one"
            # A large check looks small (a short body) and is planned on the reserved worker; its plan is over
            # small_pairs, so it goes back to wait for a main worker, unscored, and leaves the reserved one free.
            third, third_answer = in_thread(post(LARGE))
            until(lambda: pool.waiting == 1 and pool.busy("reserved") == 0)
            assert held.entered == [3, 3] and not third_answer
            # One more large check finds the main workers busy and max_waiting reached: refused at once.
            refused = client.post("/v1/verify", headers=ALPHA, json=LARGE)
            assert refused.status_code == 503 and refused.json()["error"]["code"] == "busy"
            # A tiny one still runs meanwhile.
            assert client.post("/v1/verify", headers=ALPHA, json=TINY).status_code == 200
        finally:
            held.release.set()
            for thread, _ in [*large, (third, third_answer)]:
                thread.join(timeout=WAIT_S)
        assert [out[0].status_code for _, out in [*large, (third, third_answer)]] == [200, 200, 200]
        assert held.entered == [3, 3, 3]  # the third was scored once, on a main worker


def test_behind_small_checks_only_a_small_one_waits_its_turn(settings, monkeypatch) -> None:
    """The reserved lane is for going around large checks: a load of small ones runs `workers` at once, one per
    core, not `workers` + `reserved_workers`."""
    with serving(settings, workers=1, max_waiting=1, reserved_workers=1, small_pairs=5) as client:
        pool = client.app.state.pool
        held = Held(client, monkeypatch, every=True)
        first, first_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=TINY))
        second, second_out = first, first_out  # replaced below; joined in any case
        try:
            held.wait_for(1)
            second, second_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=LARGE))
            until(lambda: pool.waiting == 1)
            assert pool.busy("reserved") == 0 and held.entered == [1]
        finally:
            held.release.set()
            first.join(timeout=WAIT_S)
            second.join(timeout=WAIT_S)
        assert [first_out[0].status_code, second_out[0].status_code] == [200, 200]
        assert held.entered == [1, 3]


def test_a_check_over_small_chars_by_its_documents_is_moved_to_a_main_worker(settings, monkeypatch) -> None:
    """A request by doc_ids looks small by its body; its documents are read on the worker, and their length sends
    it to a main worker before it is planned."""
    with serving(settings, workers=1, max_waiting=1, reserved_workers=1, small_pairs=2, small_chars=500) as client:
        pool = client.app.state.pool
        text = "The plan costs 19 dollars a month. " * 40  # 1,400 characters: over small_chars
        assert client.post("/v1/ingest", headers=ALPHA, json={"documents": [{"doc_id": "d1", "text": text}]}
                           ).status_code == 200
        held = Held(client, monkeypatch)
        planned: list[str] = []
        real_plan = client.app.state.runtime.plan
        monkeypatch.setattr(client.app.state.runtime, "plan", lambda *a, **k: planned.append("plan") or
                            real_plan(*a, **k))
        holder, holder_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=LARGE))
        try:
            held.wait_for(1)
            planned.clear()
            by_doc, by_doc_out = in_thread(lambda: client.post(
                "/v1/verify", headers=ALPHA, json={"answer": TINY["answer"], "doc_ids": ["d1"]}))
            until(lambda: pool.waiting == 1 and pool.busy("reserved") == 0)
            assert planned == [] and not by_doc_out  # not planned on the reserved worker
        finally:
            held.release.set()
            holder.join(timeout=WAIT_S)
            by_doc.join(timeout=WAIT_S)
        assert holder_out[0].status_code == 200 and by_doc_out[0].status_code == 200
        assert planned == ["plan"]


def test_a_repair_whose_own_checks_add_up_past_small_pairs_is_moved_to_a_main_worker(settings,
                                                                                      monkeypatch) -> None:
    """/v1/repair checks each part of a claim it splits: each part's check is small, but together they are not, so
    the repair leaves the reserved worker (unanswered, nothing logged) and runs again on a main one."""
    parts = "The pump runs at 3 bar and " + " and ".join(f"costs {i} dollars" for i in range(5)) + "."  # 6 parts
    with serving(settings, workers=1, max_waiting=1, reserved_workers=1, small_pairs=3) as client:
        pool = client.app.state.pool
        held = Held(client, monkeypatch)  # holds the checks over 3 pairs
        four = {"answer": LARGE["answer"] + " The plan has 4 seats.", "chunks": [CHUNK]}  # 4 claims x 1 window
        holder, holder_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=four))
        repair, repair_out = holder, holder_out  # replaced below; joined in any case
        try:
            held.wait_for(1)
            repair, repair_out = in_thread(lambda: client.post("/v1/repair", headers=ALPHA,
                                                               json={"answer": parts, "chunks": [CHUNK]}))
            # Its check (1 pair) and two parts (1 pair each) fit in small_pairs; the third part does not.
            until(lambda: pool.waiting == 1 and pool.busy("reserved") == 0)
            assert not repair_out and held.entered == [4]
            assert client.get("/v1/requests", headers=ALPHA).json()["requests"] == []  # nothing logged yet
        finally:
            held.release.set()
            holder.join(timeout=WAIT_S)
            repair.join(timeout=WAIT_S)
        assert holder_out[0].status_code == 200 and repair_out[0].status_code == 200, repair_out[0].text
        assert len(repair_out[0].json()["repaired"]["actions"]) == 1


def test_what_may_be_small_is_decided_from_the_body(settings) -> None:
    from groundwire.foundation.errors import InputError
    from groundwire.service import ServiceSettings, models

    with serving(settings, small_chars=150) as client:  # TINY: 119 characters, LARGE: 170
        runtime = client.app.state.runtime
        def looks_small(body: Any, **options: Any) -> bool:
            return bool(runtime.looks_small(body, runtime.sent(body), **options))

        tiny = models.VerifyRequest.model_validate(TINY)
        assert looks_small(tiny)
        assert not looks_small(tiny.model_copy(update={"judge": True}))  # the LLM judge: not CPU-bound
        assert not looks_small(tiny, calls_llm=True)  # repair's edits with --llm
        assert not looks_small(models.VerifyRequest.model_validate(LARGE))  # over small_chars
        assert looks_small(models.VerifyRequest.model_validate({"answer": "x is y.", "doc_ids": ["d"]}))
        assert client.app.state.pool.reserved == 1  # the default: one
    with serving(settings, reserved_workers=0) as client:
        assert client.app.state.pool.reserved == 0
    for bad in ({"reserved_workers": -1}, {"small_pairs": -1}, {"small_chars": -1}):
        with pytest.raises(InputError, match="at least 0"):
            ServiceSettings(**bad)


# --- the hand-off -----------------------------------------------------------------------------------------------


def test_a_worker_takes_the_next_waiting_check_while_the_event_loop_is_blocked() -> None:
    """Under overload the event loop is busy answering refusals; the workers must not wait for it between checks."""
    from groundwire.service.workers import WorkerPool

    pool = WorkerPool(workers=1, max_waiting=1)
    first_release, second_started = threading.Event(), threading.Event()
    outcomes: list[object] = []

    async def call(function: Any) -> None:
        outcomes.append(await pool.run(None, function))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(call, lambda: first_release.wait(timeout=HOLD_S))
            group.start_soon(call, second_started.set)
            with anyio.fail_after(WAIT_S):
                while pool.waiting < 1:
                    await anyio.sleep(0.01)
            # Let the first check finish, then block the event loop until the second starts: only a worker that
            # takes it by itself can start it.
            first_release.set()
            assert second_started.wait(timeout=WAIT_S), "the next check waited for the event loop"

    try:
        anyio.run(main)
    finally:
        first_release.set()
        pool.close()
    assert sorted(map(repr, outcomes)) == ["None", "True"]


# --- what a refusal costs ---------------------------------------------------------------------------------------


def _request(body: bytes, key: bytes = b"key-alpha") -> bytes:
    return (b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + key + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def _response(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    """One response read off the socket (bounded by the socket's timeout; a closed connection fails the test)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += _received(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += _received(sock)
    return int(head.split(b" ")[1]), json.loads(body)


def _received(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    assert data, "the server closed the connection"
    return data


def test_a_busy_refusal_comes_before_the_body_is_parsed_and_keeps_the_connection(settings, monkeypatch) -> None:
    with serving(settings, workers=1, max_waiting=0, reserved_workers=0, small_pairs=0) as client:
        held = Held(client, monkeypatch)
        holder, holder_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=TINY))
        try:
            held.wait_for(1)
            with live(client) as port, socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as sock:
                # Not parsed: a body that is not JSON is refused as busy, not as malformed.
                sock.sendall(_request(b"{not json"))
                status, body = _response(sock)
                assert (status, body["error"]["code"]) == (503, "busy")
                # The body was read: the connection still works, for the next refusal...
                sock.sendall(_request(json.dumps(TINY).encode()))
                assert _response(sock)[0] == 503
                # ...a wrong key is still answered 401 by the route...
                sock.sendall(_request(json.dumps(TINY).encode(), key=b"nope"))
                assert _response(sock)[0] == 401
                # ...and, once the worker is free, a check.
                held.release.set()
                holder.join(timeout=WAIT_S)
                sock.sendall(_request(json.dumps(TINY).encode()))
                assert _response(sock)[0] == 200
        finally:
            held.release.set()
            holder.join(timeout=WAIT_S)
        assert holder_out[0].status_code == 200
        logged = client.get("/v1/requests", headers=ALPHA).json()["requests"]
        assert sorted(row["endpoint"] for row in logged) == ["verify", "verify"]  # no row for the refusals


def test_refusals_are_paced_in_order_and_none_waits_past_its_retry_after() -> None:
    from groundwire.service.workers import RefusalPace

    pace = RefusalPace(10.0, max_wait_s=0.35)
    # Four decided at once are sent a tenth of a second apart, in the order they were decided...
    assert [pace.wait(100.0) for _ in range(4)] == pytest.approx([0.0, 0.1, 0.2, 0.3])
    # ...a fifth, whose turn (0.4 s) is past the longest wait, is sent at that wait, outside the pace...
    assert pace.wait(100.0) == pytest.approx(0.35)
    # ...so the next still takes the turn after the fourth (100.4), and the one after it (100.5) is outside again.
    assert pace.wait(100.1) == pytest.approx(0.3)
    assert pace.wait(100.1) == pytest.approx(0.35)
    # Once the pace has caught up, a refusal is sent at once.
    assert pace.wait(101.0) == 0.0
    assert pace.wait(101.0) == pytest.approx(0.1)
    unpaced = RefusalPace(0.0)
    assert [unpaced.wait(5.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        RefusalPace(-1.0)


def test_busy_refusals_sent_together_are_paced_though_no_worker_frees(settings, monkeypatch) -> None:
    """Refusals decided together go out at `refusal_rate` a second: the last of five, at 20 a second, no sooner than
    0.2 s after the first was sent, while the one worker stayed held the whole time. (A lower bound: a slow machine
    only makes it later.)"""
    from groundwire.foundation.errors import InputError

    rate, count = 20.0, 5
    with serving(settings, workers=1, max_waiting=0, reserved_workers=0, small_pairs=0, refusal_rate=rate) as client:
        held = Held(client, monkeypatch)
        holder, holder_out = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=TINY))
        try:
            held.wait_for(1)
            with live(client) as port, contextlib.ExitStack() as stack:
                sockets = [stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=WAIT_S))
                           for _ in range(count)]
                started = time.monotonic()
                for sock in sockets:
                    sock.sendall(_request(json.dumps(TINY).encode()))
                answers = [_response(sock) for sock in sockets]
                elapsed = time.monotonic() - started
                assert not held.release.is_set()  # no worker was free while they were refused
        finally:
            held.release.set()
            holder.join(timeout=WAIT_S)
        assert [(status, body["error"]["code"]) for status, body in answers] == [(503, "busy")] * count
        assert elapsed >= (count - 1) / rate
        assert holder_out[0].status_code == 200
    with pytest.raises(InputError):
        replace(settings, refusal_rate=-1.0)


def test_one_scope_cannot_take_every_waiting_place(settings, monkeypatch) -> None:
    """The test keys name three scopes, so by default one scope may hold half the waiting places (rounded up): with
    max_waiting 2, one. Alpha's second waiting check is refused (503 naming max_waiting_per_scope) while beta's
    still takes the place left, and every check let in is answered once the worker is free."""
    from prometheus_client.parser import text_string_to_metric_families

    from groundwire.foundation.errors import InputError

    with serving(settings, workers=1, max_waiting=2, reserved_workers=0, small_pairs=0) as client:
        pool = client.app.state.pool
        assert pool.max_waiting_per_scope == 1
        held = Held(client, monkeypatch)
        post = lambda headers: lambda: client.post("/v1/verify", headers=headers, json=TINY)  # noqa: E731
        let_in = [in_thread(post(ALPHA))]
        try:
            held.wait_for(1)
            let_in.append(in_thread(post(ALPHA)))
            until(lambda: pool.waiting == 1)
            refused = client.post("/v1/verify", headers=ALPHA, json=TINY)
            let_in.append(in_thread(post(BETA)))
            until(lambda: pool.waiting == 2)
            # What an operator scrapes meanwhile: the queue, the busy workers, the refusal by the limit it met.
            scraped = {(sample.name, tuple(sample.labels.values())): sample.value
                       for family in text_string_to_metric_families(client.get("/metrics").text)
                       for sample in family.samples}
            assert scraped[("groundwire_pool_waiting", ())] == 2
            assert scraped[("groundwire_pool_busy_workers", ("main",))] == 1
            assert scraped[("groundwire_busy_refusals_total", ("max_waiting_per_scope",))] == 1
            assert scraped[("groundwire_busy_refusals_total", ("max_waiting",))] == 0
        finally:
            held.release.set()
            for thread, _ in let_in:
                thread.join(timeout=WAIT_S)
        assert refused.status_code == 503
        assert refused.json()["error"]["details"] == {"limit": "max_waiting_per_scope", "max": 1, "got": 2}
        assert [answer[0].status_code for _, answer in let_in] == [200, 200, 200]
    with serving(settings, max_waiting=32, api_keys={"key-alpha": "alpha"}) as client:  # one scope: every place
        assert client.app.state.pool.max_waiting_per_scope == 32
    with serving(settings, max_waiting=32, max_waiting_per_scope=5) as client:
        assert client.app.state.pool.max_waiting_per_scope == 5
    with pytest.raises(InputError):
        replace(settings, max_waiting=4, max_waiting_per_scope=5)


def test_too_much_work_is_refused_without_waiting_for_a_worker(settings, monkeypatch) -> None:
    """A 413 the request's own chunks decide is sent before the request is queued: it does not wait behind the
    checks that hold the workers to be told so."""
    with serving(settings, workers=1, max_waiting=4, reserved_workers=0, small_pairs=0) as client:
        pool = client.app.state.pool
        held = Held(client, monkeypatch)
        holder, _ = in_thread(lambda: client.post("/v1/verify", headers=ALPHA, json=TINY))
        try:
            held.wait_for(1)
            many = {"answer": "x is y.", "chunks": [{"id": f"S{i}", "text": "x"} for i in range(201)]}
            for path in ("/v1/verify", "/v1/repair"):
                sent, answered = in_thread(lambda path=path: client.post(path, headers=ALPHA, json=many))
                sent.join(timeout=WAIT_S)
                assert answered, f"{path}: a request over max_chunks waited for a worker"
                assert answered[0].status_code == 413, answered[0].text
                assert answered[0].json()["error"]["details"]["limit"] == "max_chunks"
                assert pool.waiting == 0
        finally:
            held.release.set()
            holder.join(timeout=WAIT_S)


def test_serve_passes_the_reserved_lane_flags_on(tmp_path, monkeypatch) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda service, **_: served.append(service))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GROUNDWIRE_CONFIG", "")
    result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db"), "--scorer", "lexical",
                                      "--reserved-workers", "2", "--small-pairs", "7", "--refusal-rate", "12.5",
                                      "--max-waiting-per-scope", "3"])
    assert result.exit_code == 0, result.output
    settings = served[0].state.settings
    assert (settings.reserved_workers, settings.small_pairs, served[0].state.pool.reserved) == (2, 7, 2)
    assert settings.refusal_rate == 12.5
    assert (settings.max_waiting_per_scope, served[0].state.pool.max_waiting_per_scope) == (3, 3)
    refused = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db"), "--refusal-rate", "-1"])
    assert refused.exit_code != 0 and len(served) == 1
