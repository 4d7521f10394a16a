"""How long the service's background refit (`serve --profiles DIR --learn`) takes on a scope with many verdicts.

    .venv/bin/python bench/refit_time.py [--copies 13]

Logs examples/labelled.jsonl's 80 answers `--copies` times into a fresh service (lexical scorer; each copy's chunks
made distinct, so each copy is its own source document), each with a reviewer's verdict, then times the refit as the
service runs it (calibration.learn.refit_scope: the claim rows read from the logged reports, adapt's fit, the guard,
the new version written). Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
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
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    (tmp / "profiles").mkdir()
    settings = ServiceSettings(db_url=f"sqlite:///{tmp / 'service.db'}", api_keys={"key": "alpha"},
                               check=CheckSettings(scorer="lexical"), profiles=str(tmp / "profiles"))
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
        logged, unchecked, _ = logged_claim_rows(runtime.store, scope="alpha", model_id=runtime.verifier.scorer.model_id)
        print(f"read {len(logged)} claim rows from the log ({len(unchecked)} answers to check again) in "
              f"{time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        learned = refit_scope(runtime.store, scope="alpha", folder=tmp / "profiles" / "alpha",
                              in_force=runtime.verifier_for("alpha"), settings=settings.check)
        print(f"refit: {verdicts} verdicts in {time.perf_counter() - started:.2f} s -> "
              f"{learned.version or 'refused'}: {learned.reason}")


if __name__ == "__main__":
    main()
