"""Service throughput under concurrent clients, on loopback: requests/s, p50 and p95 latency.

    .venv/bin/python bench/service_load.py --scorer lexical
    .venv/bin/python bench/service_load.py --scorer bundled --requests 60

Starts `groundwire serve` (one uvicorn process, a fresh SQLite log in a temporary directory) on a free
port of 127.0.0.1, waits for /healthz, sends a few warm-up requests, then, for 1, 4 and 16 concurrent
clients, sends exactly --requests POST /v1/verify requests (a bounded load: each client takes the next
request when its previous one is answered, so at most `clients` are in flight). Each request is one
answer of 5 claims against 5 chunks (bench/scale.py's generator; a different seed per request, so the
service's cache cannot answer). The load generator runs on the same machine and takes CPU from the
server; read the numbers as what one box does, not what the server alone could. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import make_answer

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def payload(seed: int, claims: int, chunks: int) -> dict:
    row = make_answer(claims, chunks, seed)
    return {"answer": row["answer"], "question": "What do we know about these routers?",
            "chunks": [{"id": f"S{i}", "text": text} for i, text in enumerate(row["context"], start=1)]}


def start_server(port: int, scorer: str, workdir: Path) -> subprocess.Popen:
    command = [str(ROOT / ".venv" / "bin" / "groundwire"), "serve", "--host", "127.0.0.1", "--port", str(port),
               "--db", str(workdir / "log.db"), "--scorer", scorer, "--log-level", "warning"]
    log = (workdir / "server.log").open("w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


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


async def run_level(client: object, clients: int, requests: int, first_seed: int, size: tuple[int, int]) -> dict:
    latencies: list[float] = []
    failures: dict[int, int] = {}
    next_seed = iter(range(first_seed, first_seed + requests))

    async def one_client() -> None:
        for seed in next_seed:  # shared iterator: the total is bounded, whoever is free takes the next
            body = payload(seed, *size)
            started = time.perf_counter()
            response = await client.post("/v1/verify", json=body)  # type: ignore[attr-defined]
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                failures[response.status_code] = failures.get(response.status_code, 0) + 1

    started = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    wall = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"clients": clients, "requests": len(latencies), "rps": len(latencies) / wall,
            "p50_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)],  # nearest rank
            "failures": failures}


async def bench(args: argparse.Namespace, port: int) -> list[dict]:
    import httpx

    limits = httpx.Limits(max_connections=max(args.clients), max_keepalive_connections=max(args.clients))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120.0, limits=limits) as client:
        await wait_ready(client, args.server, args.startup_timeout)
        for seed in range(3):  # warm-up: model loaded, first-request paths taken
            (await client.post("/v1/verify", json=payload(seed, *args.size))).raise_for_status()
        results = []
        for level, clients in enumerate(args.clients):
            result = await run_level(client, clients, args.requests, 1000 * (level + 1), args.size)
            print(f"clients {result['clients']:>3}  requests {result['requests']:>5}  {result['rps']:7.2f} req/s  "
                  f"p50 {result['p50_ms']:8.1f} ms  p95 {result['p95_ms']:8.1f} ms"
                  + (f"  non-200: {result['failures']}" if result["failures"] else ""), flush=True)
            results.append(result)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--requests", type=int, default=200, help="requests per concurrency level")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--startup-timeout", type=float, default=180.0)
    args = parser.parse_args()
    args.size = (args.claims, args.chunks)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        args.server = start_server(port, args.scorer, Path(tmp))
        try:
            print(f"groundwire serve on 127.0.0.1:{port}, scorer {args.scorer}, {args.claims}x{args.chunks} "
                  f"claims x chunks per request, {os.cpu_count()} CPUs shared by server and clients")
            results = asyncio.run(bench(args, port))
        finally:
            os.killpg(args.server.pid, signal.SIGTERM)  # the server we started, and only it
            args.server.wait(timeout=30)
    base = results[0]
    print("; ".join(f"{r['clients']} clients: {r['rps']:.1f} req/s ({r['rps'] / base['rps']:.2f}x), "
                    f"p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms" for r in results))


if __name__ == "__main__":
    main()
