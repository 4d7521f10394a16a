"""The cost of the largest request the service accepts, and of refusing a larger one (issue 14).

    .venv/bin/python bench/request_cost.py                              # default (bundled) scorer
    .venv/bin/python bench/request_cost.py --scorer lexical             # quick look
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/request_cost.py    # another tree, same measurements

With the default ServiceSettings limits (max_text_chars 100,000, max_context_chars 400,000, max_chunks 200,
max_claims 100, max_pairs 1,000), in process (FastAPI's TestClient, a fresh SQLite log):
  1. splitting a 100,000-character single-line answer (Verifier.workload) and the time POST /v1/verify takes to
     refuse it (413, too many claims);
  2. the largest accepted request: max_claims claims (max_claims binds long before max_text_chars) against as many
     context chunks as keep claims x windows within max_pairs; its wall time and the size of its request-log
     row (the sum of the row's column lengths).
Answers and chunks come from bench/scale.py's generator. Nothing is asserted; the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import groundwire  # the tree under test (PYTHONPATH's), bound before scale.py puts this tree's src/ first
from scale import make_answer


def long_answer(chars: int) -> str:
    """One line of generated claims, cut at the last sentence end before `chars`."""
    text, seed = "", 0
    while len(text) < chars:
        text += make_answer(50, 5, seed)["answer"] + " "
        seed += 1
    return text[: text.rfind(".", 0, chars) + 1]


def largest_accepted(verifier: object, max_claims: int, max_pairs: int, max_chunks: int) -> dict:
    """max_claims claims against the most chunks whose (claim, window) pairs stay within max_pairs."""
    best = None
    for chunks in range(1, max_chunks + 1):
        row = make_answer(max_claims, chunks, seed=7)
        work = verifier.workload(row["answer"], row["context"])  # type: ignore[attr-defined]
        if work.pairs > max_pairs:
            break
        if work.claims == max_claims:
            best = (row, work)
    if best is None:
        raise RuntimeError("no request of max_claims claims fits max_pairs")
    row, work = best
    print(f"largest accepted: {work.claims} claims, {len(row['context'])} chunks, {work.windows} windows, "
          f"{work.pairs} pairs; answer {len(row['answer']):,} chars, context {sum(map(len, row['context'])):,} chars")
    return {"answer": row["answer"], "chunks": [{"id": f"S{i}", "text": t} for i, t in enumerate(row["context"], 1)]}


def row_bytes(db: Path, request_id: str) -> int:
    with sqlite3.connect(db) as conn:
        tables = [name for (name,) in conn.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            columns = [c[1] for c in conn.execute(f"pragma table_info({table})")]
            if "id" not in columns:
                continue
            row = conn.execute(f"select * from {table} where id = ?", (request_id,)).fetchone()
            if row is not None:
                return sum(len(v) if isinstance(v, (str, bytes)) else len(str(v)) for v in row if v is not None)
    raise RuntimeError(f"request {request_id} is not in the log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default=None, help="scorer name (default: the default scorer)")
    parser.add_argument("--chars", type=int, default=100_000, help="length of the over-limit answer")
    args = parser.parse_args()

    from dataclasses import replace

    from fastapi.testclient import TestClient

    from groundwire.service import ServiceSettings, create_app

    print(f"groundwire from {Path(groundwire.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp, "log.db")
        settings = ServiceSettings(db_url=f"sqlite:///{db}")
        if args.scorer:
            settings = replace(settings, check=settings.check.overridden(scorer=args.scorer))
        with TestClient(create_app(settings)) as client:
            verifier = client.app.state.runtime.verifier
            print(f"scorer {verifier.model_id}")
            client.post("/v1/verify", json={"answer": "The sky is blue.", "chunks": [{"id": "S1", "text": "Blue."}]})

            answer = long_answer(args.chars)
            context = [{"id": "S1", "text": "The routers ship with firmware 2.1."}]
            started = time.perf_counter()
            work = verifier.workload(answer, [c["text"] for c in context])
            split_s = time.perf_counter() - started
            print(f"split {len(answer):,}-char answer (workload): {split_s:.2f} s, {work.claims} claims")
            started = time.perf_counter()
            refused = client.post("/v1/verify", json={"answer": answer + " ", "chunks": context})
            print(f"refuse it: HTTP {refused.status_code} {refused.json().get('error', {}).get('code', '')} "
                  f"in {time.perf_counter() - started:.2f} s")

            body = largest_accepted(verifier, settings.max_claims, settings.max_pairs, settings.max_chunks)
            started = time.perf_counter()
            accepted = client.post("/v1/verify", json=body)
            elapsed = time.perf_counter() - started
            if accepted.status_code != 200:
                raise RuntimeError(f"largest request refused: {accepted.status_code} {accepted.text[:300]}")
            print(f"largest accepted: HTTP 200 in {elapsed:.1f} s; request-log row "
                  f"{row_bytes(db, accepted.json()['request_id']):,} bytes")


if __name__ == "__main__":
    main()
