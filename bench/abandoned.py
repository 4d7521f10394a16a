"""Work that outlives its caller (issue 47, item 3): server CPU after abandoned eval calls, and GET /v1/eval's time.

    PYTHONPATH=$PWD/src .venv/bin/python bench/abandoned.py                     # this tree, lexical scorer
    PYTHONPATH=/work/main/src .venv/bin/python bench/abandoned.py               # another tree
    .venv/bin/python bench/abandoned.py --corpus-chars 950000 --calls 6 --serve-option=--time-budget --serve-option=60

Starts `groundwire serve` (the tree on PYTHONPATH, a fresh SQLite log, on a free port of 127.0.0.1) with a read-write
and a read-only key of one scope, ingests a corpus of --corpus-chars characters of varied prose (documents of
50k characters), and logs --failures verifies whose answers the context does not support, so that the eval loop
looks each failure up in the corpus (it embeds the whole corpus first). Then:
  1. abandoned: --calls GET /v1/eval/report?limit=10 at once, each given up by its client after 1 s (the connection
     is closed). It counts the server's CPU seconds (/proc/<pid>/stat, all threads) from 1 s after the last
     disconnect, and says when the server went idle (under 0.05 CPU seconds in a second) (issue 47's target: it
     stops using CPU within 1 s of the disconnect; before, about 190 s);
  2. budget: GET /v1/eval?limit=10 with the read-only key, at the service's default settings: status, seconds and
     meta.evidence (the target: it answers within its time budget, on 2 cores).
Nothing is asserted: timings depend on the machine and its load (print `uptime` beside them).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from hostile import free_port
from service_load import cpu_seconds, start_server, wait_ready

KEY, READ_ONLY = "bench-key-rw", "bench-key-ro"
DOC_CHARS = 50_000
SUBJECTS = ("pump", "valve", "router", "turbine", "boiler", "sensor", "gearbox", "compressor", "filter", "motor")


def corpus(chars: int) -> list[dict[str, str]]:
    """Documents of DOC_CHARS characters of varied sentences (each sentence different, as real text is)."""
    sentences = []
    n = 0
    while sum(map(len, sentences)) < chars:
        subject = SUBJECTS[n % len(SUBJECTS)]
        sentences.append(f"The {subject} of unit {n} runs at {n % 97 + 3} bar and was serviced in week {n % 52 + 1}. ")
        n += 1
    text = "".join(sentences)[:chars]
    return [{"doc_id": f"manual {i}", "text": text[at:at + DOC_CHARS]}
            for i, at in enumerate(range(0, len(text), DOC_CHARS))]


async def setup(client: object, corpus_chars: int, failures: int) -> None:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    documents = corpus(corpus_chars)
    for at in range(0, len(documents), 10):  # about 500 KB a request, under the 1 MB body limit
        (await client.post("/v1/ingest", json={"documents": documents[at:at + 10]})).raise_for_status()
    for n in range(failures):  # answers their own context does not support: the eval loop looks them up
        answer = f"The {SUBJECTS[n % len(SUBJECTS)]} of unit {n * 7} runs at {n + 200} bar."
        chunk = {"id": "S1", "text": f"The {SUBJECTS[n % len(SUBJECTS)]} of unit {n * 7} was painted blue."}
        (await client.post("/v1/verify", json={"answer": answer, "chunks": [chunk]})).raise_for_status()


async def abandoned(url: str, pid: int, calls: int, watch_s: float) -> None:
    import httpx

    async def give_up() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=1.0, headers={"X-API-Key": READ_ONLY}) as client:
            try:
                await client.get("/v1/eval/report?limit=10")
                print("abandoned: a call was answered within 1 s (the eval was cached or quick)")
            except httpx.TimeoutException:
                pass  # the client closes the connection here

    before = cpu_seconds(pid)
    await asyncio.gather(*(give_up() for _ in range(calls)))
    gone = time.monotonic()
    during = cpu_seconds(pid) - before
    await asyncio.sleep(1.0)
    start = cpu_seconds(pid)
    last, idle_at = start, None
    per_second = []
    while time.monotonic() - gone < watch_s:
        await asyncio.sleep(1.0)
        now = cpu_seconds(pid)
        per_second.append(now - last)
        if now - last < 0.05:
            idle_at = time.monotonic() - gone
            break
        last = now
    after = cpu_seconds(pid) - start
    print(f"abandoned: {calls} GET /v1/eval/report?limit=10 given up after 1 s; server CPU while they were open "
          f"{during:.2f} s; from 1 s after the disconnect: {after:.2f} CPU s "
          + (f"(idle {idle_at:.1f} s after the disconnect)" if idle_at is not None else
             f"(still busy after {watch_s:.0f} s)")
          + f"; CPU per second after it: {', '.join(f'{x:.2f}' for x in per_second[:10])}")


async def budget(url: str) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=900.0, headers={"X-API-Key": READ_ONLY}) as client:
        started = time.perf_counter()
        response = await client.get("/v1/eval?limit=10")
        seconds = time.perf_counter() - started
    evidence = response.json().get("meta", {}).get("evidence") if response.status_code == 200 else response.text
    print(f"budget: GET /v1/eval?limit=10 (read-only key): HTTP {response.status_code} in {seconds:.1f} s; "
          f"meta.evidence: {evidence}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--corpus-chars", type=int, default=980_000,
                        help="characters ingested (the stored passages come to slightly more; the limit is 1M)")
    parser.add_argument("--failures", type=int, default=10)
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--watch", type=float, default=300.0, help="seconds to watch the server's CPU at most")
    parser.add_argument("--skip", default="", help="comma-separated phases to skip: abandoned, budget")
    parser.add_argument("--serve-option", action="append", default=[], help="an option for `groundwire serve`")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    import httpx

    import groundwire

    print(f"groundwire from {Path(groundwire.__file__).parent}; load {os.getloadavg()[0]:.2f}")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        options = ["--api-key", f"{KEY}:bench", "--api-key", f"{READ_ONLY}:bench:ro", *args.serve_option]
        server = start_server(port, args.scorer, Path(tmp), options)
        try:
            async with httpx.AsyncClient(base_url=url, timeout=300.0, headers={"X-API-Key": KEY}) as client:
                await wait_ready(client, server, 180)
                await setup(client, args.corpus_chars, args.failures)
            print(f"setup: {args.corpus_chars} characters ingested, {args.failures} failed verifies logged")
            if "abandoned" not in skip:
                await abandoned(url, server.pid, args.calls, args.watch)
            if "budget" not in skip:
                await budget(url)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
