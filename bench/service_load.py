"""Service throughput under concurrent clients, on loopback: goodput (successful checks/s), refusals, latency.

    .venv/bin/python bench/service_load.py --scorer lexical
    .venv/bin/python bench/service_load.py --scorer bundled --requests 60
    .venv/bin/python bench/service_load.py --clients 16 64 --retry after     # clients that honour Retry-After
    .venv/bin/python bench/service_load.py --serve-option=--refusal-rate --serve-option=0   # refusals unpaced
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/service_load.py         # another tree (its `groundwire serve`)

Starts `groundwire serve` (one uvicorn process, a fresh SQLite log in a temporary directory, the default
--workers and --max-waiting) on a free port of 127.0.0.1, waits for /healthz, sends a few warm-up requests, then,
for each number of concurrent clients (1, 4, 16 and 64 by default), has the clients check exactly --requests
answers with POST /v1/verify: each client takes the next answer once its previous one is checked, so at most
`clients` are in flight. A refused request (503 `busy` or 429 `rate_limited`) is sent again until it is checked:
at once by default (`--retry immediate`, a client that ignores Retry-After, the worst case for the server), or
after its Retry-After (`--retry after`). Attempts are bounded (--max-attempts per answer). Each answer is one of
5 claims against 5 chunks (bench/scale.py's generator; a different seed per answer, so the service's cache cannot
answer); the bodies are built before the clock starts, so the clients spend their CPU on HTTP only.

Per level it prints goodput (answers checked per second of the level's wall time), all attempts per second, the
refusals by status, p50 and p95 of a successful attempt's latency, the slowest refusal (a refusal waits for no
worker; past `serve --refusal-rate` refusals a second, 60 by default, it waits its turn, at most its Retry-After of
1 s), the server process's CPU seconds (from /proc) per checked answer, and the share of a core the load
generator itself used (with two cores, what it takes the server does not get). At the end: goodput at the most
clients as a share of goodput at 16 (issue 38's target: at least 90%), and the request-log rows by kind (a refusal
writes none: there should be exactly one `verify` row per checked answer, warm-up included, and no `error` row).

The load generator runs on the same machine and takes CPU from the server; read the numbers as what one box
does, not what the server alone could. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from scale import make_answer

ROOT = Path(__file__).resolve().parents[1]
REFUSED = (429, 503)
WARM_UP = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def payload(seed: int, claims: int, chunks: int) -> dict:
    row = make_answer(claims, chunks, seed)
    return {"answer": row["answer"], "question": "What do we know about these routers?",
            "chunks": [{"id": f"S{i}", "text": text} for i, text in enumerate(row["context"], start=1)]}


def start_server(port: int, scorer: str, workdir: Path, options: list[str]) -> subprocess.Popen:
    command = [str(ROOT / ".venv" / "bin" / "groundwire"), "serve", "--host", "127.0.0.1", "--port", str(port),
               "--db", str(workdir / "log.db"), "--scorer", scorer, "--log-level", "warning", *options]
    log = (workdir / "server.log").open("w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` (all its threads), from /proc; 0 where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def wait_ready(client: object, server: subprocess.Popen, timeout_s: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}; see its log")
        try:
            if (await client.get("/healthz")).status_code == 200:  # type: ignore[attr-defined]
                return
        except httpx.TransportError:  # not listening yet
            pass
        await asyncio.sleep(0.25)
    raise SystemExit(f"the server was not ready within {timeout_s:.0f}s")


def nearest_rank(ordered: list[float], share: float) -> float:
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else 0.0


class RawClient:
    """A lean HTTP/1.1 client: one keep-alive connection per task (asyncio streams), requests built once as bytes.
    httpx spends about a millisecond of CPU per request; at 64 clients that retry at once, the load generator then
    took more of the machine's two cores than the server. This one spends a fraction of that, so what is measured
    is the server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    @staticmethod
    def request(body: bytes) -> bytes:
        return (b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)

    async def post(self, request: bytes) -> tuple[int, dict[str, str]]:
        """Send one request built by `request`; its status and headers (the body is read and dropped)."""
        try:
            reader, writer = self.streams.get_nowait()
        except asyncio.QueueEmpty:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip()
                   for name, _, value in (line.partition(":") for line in lines[1:] if line)}
        await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            writer.close()
        else:
            self.streams.put_nowait((reader, writer))
        return int(lines[0].split(" ", 2)[1]), headers

    async def close(self) -> None:
        while not self.streams.empty():
            _, writer = self.streams.get_nowait()
            writer.close()


async def run_level(client: object, args: argparse.Namespace, clients: int, first_seed: int) -> dict:
    bodies = [json.dumps(payload(seed, *args.size)).encode()
              for seed in range(first_seed, first_seed + args.requests)]
    if args.client == "raw":
        bodies = [RawClient.request(body) for body in bodies]
    headers = {"content-type": "application/json"}
    latencies: list[float] = []
    refusal_latencies: list[float] = []
    refused: dict[int, int] = {}
    failures: dict[int, int] = {}
    attempts = 0
    given_up = 0
    next_body = iter(bodies)

    async def one_client() -> None:
        nonlocal attempts, given_up
        for body in next_body:  # shared iterator: the total is bounded, whoever is free takes the next
            for _ in range(args.max_attempts):
                attempts += 1
                started = time.perf_counter()
                if isinstance(client, RawClient):
                    status, answered = await client.post(body)
                else:
                    response = await client.post("/v1/verify", content=body, headers=headers)  # type: ignore[attr-defined]
                    status, answered = response.status_code, response.headers
                elapsed = time.perf_counter() - started
                if status not in REFUSED:
                    if status == 200:
                        latencies.append(elapsed)
                    else:
                        failures[status] = failures.get(status, 0) + 1
                    break
                refused[status] = refused.get(status, 0) + 1
                refusal_latencies.append(elapsed)
                if args.retry == "after":
                    await asyncio.sleep(float(answered.get("retry-after", "1")))
            else:
                given_up += 1

    cpu_before, own_before = cpu_seconds(args.server.pid), time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    wall = time.perf_counter() - started
    cpu = cpu_seconds(args.server.pid) - cpu_before
    own = time.process_time() - own_before
    ordered = sorted(latencies)
    return {"clients": clients, "checked": len(latencies), "wall_s": wall, "goodput": len(latencies) / wall,
            "attempts_per_s": attempts / wall, "refused": refused, "failures": failures, "given_up": given_up,
            "p50_ms": 1000 * statistics.median(ordered) if ordered else 0.0,
            "p95_ms": 1000 * nearest_rank(ordered, 0.95),  # nearest rank
            "refusal_max_ms": 1000 * max(refusal_latencies, default=0.0),
            "refusal_p95_ms": 1000 * nearest_rank(sorted(refusal_latencies), 0.95),
            "server_cpu_ms_per_check": 1000 * cpu / max(1, len(latencies)), "client_cpu_share": own / wall}


async def bench(args: argparse.Namespace, port: int) -> list[dict]:
    import httpx

    limits = httpx.Limits(max_connections=max(args.clients), max_keepalive_connections=max(args.clients))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120.0, limits=limits) as client:
        await wait_ready(client, args.server, args.startup_timeout)
        for seed in range(WARM_UP):  # warm-up: model loaded, first-request paths taken
            (await client.post("/v1/verify", json=payload(seed, *args.size))).raise_for_status()
        results = []
        for level, clients in enumerate(args.clients * args.rounds):
            raw = RawClient(port) if args.client == "raw" else None
            result = await run_level(raw or client, args, clients, 1000 * (level + 1))
            if raw is not None:
                await raw.close()
            refusals = sum(result["refused"].values())
            print(f"clients {clients:>3}  checked {result['checked']:>4} in {result['wall_s']:6.2f} s  "
                  f"goodput {result['goodput']:6.1f}/s  attempts {result['attempts_per_s']:7.1f}/s  "
                  f"refused {refusals:>6} {result['refused'] or ''}  p50 {result['p50_ms']:7.1f} ms  "
                  f"p95 {result['p95_ms']:7.1f} ms  refusal p95/max {result['refusal_p95_ms']:5.1f}/"
                  f"{result['refusal_max_ms']:5.1f} ms  server CPU {result['server_cpu_ms_per_check']:5.1f} ms/check  "
                  f"client CPU {result['client_cpu_share']:4.0%} of a core"
                  + (f"  other non-200: {result['failures']}" if result["failures"] else "")
                  + (f"  given up: {result['given_up']}" if result["given_up"] else ""), flush=True)
            results.append(result)
        return results


def logged_rows(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        tables = {name for (name,) in conn.execute("select name from sqlite_master where type='table'")}
        table = next((t for t in ("requests", "request_log") if t in tables), None)
        if table is None:
            return {}
        return dict(conn.execute(f"select kind, count(*) from {table} group by kind").fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--requests", type=int, default=200, help="answers checked per concurrency level")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the levels this many times, alternating, and compare their medians (the machine's "
                             "other load changes from one level to the next)")
    parser.add_argument("--retry", choices=("immediate", "after"), default="immediate",
                        help="send a refused request again at once, or after its Retry-After")
    parser.add_argument("--max-attempts", type=int, default=10_000, help="attempts per answer before giving up")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="the load generator's HTTP client: a lean one of asyncio streams, or httpx")
    parser.add_argument("--serve-option", action="append", default=[], metavar="ARG",
                        help="one more argument for `groundwire serve` (repeat it: --serve-option=--refusal-rate "
                             "--serve-option=0 serves refusals unpaced)")
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--startup-timeout", type=float, default=180.0)
    args = parser.parse_args()
    args.size = (args.claims, args.chunks)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        args.server = start_server(port, args.scorer, Path(tmp), args.serve_option)
        try:
            print(f"groundwire serve {' '.join(args.serve_option)} on 127.0.0.1:{port}, scorer {args.scorer}, "
                  f"{args.claims}x{args.chunks} "
                  f"claims x chunks per request, retry {args.retry}, client {args.client}, {os.cpu_count()} CPUs "
                  "shared by server and clients")
            results = asyncio.run(bench(args, port))
        finally:
            os.killpg(args.server.pid, signal.SIGTERM)  # the server we started, and only it
            args.server.wait(timeout=30)
        rows = logged_rows(Path(tmp) / "log.db")
    checked = sum(r["checked"] for r in results) + WARM_UP
    print(f"request-log rows by kind: {rows or 'none found'} (answers checked, warm-up included: {checked})")
    goodput = {clients: statistics.median(r["goodput"] for r in results if r["clients"] == clients)
               for clients in args.clients}
    if args.rounds > 1:
        print("median goodput over " + f"{args.rounds} rounds: "
              + ", ".join(f"{clients} clients {value:.1f}/s" for clients, value in goodput.items()))
    most = max(goodput)
    if 16 in goodput and most > 16:
        print(f"goodput at {most} clients / goodput at 16: {goodput[most]:.1f} / {goodput[16]:.1f} = "
              f"{goodput[most] / goodput[16]:.2f} (target: at least 0.90)")


if __name__ == "__main__":
    main()
