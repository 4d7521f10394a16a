"""One scope's flood against another scope's steady checks: what the steady scope gets answered, alone and beside the
flood (service/workers.py, max_waiting_per_scope).

    .venv/bin/python bench/scope_flood.py
    .venv/bin/python bench/scope_flood.py --serve-option=--max-waiting-per-scope --serve-option=32   # as before
    .venv/bin/python bench/scope_flood.py --serve-option=--rate-limit --serve-option=10/second       # a 429 storm

Starts `groundwire serve` (lexical scorer by default, a fresh SQLite log in a temporary directory, the default
limits) with two API keys of two scopes, `steady` and `flood`. The steady scope sends --count POST /v1/verify
checks at --rate a second, each on its own (it does not wait for the one before: an open loop, as independent
users would), and counts how many are answered 200 and how fast. It does so alone, then while --flooders
connections of the flood scope send their checks again at once, whatever the answer. Each check is 5 claims
against 5 chunks (bench/scale.py's generator, a different seed per check, so that no cache answers). The two phases
alternate --rounds times. Nothing is asserted; the load generator shares the machine with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from service_load import RawClient, free_port, nearest_rank, payload, start_server, wait_ready

KEYS = {"steady": "key-steady-0123456789", "flood": "key-flood-0123456789"}


def signed(body: dict, key: str) -> bytes:
    """RawClient's request bytes with the key's Authorization header."""
    request = RawClient.request(json.dumps(body).encode())
    head, _, rest = request.partition(b"\r\n")
    return head + b"\r\nAuthorization: Bearer " + key.encode() + b"\r\n" + rest


async def phase(port: int, args: argparse.Namespace, flooders: int, first_seed: int) -> dict:
    steady, flood = RawClient(port), RawClient(port)
    requests = [signed(payload(seed, 5, 5), KEYS["steady"]) for seed in range(first_seed, first_seed + args.count)]
    flood_request = signed(payload(first_seed + args.count, 5, 5), KEYS["flood"])
    statuses: dict[str, dict[int, int]] = {"steady": {}, "flood": {}}
    latencies: list[float] = []
    stop = asyncio.Event()

    def count(who: str, status: int) -> None:
        statuses[who][status] = statuses[who].get(status, 0) + 1

    async def one(request: bytes) -> None:
        started = time.perf_counter()
        status, _ = await steady.post(request)
        count("steady", status)
        if status == 200:
            latencies.append(time.perf_counter() - started)

    async def flooder() -> None:
        while not stop.is_set():
            count("flood", (await flood.post(flood_request))[0])

    flooding = [asyncio.create_task(flooder()) for _ in range(flooders)]
    started = time.perf_counter()
    sent = []
    for request in requests:  # an open loop: each at its time, whether or not the ones before were answered
        sent.append(asyncio.create_task(one(request)))
        await asyncio.sleep(1 / args.rate)
    await asyncio.gather(*sent)
    wall = time.perf_counter() - started
    stop.set()
    await asyncio.gather(*flooding)
    await steady.close()
    await flood.close()
    ordered = sorted(latencies)
    return {"flooders": flooders, "answered": statuses["steady"].get(200, 0), "statuses": statuses, "wall_s": wall,
            "p50_ms": 1000 * nearest_rank(ordered, 0.5), "p95_ms": 1000 * nearest_rank(ordered, 0.95)}


async def bench(args: argparse.Namespace, port: int, server: subprocess.Popen) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as client:
        await wait_ready(client, server, args.startup_timeout)
    seed = 0
    for _ in range(args.rounds):
        for flooders in (0, args.flooders):
            result = await phase(port, args, flooders, seed)
            seed += args.count + 1
            flood = result["statuses"]["flood"]
            print(f"{'beside the flood' if flooders else 'alone':16s}  steady scope: {result['answered']:>4} of "
                  f"{args.count} answered in {result['wall_s']:5.1f} s  p50 {result['p50_ms']:6.0f} ms  "
                  f"p95 {result['p95_ms']:6.0f} ms  statuses {result['statuses']['steady']}"
                  + (f"  | flood scope ({flooders} connections): {flood}" if flooders else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--count", type=int, default=300, help="checks the steady scope sends a phase")
    parser.add_argument("--rate", type=float, default=30.0, help="checks a second the steady scope sends")
    parser.add_argument("--flooders", type=int, default=48, help="connections of the flood scope")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve-option", action="append", default=[], metavar="ARG",
                        help="one more argument for `groundwire serve` (repeat it)")
    parser.add_argument("--startup-timeout", type=float, default=180.0)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        key_file = Path(tmp) / "keys"
        key_file.write_text("".join(f"{key}:{scope}\n" for scope, key in KEYS.items()))
        key_file.chmod(0o600)
        server = start_server(port, args.scorer, Path(tmp), ["--api-key-file", str(key_file), *args.serve_option])
        try:
            print(f"groundwire serve {' '.join(args.serve_option)} on 127.0.0.1:{port}, scorer {args.scorer}; the "
                  f"steady scope sends {args.count} checks at {args.rate:g} a second; {os.cpu_count()} CPUs shared "
                  "by server and clients")
            asyncio.run(bench(args, port, server))
        finally:
            os.killpg(server.pid, signal.SIGTERM)  # the server we started, and only it
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
