"""How the cost of one request grows with the answer's length, for the inputs that used to grow superlinearly
(issue 20, item 2).

    .venv/bin/python bench/growth.py                        # lexical scorer (the issue's measurements)
    .venv/bin/python bench/growth.py --scorer default       # the bundled model
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/growth.py   # another tree, same measurements

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
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import groundwire  # the tree under test (PYTHONPATH's)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from request_cost import long_answer  # noqa: E402

SIZES = (5_000, 10_000, 20_000, 40_000, 80_000)
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
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default="lexical", help="scorer name ('default': the bundled model)")
    parser.add_argument("--give-up", type=float, default=30.0, help="skip larger sizes after a size this slow")
    parser.add_argument("--only", default=None, help="run the patterns whose name contains this")
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
            header = "".join(f"{size // 1000:>9}k" for size in SIZES)
            print(f"\n{'pattern':<24}{header}   ratios (each size / the one before)")
            for name, make in PATTERNS.items():
                if args.only and args.only not in name:
                    continue
                cells, times = [], []
                for size in SIZES:
                    if times and times[-1] > args.give_up:
                        cells.append(f"{'skipped':>10}")
                        continue
                    answer = make(size)
                    started = time.perf_counter()
                    response = client.post("/v1/verify", json={"answer": answer, "chunks": CONTEXT})
                    elapsed = time.perf_counter() - started
                    times.append(elapsed)
                    cells.append(f"{response.status_code:>4} {elapsed:5.2f}")
                ratios = " ".join(f"{b / a:4.1f}" if a > 0 else "  - " for a, b in itertools.pairwise(times))
                print(f"{name:<24}{''.join(cells)}   {ratios}", flush=True)


if __name__ == "__main__":
    main()
