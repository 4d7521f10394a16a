"""How the cost of one request grows with the length of its answer, its chunk text or an ingested document, for
the inputs that used to grow superlinearly (issue 20, item 2; issue 38 for chunks and documents).

    .venv/bin/python bench/growth.py                        # the answer grows (lexical scorer, issue 20's figures)
    .venv/bin/python bench/growth.py --where chunk          # one chunk grows, 12.5k to 400k characters (issue 38)
    .venv/bin/python bench/growth.py --where document       # an ingested document grows; verify by doc_ids
    .venv/bin/python bench/growth.py --scorer default       # the bundled model
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/growth.py   # another tree, same measurements

With --where chunk or document the answer is one short claim and the pattern is the context (in pieces of 200k,
the most one chunk or document holds), up to the service's max_context_chars (400k); the target there is at most 5x the time for 4x the text (a ratio near 2 a step).

Each pattern is posted to /v1/verify in process (FastAPI's TestClient over the app `groundwire serve` runs, default
ServiceSettings limits, a fresh SQLite log) at 5k, 10k, 20k, 40k and 80k characters, so what is timed is the whole
service path: the pre-checks, the plan the limits read, and either the refusal (413) or the verification (200).
It prints the status and seconds per size, and the ratio between successive sizes: linear growth is a ratio near
2 (the issue's target is at most 2.5 at each step). Once a size takes longer than --give-up seconds, the pattern's
larger sizes are skipped. Nothing is asserted; the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import groundwire  # the tree under test (PYTHONPATH's)
from request_cost import long_answer

SIZES = (5_000, 10_000, 20_000, 40_000, 80_000)
CONTEXT_SIZES = (12_500, 25_000, 50_000, 100_000, 200_000, 400_000)
SHORT_ANSWER = "The order number is 12345 and the plan costs 19 dollars."
CONTEXT = [{"id": "S1", "text": "The plan costs 19 dollars. x is y. The routers ship with firmware 2.1."}]


def _fit(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


PATTERNS: dict[str, Callable[[int], str]] = {
    "newlines + 'x is y.'": lambda n: "\n" * (n - 7) + "x is y.",
    "run of integers": lambda n: " ".join(map(str, range(n)))[:n],
    "'1. ' * n": lambda n: _fit("1. ", n),
    "ordinary prose": long_answer,
    "one long token": lambda n: "a" * n,
    "many short sentences": lambda n: _fit("It is 5. ", n),
    "one long claim": lambda n: "The plan costs " + _fit("very ", n - 26) + "much money.",
    "citation markers": lambda n: "The plan costs 19 dollars" + _fit(" [S1]", n - 26) + ".",
    "bullet lines": lambda n: _fit("- The plan costs 19 dollars.\n", n),
    "'x\\n' lines": lambda n: _fit("x\n", n),
}
CONTEXT_PATTERNS: dict[str, Callable[[int], str]] = {
    "'1234567890 ' * n": lambda n: _fit("1234567890 ", n),
    "'[1][2][3]' * n": lambda n: _fit("[1][2][3]", n),
    "ordinary prose": long_answer,
    "long numbers": lambda n: _fit("Order 12345678901234567890123456789012345 shipped. ", n),
    "dates and money": lambda n: _fit("On March 5, 2024 it cost USD 49 and 3,600 euros. ", n),
    "one long token": lambda n: "a" * n,
}


def _pieces(text: str) -> list[str]:
    """The text in pieces of at most 200k characters, the most one chunk or document may hold (models.MAX_TEXT)."""
    return [text[at : at + 200_000] for at in range(0, len(text), 200_000)]


def _request(client: Any, where: str, text: str) -> Any:
    """One verify with the pattern as the answer, the chunks, or ingested documents (ingest, then doc_ids)."""
    if where == "answer":
        return client.post("/v1/verify", json={"answer": text, "chunks": CONTEXT})
    if where == "chunk":
        chunks = [{"id": f"S{n}", "text": piece} for n, piece in enumerate(_pieces(text), start=1)]
        return client.post("/v1/verify", json={"answer": SHORT_ANSWER, "chunks": chunks})
    documents = [{"doc_id": f"doc-{len(text)}-{hash(text) & 0xFFFF}-{n}", "text": piece}
                 for n, piece in enumerate(_pieces(text))]
    ingested = client.post("/v1/ingest", json={"documents": documents})
    if ingested.status_code != 200:
        return ingested
    return client.post("/v1/verify", json={"answer": SHORT_ANSWER, "doc_ids": [d["doc_id"] for d in documents]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default="lexical", help="scorer name ('default': the bundled model)")
    parser.add_argument("--give-up", type=float, default=30.0, help="skip larger sizes after a size this slow")
    parser.add_argument("--only", default=None, help="run the patterns whose name contains this")
    parser.add_argument("--where", choices=("answer", "chunk", "document"), default="answer",
                        help="what grows: the answer, one chunk's text, or an ingested document's")
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from groundwire.service import ServiceSettings, create_app

    print(f"groundwire from {Path(groundwire.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        settings = ServiceSettings(db_url=f"sqlite:///{Path(tmp, 'log.db')}")
        if args.scorer != "default":
            settings = replace(settings, check=settings.check.overridden(scorer=args.scorer))
        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            print(f"scorer {client.app.state.runtime.verifier.model_id}")
            client.post("/v1/verify", json={"answer": "The sky is blue.", "chunks": CONTEXT})
            sizes, patterns = (SIZES, PATTERNS) if args.where == "answer" else (CONTEXT_SIZES, CONTEXT_PATTERNS)
            header = "".join(f"{size / 1000:>9g}k" for size in sizes)
            print(f"\n{args.where + ': ' + 'pattern':<24}{header}   ratios (each size / the one before)")
            for name, make in patterns.items():
                if args.only and args.only not in name:
                    continue
                cells, times = [], []
                for size in sizes:
                    if times and times[-1] > args.give_up:
                        cells.append(f"{'skipped':>10}")
                        continue
                    text = make(size)
                    started = time.perf_counter()
                    response = _request(client, args.where, text)
                    elapsed = time.perf_counter() - started
                    times.append(elapsed)
                    cells.append(f"{response.status_code:>4} {elapsed:5.2f}")
                ratios = " ".join(f"{b / a:4.1f}" if a > 0 else "  - " for a, b in itertools.pairwise(times))
                print(f"{name:<24}{''.join(cells)}   {ratios}", flush=True)


if __name__ == "__main__":
    main()
