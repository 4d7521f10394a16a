"""Issue 58, item 1: a time budget that holds, the answer's own way back included.

- The pool answers a check past its budget the event loop's lag before the deadline (service/looplag.py), so that
  the 504 arrives by the deadline on a loaded loop, not the lag after it.
- The eval routes, which answer 200 with what they finished, are begun only with their reserve left; past that they
  are refused 503 `queue_timeout` at once (bench/budget.py saw one begun 0.05 s before its deadline answered 504).
- The budget counts from the request's first byte (headertimeout.py notes it), not from when the loop routed it.

Nothing here is timed: waits are bounded (WAIT_S) so that a hang fails the test, and what is asserted is an order of
events or a margin of many seconds."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import replace
from typing import Any

import pytest
from live_server import live
from service_common import ALPHA

pytest.importorskip("fastapi")

WAIT_S = 30.0


def test_the_margin_is_twice_the_recent_lag_within_its_cap() -> None:
    from groundwire.service.looplag import RECENT_SAMPLES, LoopLag, margin_cap

    lag = LoopLag(cap_s=0.5)
    assert lag.margin() == 0.0  # no sample yet: answered at the deadline
    lag.add(0.1)
    lag.add(-1.0)  # a callback run early is no lag
    assert lag.recent() == 0.1 and lag.margin() == pytest.approx(0.2)
    lag.add(0.4)
    assert lag.margin() == 0.5  # capped
    for _ in range(RECENT_SAMPLES):
        lag.add(0.01)
    assert lag.margin() == pytest.approx(0.02)  # only the recent samples count
    assert margin_cap(1.0) == 0.25 and margin_cap(2.0) == 0.5 and margin_cap(15.0) == 0.5


def test_the_lag_is_sampled_on_the_running_loop_until_stopped() -> None:
    from groundwire.service.looplag import LoopLag

    async def sampled() -> float:
        lag = LoopLag(cap_s=1.0, every_s=0.01)
        lag.start()
        for _ in range(int(WAIT_S * 100)):
            if lag._samples:
                break
            await asyncio.sleep(0.01)
        time.sleep(0.05)  # the loop blocked: the next sample sees it late
        await asyncio.sleep(0.05)
        await lag.stop()
        return lag.recent()

    assert asyncio.run(sampled()) >= 0.02


class Blocked:
    """Work on a worker that waits for `release` (a scoring call between two checkpoints), then checks its token."""

    def __init__(self) -> None:
        self.entered, self.release, self.ran = threading.Event(), threading.Event(), 0

    def __call__(self) -> str:
        from groundwire.core.cancel import checkpoint

        self.ran += 1
        self.entered.set()
        assert self.release.wait(WAIT_S)
        checkpoint()
        return "done"


def test_a_check_past_its_budget_is_answered_the_loop_s_margin_before_its_deadline() -> None:
    from groundwire.core.cancel import CancelToken, cancellable
    from groundwire.service.errors import ServiceError
    from groundwire.service.looplag import LoopLag
    from groundwire.service.workers import WorkerPool

    lag = LoopLag(cap_s=WAIT_S)
    lag.add(WAIT_S / 2 - 0.05)  # a loop that runs callbacks about 15 s late: the margin is about 29.9 s
    pool = WorkerPool(1, 4, lag=lag)
    work = Blocked()
    token = CancelToken.after(WAIT_S)

    async def run() -> None:
        with cancellable(token):
            await pool.run(None, work)

    try:
        with pytest.raises(ServiceError) as answered:
            asyncio.run(run())
        left = token.remaining()
    finally:
        work.release.set()
        pool.close()
    assert answered.value.code.value == "time_budget_exceeded"
    assert work.ran == 1
    # Answered the margin before the deadline, many seconds ahead of it; the work stops at its next checkpoint.
    assert left is not None and left > WAIT_S / 2, left
    assert token.reason == "deadline"


def test_work_with_a_reserve_is_not_begun_with_less_than_it_left() -> None:
    from groundwire.core.cancel import CancelToken, cancellable
    from groundwire.service.errors import ServiceError
    from groundwire.service.workers import WorkerPool

    pool = WorkerPool(1, 4)
    calls: list[str] = []

    async def run(budget_s: float, reserve_s: float) -> str:
        with cancellable(CancelToken.after(budget_s)):
            return await pool.run_with_reserve(None, reserve_s, lambda: calls.append("ran") or "answered")

    try:
        with pytest.raises(ServiceError) as refused:
            asyncio.run(run(WAIT_S, WAIT_S + 1))  # its reserve is more than its whole budget: it can finish nothing
        assert refused.value.code.value == "queue_timeout"
        assert refused.value.headers == {"Retry-After": "1"}
        assert calls == []  # never begun
        assert asyncio.run(run(WAIT_S, 1.0)) == "answered"
        assert calls == ["ran"]
    finally:
        pool.close()


def test_an_eval_that_waited_past_its_reserve_is_refused_at_once_and_never_runs(settings, monkeypatch) -> None:
    """The eval route waits behind a check that holds the only worker; at deadline - reserve (0.5 s after it came,
    its budget being 90 s) it is answered 503 `queue_timeout`, while that check still holds the worker, and the eval
    loop never runs. Before, it waited for the worker (or for its whole budget)."""
    from fastapi.testclient import TestClient

    from groundwire.service import actions, create_app, history

    entered, release = threading.Event(), threading.Event()
    evals: list[str] = []
    real = actions.verify

    def holding(runtime: Any, body: Any, sent: Any, *, scope: str) -> Any:
        entered.set()
        assert release.wait(3 * WAIT_S)
        return real(runtime, body, sent, scope=scope)

    monkeypatch.setattr(actions, "verify", holding)
    monkeypatch.setattr(history, "eval_summary", lambda *args, **kwargs: evals.append("ran"))
    monkeypatch.setattr(history, "eval_reserve_s", lambda settings: settings.time_budget_s - 0.5)
    body = {"answer": "The pump runs at 40 bar.", "chunks": [{"id": "S1", "text": "The pump runs at 40 bar."}]}
    budget = replace(settings, workers=1, reserved_workers=0, time_budget_s=3 * WAIT_S)
    with TestClient(create_app(budget)) as client:
        held: list[Any] = []
        refused: list[Any] = []
        holder = threading.Thread(target=lambda: held.append(client.post("/v1/verify", headers=ALPHA, json=body)))
        holder.start()
        try:
            assert entered.wait(WAIT_S)
            waiter = threading.Thread(target=lambda: refused.append(client.get("/v1/eval?limit=10", headers=ALPHA)))
            waiter.start()
            waiter.join(WAIT_S)  # bounded: the worker is held for longer
            still_held = not release.is_set() and client.app.state.pool.busy() == 1
        finally:
            release.set()
            holder.join(WAIT_S)
            waiter.join(WAIT_S)
    assert still_held and refused, "the eval was not answered while the worker was held"
    assert refused[0].status_code == 503 and refused[0].json()["error"]["code"] == "queue_timeout", refused[0].text
    assert evals == []
    assert held[0].status_code == 200


def test_the_app_samples_its_loop_s_lag_while_it_runs(settings) -> None:
    from fastapi.testclient import TestClient

    from groundwire.service import create_app
    from groundwire.service.looplag import margin_cap

    app = create_app(replace(settings, time_budget_s=2.0))
    lag = app.state.pool.lag
    assert lag.cap_s == margin_cap(2.0) == 0.5
    with TestClient(app):
        for _ in range(int(WAIT_S * 100)):
            if lag._samples:
                break
            time.sleep(0.01)
        assert lag._samples and lag._task is not None and not lag._task.done()
    assert lag._task is None  # stopped with the app


def test_the_budget_counts_from_the_request_s_first_byte() -> None:
    from groundwire.service.cancellation import ARRIVED

    seen: list[float | None] = []
    routed: list[float] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        routed.append(time.monotonic())
        seen.append(scope.get(ARRIVED))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    class Client:  # what `live` serves: an object with the app
        pass

    client = Client()
    client.app = app  # type: ignore[attr-defined]
    with live(client) as port, socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as sock:
        for _ in range(2):  # two requests on one connection: each counts from its own first byte
            first = time.monotonic()
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            time.sleep(1.0)  # the rest of the head comes later: the request is routed only then
            rest = time.monotonic()
            sock.sendall(b"\r\n")
            answer = b""
            while not answer.endswith(b"ok"):
                answer += sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200")
            arrived = seen[-1]
            assert arrived is not None and first <= arrived < rest <= routed[-1], (first, arrived, rest, routed)
    assert len(seen) == 2
