"""The app's CPU per busy refusal: POST /v1/verify with the worker pool full, sent straight through the ASGI app.

    .venv/bin/python bench/refusal_cpu.py                          # 3 KB and 400 KB bodies, 3 rounds
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/refusal_cpu.py # another tree, same measurement

No socket and no HTTP client: each refusal is one call of the app (create_app, lexical scorer, a fresh SQLite log,
refusals unpaced) on the app's own event-loop thread, whose CPU time (time.thread_time) is divided by the number of
refusals. So the figure is the app's part of a refusal: middleware (metrics, tracing, security headers, the size
limit), routing, the time budget and the pool's admission; uvicorn's h11 and the socket calls come on top
(bench/service_load.py measures the whole server). The pool is made to look full (its must_wait and full answer
True), so every request is refused before its body is parsed; the body size should not matter. It also prints the
Python function calls per refusal (cProfile, one round), a count that does not depend on the machine's load.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from groundwire.pipeline import CheckSettings
from groundwire.service import ServiceSettings, create_app


def request(body: bytes) -> dict[str, Any]:
    """The ASGI scope of POST /v1/verify with `body`, from a caller with a valid key."""
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/v1/verify", "raw_path": b"/v1/verify", "root_path": "", "query_string": b"",
            "headers": [(b"host", b"bench"), (b"authorization", b"Bearer bench-key"),
                        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1), "server": ("bench", 80)}


async def refuse(app: Any, body: bytes) -> int:
    """One request through the app; its status."""
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status = 0

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # no disconnect: the client stays until the response
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(request(body), receive, send)
    return status


async def cpu_per_refusal(app: Any, body: bytes, n: int, profile: cProfile.Profile | None) -> tuple[float, set[int]]:
    statuses = {await refuse(app, body) for _ in range(200)}  # warm-up
    if profile is not None:
        profile.enable()
    start = time.thread_time()
    for _ in range(n):
        statuses.add(await refuse(app, body))
    spent = (time.thread_time() - start) / n
    if profile is not None:
        profile.disable()
    return spent, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="refusals per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--body-kb", type=int, nargs="+", default=[3, 400])
    args = parser.parse_args()
    settings = ServiceSettings(db_url=f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}",
                               api_keys={"bench-key": "bench"}, check=CheckSettings(scorer="lexical"),
                               refusal_rate=0, max_body_bytes=2_000_000)
    app = create_app(settings)
    with TestClient(app) as client:
        pool = app.state.pool
        pool.must_wait = lambda *, small: True
        pool.full = lambda *, small, scope=None: True
        profile = cProfile.Profile()
        client.portal.call(cpu_per_refusal, app, b"{}", 500, profile)
        print(f"{pstats.Stats(profile).total_calls / 500:,.0f} Python function calls per refusal")
        for kb in args.body_kb:
            text = ("The plan costs 19 dollars a month. " * (kb * 30 + 1))[: kb * 1024]
            body = json.dumps({"answer": "The plan costs 19 dollars.", "chunks": [{"id": "S1", "text": text}]})
            figures = []
            for _ in range(args.rounds):
                spent, statuses = client.portal.call(cpu_per_refusal, app, body.encode(), args.n, None)
                assert statuses == {503}, statuses  # every request refused, none checked
                figures.append(spent * 1e3)
            print(f"body {len(body):>9,} bytes: {', '.join(f'{f:.3f}' for f in figures)} ms CPU per refusal "
                  f"(min {min(figures):.3f})")


if __name__ == "__main__":
    main()
