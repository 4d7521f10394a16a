"""The time budget as a limit (issue 58, item 1): how long past `serve --time-budget` a pooled route answers.

    PYTHONPATH=$PWD/src .venv/bin/python bench/budget.py                  # this tree, lexical scorer
    PYTHONPATH=$PWD/src .venv/bin/python bench/budget.py --budgets 1 2 --repeat 1
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/budget.py            # another tree

For each budget (1, 2 and 15 s by default) it starts `groundwire serve --scorer lexical --time-budget B` (the tree on
PYTHONPATH, a fresh SQLite log in a temporary directory, on a free port of 127.0.0.1; bench/service_load.py's
start_server), ingests 200,000 characters of prose and logs a few failed verifies (bench/abandoned.py's setup), so
that the eval loop searches the corpus for their claims. Then it sends the issue's cases, --repeat times each:
  - verify and repair: the answer "The freight team handled 0 orders, handled 1 orders, ... handled 29 orders and
    filed invoices." twice, against one chunk of 200,000 characters of prose;
  - eval: GET /v1/eval?limit=10 (it embeds the corpus to look the failures up: far longer than 15 s here);
first on an idle service, then beside 4 clients that each send the same verify again as soon as it is answered.
Each case's seconds are the client's, from sending the request to reading the whole response. Beside the heavy
clients, one more sends GET /healthz every 0.1 s (no pool, no work): its slowest answer is the event loop's own lag
on that load, which the answer to a request past its budget waits for too. The overshoot is those
seconds less the budget: the service states a slack of 0.25 s (docs/service.md). It prints one row per budget, load and
route (statuses seen, slowest seconds, worst overshoot), then the worst overshoot over all of them.
Nothing is asserted: timings depend on the machine and its load (the load average is printed beside them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from abandoned import KEY, READ_ONLY, SUBJECTS, setup
from from_tests import free_port
from service_load import start_server, wait_ready

CONTEXT_CHARS = 200_000
SLACK_S = 0.25
"""The slack docs/service.md states past the budget."""
HEAVY_CLIENTS = 4
ANSWER = " ".join(["The freight team " + ", ".join(f"handled {n} orders" for n in range(30)) + " and filed invoices."] * 2)


def prose(chars: int) -> str:
    """Varied sentences of prose (each sentence different, as real text is), `chars` characters."""
    sentences, total, n = [], 0, 0
    while total < chars:
        sentence = f"The {SUBJECTS[n % len(SUBJECTS)]} of unit {n} runs at {n % 97 + 3} bar and was serviced in " \
                   f"week {n % 52 + 1}. "
        sentences.append(sentence)
        total += len(sentence)
        n += 1
    return "".join(sentences)[:chars]


def check_body() -> dict[str, object]:
    return {"answer": ANSWER, "chunks": [{"id": "S1", "text": prose(CONTEXT_CHARS)}]}


async def probe(url: str, stop: asyncio.Event, slowest: list[float]) -> None:
    """GET /healthz every 0.1 s until `stop`; the slowest answer goes in `slowest`."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=60.0) as client:
        while not stop.is_set():
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                await client.get("/healthz")
            slowest[0] = max(slowest[0], time.perf_counter() - started)
            await asyncio.sleep(0.1)


@dataclass
class Case:
    budget: float
    load: str
    route: str
    statuses: Counter[int] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)

    @property
    def overshoot(self) -> float:
        return max(self.seconds) - self.budget


async def send(client: object, route: str, body: dict[str, object]) -> tuple[int, float]:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    started = time.perf_counter()
    if route == "eval":
        response = await client.get("/v1/eval?limit=10", headers={"X-API-Key": READ_ONLY})
    else:
        response = await client.post(f"/v1/{route}", json=body)
    await response.aread()
    return response.status_code, time.perf_counter() - started


async def heavy(url: str, body: dict[str, object], stop: asyncio.Event) -> int:
    """One client sending the verify again as soon as it is answered, until `stop`; the answers it got."""
    import httpx

    answered = 0
    async with httpx.AsyncClient(base_url=url, timeout=300.0, headers={"X-API-Key": KEY}) as client:
        while not stop.is_set():
            with contextlib.suppress(httpx.HTTPError):
                await client.post("/v1/verify", json=body)
                answered += 1
    return answered


async def measure(url: str, budget: float, repeat: int, body: dict[str, object]) -> list[Case]:
    import httpx

    cases = []
    lag = [0.0]
    async with httpx.AsyncClient(base_url=url, timeout=300.0, headers={"X-API-Key": KEY}) as client:
        for load in ("idle", f"beside {HEAVY_CLIENTS} heavy"):
            stop = asyncio.Event()
            heavies = [asyncio.ensure_future(heavy(url, body, stop)) for _ in range(HEAVY_CLIENTS if load != "idle"
                                                                                     else 0)]
            if heavies:
                heavies.append(asyncio.ensure_future(probe(url, stop, lag)))
                await asyncio.sleep(1.0)  # they are running (or waiting for a worker)
            for route in ("verify", "repair", "eval"):
                case = Case(budget, load, route)
                for _ in range(repeat):
                    status, seconds = await send(client, route, body)
                    case.statuses[status] += 1
                    case.seconds.append(seconds)
                cases.append(case)
            stop.set()
            for task in heavies:
                task.cancel()
            await asyncio.gather(*heavies, return_exceptions=True)
            await asyncio.sleep(budget + 1)  # the heavy checks given up on stop at their next checkpoint
    print(f"  budget {budget:g} s: slowest GET /healthz beside the heavy clients {lag[0]:.2f} s", flush=True)
    return cases


async def one_budget(args: argparse.Namespace, budget: float, body: dict[str, object]) -> list[Case]:
    import httpx

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        options = ["--api-key", f"{KEY}:bench", "--api-key", f"{READ_ONLY}:bench:ro", "--time-budget", str(budget)]
        server = start_server(port, args.scorer, Path(tmp), options)
        try:
            async with httpx.AsyncClient(base_url=url, timeout=300.0, headers={"X-API-Key": KEY}) as client:
                await wait_ready(client, server, 180)
                await setup(client, CONTEXT_CHARS, args.failures)
            return await measure(url, budget, args.repeat, body)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except Exception:
                server.kill()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 2.0, 15.0])
    parser.add_argument("--repeat", type=int, default=2, help="times each case is sent")
    parser.add_argument("--failures", type=int, default=5, help="failed verifies logged for the eval loop")
    args = parser.parse_args()

    import groundwire

    print(f"groundwire from {Path(groundwire.__file__).parent}; {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.2f}")
    body = check_body()
    cases: list[Case] = []
    for budget in args.budgets:
        cases += await one_budget(args, budget, body)
        print(f"  budget {budget:g} s done; load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"\n{'budget':>7}  {'load':<16}{'route':<8}{'statuses':<18}{'slowest':>9}{'overshoot':>11}")
    for case in cases:
        statuses = ", ".join(f"{n} x {status}" for status, n in sorted(case.statuses.items()))
        print(f"{case.budget:>6g}s  {case.load:<16}{case.route:<8}{statuses:<18}{max(case.seconds):>8.2f}s"
              f"{case.overshoot:>+10.2f}s")
    worst = max(cases, key=lambda case: case.overshoot)
    print(f"\nworst overshoot: {worst.overshoot:+.2f} s ({worst.route}, budget {worst.budget:g} s, {worst.load}); "
          f"stated slack {SLACK_S} s; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
