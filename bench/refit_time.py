"""How long the service's background refit (`serve --profiles DIR --learn`) takes on a scope with many verdicts.

    .venv/bin/python bench/refit_time.py [--copies 13] [--probes 200]

Logs examples/labelled.jsonl's 80 answers `--copies` times into a fresh service (lexical scorer; each copy's chunks
made distinct, so each copy is its own source document), each with a reviewer's verdict, then times the refit as the
service runs it (calibration.learn.refit_scope: the claim rows read from the logged reports, adapt's fit, the guard,
the new version written).

Then whether a request waits for a refit (issue 56: "no request waits for it"): the latency of `--probes` small
verifies sent one after another, first with nothing else running, then while the service's own background refitter
(`serve --learn`'s Learner: a niced process of its own, waited on by a thread) refits the scope again and again. It
prints the median and p95 of each and their ratio. Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient

from groundwire.calibration.learn import logged_claim_rows, refit_scope
from groundwire.data.rows import read_eval_jsonl
from groundwire.pipeline import CheckSettings
from groundwire.service import ServiceSettings, create_app

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=13, help="times the 80 labelled answers are logged")
    parser.add_argument("--probes", type=int, default=200, help="small verifies timed alone and during refits")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    (tmp / "profiles" / "alpha").mkdir(parents=True)
    # learn_every past the verdicts logged: the refits below are started by hand, the bench's, not by the count
    settings = ServiceSettings(db_url=f"sqlite:///{tmp / 'service.db'}", api_keys={"key": "alpha"},
                               check=CheckSettings(scorer="lexical"), profiles=str(tmp / "profiles"), learn=True,
                               learn_every=10**9)
    rows = list(read_eval_jsonl(ROOT / "examples" / "labelled.jsonl"))
    headers = {"X-API-Key": "key"}
    app = create_app(settings)
    with TestClient(app) as client:
        started = time.perf_counter()
        for copy in range(args.copies):
            for row in rows:
                chunks = [{"id": f"S{i + 1}", "text": f"{text} (copy {copy})"} for i, text in enumerate(row.context)]
                checked = client.post("/v1/verify", headers=headers, json={
                    "answer": row.answer, "question": row.question, "task": row.task, "chunks": chunks})
                client.post("/v1/feedback", headers=headers, json={"request_id": checked.json()["request_id"],
                                                                   "faithful": not row.hallucinated})
        verdicts = args.copies * len(rows)
        print(f"logged {verdicts} verdicts in {time.perf_counter() - started:.1f} s")
        runtime = app.state.runtime
        started = time.perf_counter()
        logged, unchecked, _, _, _ = logged_claim_rows(runtime.store, scope="alpha",
                                                    model_id=runtime.verifier.scorer.model_id)
        print(f"read {len(logged)} claim rows from the log ({len(unchecked)} answers to check again) in "
              f"{time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        learned = refit_scope(runtime.store, scope="alpha", folder=tmp / "profiles" / "alpha",
                              in_force=runtime.verifier_for("alpha"), settings=settings.check)
        print(f"refit: {verdicts} verdicts in {time.perf_counter() - started:.2f} s -> "
              f"{learned.version or 'refused'}: {learned.reason}")

        small = {"answer": "Refunds are accepted within 30 days.",
                 "chunks": [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]}

        def probe() -> float:
            sent = time.perf_counter()
            assert client.post("/v1/verify", headers=headers, json=small).status_code == 200
            return time.perf_counter() - sent

        alone = [probe() for _ in range(args.probes)]
        learner = runtime.learner
        stop, refits = threading.Event(), [0]

        def refit_again_and_again() -> None:  # the service's own refitter, kept busy for the whole probe
            while not stop.is_set():
                learner.start("alpha")
                learner.wait()
                refits[0] += 1

        busy = threading.Thread(target=refit_again_and_again, daemon=True)
        busy.start()
        during = [probe() for _ in range(args.probes)]
        stop.set()
        busy.join()

        def p95(xs: list[float]) -> float:
            return statistics.quantiles(xs, n=20)[-1]

        print(f"small verifies alone: median {statistics.median(alone) * 1000:.1f} ms, p95 {p95(alone) * 1000:.1f} ms")
        print(f"during {refits[0]} background refits: median {statistics.median(during) * 1000:.1f} ms, "
              f"p95 {p95(during) * 1000:.1f} ms; p95 ratio {p95(during) / p95(alone):.2f}")


if __name__ == "__main__":
    main()
