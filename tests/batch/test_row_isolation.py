"""No row lost (issue 34): a row the check fails on is an error record in its place, in every batch path, and the
others are checked as usual. A rerun with the same output skips the rows it holds.

The failing row is made by a verifier that raises on one answer (as canonical figures once did on "2010-13-45"):
the isolation under test is the batch paths', whatever the cause of the failure.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from groundwire.batch import CheckOptions, run_batch
from groundwire.batch.worker import Worker
from groundwire.cli.exit_status import CommandOutcome
from groundwire.cli.main import run_cli
from groundwire.config import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.foundation.errors import ErrorCode
from groundwire.foundation.types import Chunk
from groundwire.frames import averify_many, verify_many
from groundwire.pipeline import CheckItem, build_verifier, check_many

CRASH = "This answer makes the check fail."
GOOD = 249


def _rows(crashing: int = 1) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"id": f"r{n}", "context": [f"Order {n} ships in {n % 7 + 1} days."], "answer": f"Order {n} ships in {n % 7 + 1} days."}
        for n in range(GOOD)
    ]
    for n in range(crashing):
        rows.insert(100 + n, {"id": f"crash{n}", "context": ["Order 1 ships in 2 days."], "answer": CRASH})
    return rows


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def crashing_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verifier.plan raises on the CRASH answer: the first step of every check, in this process."""
    plan = Verifier.plan

    def failing_plan(self: Verifier, answer: str, *args: object, **kwargs: object) -> object:
        if answer == CRASH:
            raise IndexError("tuple index out of range")
        return plan(self, answer, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Verifier, "plan", failing_plan)


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _check_input(source: Path, output: Path) -> int:
    """`groundwire check --input SOURCE --output OUTPUT`, in this process (the crash is patched in here)."""
    return run_cli(["check", "--input", str(source), "--output", str(output), "--scorer", "lexical"])


def test_check_input_writes_every_row_and_an_error_record_for_the_one_that_fails(tmp_path, crashing_plan) -> None:
    out = tmp_path / "out.jsonl"
    status = _check_input(_write(tmp_path / "rows.jsonl", _rows()), out)
    assert status == CommandOutcome.ROWS_IN_ERROR.exit_status == 5
    records = _records(out)
    assert len(records) == GOOD + 1
    failed = [r for r in records if "error" in r]
    assert [r["id"] for r in failed] == ["crash0"]
    assert failed[0]["error_code"] == ErrorCode.INTERNAL_ERROR.value and "IndexError" in failed[0]["error"]
    assert "score" not in failed[0]
    assert sum("score" in r for r in records) == GOOD
    assert [r["id"] for r in records] == [row["id"] for row in _rows()]  # input order, nothing after it lost


def test_every_row_failing_has_its_own_exit_status(tmp_path, crashing_plan) -> None:
    rows = [{"id": "crash", "context": ["x"], "answer": CRASH}, {"id": "torn", "context": ["x"], "answer": 3}]
    out = tmp_path / "out.jsonl"
    assert _check_input(_write(tmp_path / "rows.jsonl", rows), out) == CommandOutcome.ALL_ROWS_IN_ERROR.exit_status == 6
    assert [r["error_code"] for r in _records(out)] == ["internal_error", "invalid_row"]
    # A usage error is 2, and writes nothing.
    assert run_cli(["check", "--input", str(tmp_path / "missing.jsonl"), "--output", str(out)]) == 2


def test_a_rerun_with_the_same_output_skips_what_it_holds_and_does_the_rest(tmp_path, crashing_plan, capsys) -> None:
    source = _write(tmp_path / "rows.jsonl", _rows())
    out = tmp_path / "out.jsonl"
    _check_input(source, out)
    first = out.read_text(encoding="utf-8").splitlines()
    # As if the first run had been killed after 60 records, the last one half written.
    out.write_text("\n".join(first[:60]) + "\n" + first[60][:25], encoding="utf-8")
    assert _check_input(source, out) == CommandOutcome.ROWS_IN_ERROR.exit_status
    records = _records(out)
    assert [r["id"] for r in records] == [r["id"] for r in map(json.loads, first)]
    assert _records(out)[:60] == [json.loads(line) for line in first[:60]]  # what was written stays as it was
    # A third run has nothing left to do, and still exits with the row in error the output holds (issue 57: a rerun
    # of a batch that had stopped exited 0 on an output with failed rows).
    capsys.readouterr()
    assert _check_input(source, out) == CommandOutcome.ROWS_IN_ERROR.exit_status and len(_records(out)) == GOOD + 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"checked 0 of {GOOD + 1} rows this run" in err and f"found {GOOD + 1} rows done" in err


def test_check_many_yields_a_coded_failure_and_goes_on(crashing_plan) -> None:
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    chunks = [Chunk("S1", "Order 1 ships in 2 days.")]
    answers = ["Order 1 ships in 2 days.", CRASH, "Order 1 ships."]
    checked = list(check_many(verifier, [CheckItem(answer, chunks) for answer in answers]))
    assert [c.code for c in checked] == [None, ErrorCode.INTERNAL_ERROR, None]
    assert checked[0].report is not None and checked[2].report is not None and checked[1].report is None


def test_verify_many_and_averify_many_keep_every_row(crashing_plan) -> None:
    frame = pd.DataFrame(_rows())
    for results in (verify_many(frame, scorer="lexical"), asyncio.run(averify_many(frame, scorer="lexical"))):
        assert len(results) == GOOD + 1 and list(results.index) == list(frame.index)
        failed = results[results["error"].notna()]
        assert list(frame.loc[failed.index, "id"]) == ["crash0"]
        assert list(failed["error_code"]) == ["internal_error"] and failed["score"].isna().all()
        assert results["score"].notna().sum() == GOOD


def test_the_batch_engines_worker_records_the_failing_row_and_checks_the_rest(tmp_path, crashing_plan) -> None:
    out = tmp_path / "out.parquet"
    summary = run_batch(_write(tmp_path / "rows.jsonl", _rows()), out, check=CheckOptions(CheckSettings(scorer="lexical")))
    assert (summary.rows_in, summary.done, summary.errors) == (GOOD + 1, GOOD, 1)
    done = pq.read_table(out).column("id").to_pylist()
    assert len(done) == GOOD and "crash0" not in done
    [error] = [json.loads(line) for line in summary.errors_path.read_text(encoding="utf-8").splitlines()]
    assert error["id"] == "crash0" and error["code"] == "internal_error" and "IndexError" in error["error"]
    assert json.loads(error["raw"])["answer"] == CRASH  # the row as it came in: nothing lost
    # A rerun has nothing left to do, and its summary still counts the earlier run's rows: its exit status covers them.
    again = run_batch(_write(tmp_path / "rows.jsonl", _rows()), out, check=CheckOptions(CheckSettings(scorer="lexical")))
    assert (again.done, again.errors, again.skipped) == (0, 0, GOOD + 1)
    assert (again.written_before, again.errors_before, again.all_errors, again.all_written) == (GOOD, 1, 1, GOOD)
    assert run_cli(["batch", "--input", str(tmp_path / "rows.jsonl"), "--output", str(out), "--scorer", "lexical",
                    "--no-progress"]) == CommandOutcome.ROWS_IN_ERROR.exit_status
    # What the Ray engine's actors run: the same Worker, row by row.
    worker = Worker(fmt="jsonl", options=CheckOptions(CheckSettings(scorer="lexical")))
    line = json.dumps({"id": "crash", "context": ["x"], "answer": CRASH})
    [row] = worker.process([{"line": line, "where": "rows.jsonl:1", "utf8": True}])
    assert (row["status"], row["code"]) == ("error", "internal_error")
