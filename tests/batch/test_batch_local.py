"""The local engine end to end: totals add up, bad rows are reported by id, re-runs resume."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from batch_rows import BAD_LINES, GOOD_ROWS, write_jsonl
from typer.testing import CliRunner

from groundwire.batch import CheckOptions, run_batch
from groundwire.batch.sink import ResultSink
from groundwire.cli.exit_status import CommandOutcome
from groundwire.config import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.data.results import RESULT_FIELDS
from groundwire.foundation.errors import InputError
from groundwire.scoring import get_scorer

LEXICAL = CheckOptions(CheckSettings(scorer="lexical"))


def read_results(output: Path) -> dict[str, dict]:
    rows = pq.read_table(output).to_pylist()
    by_id = {row["id"]: row for row in rows}
    assert len(by_id) == len(rows), "an id was written twice"
    return by_id


def read_errors(path: Path) -> dict[str, dict]:
    return {rec["id"]: rec for rec in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_every_row_is_done_or_reported(mixed_jsonl, tmp_path):
    out = tmp_path / "results.parquet"
    summary = run_batch(mixed_jsonl, out, check=LEXICAL)
    assert summary.rows_in == len(GOOD_ROWS) + len(BAD_LINES)
    assert summary.balanced and summary.skipped == 0
    results, errors = read_results(out), read_errors(summary.errors_path)
    good_ids = {str(row["id"]) for row in GOOD_ROWS}
    assert set(results) == good_ids
    assert len(errors) == len(BAD_LINES)
    named = {expected for _, expected in BAD_LINES if expected is not None}
    assert named <= set(errors)
    positional = set(errors) - named
    assert all(e.startswith("logs.jsonl:") for e in positional) and len(positional) == 2
    # The raw line travels with its error, so a fixed row can be re-submitted as it was.
    assert {rec["raw"] for rec in errors.values()} == {line for line, _ in BAD_LINES}


def test_results_match_the_verifier_called_directly(mixed_jsonl, tmp_path):
    out = tmp_path / "results.parquet"
    run_batch(mixed_jsonl, out, check=LEXICAL)
    assert pq.read_schema(next(out.glob("part-*.parquet"))).names == [name for name, _ in RESULT_FIELDS]
    verifier = Verifier(get_scorer("lexical"))
    results = read_results(out)
    for row in GOOD_ROWS:
        chunks = [c["text"] if isinstance(c, dict) else c for c in row["context"]]
        report = verifier.verify(row["answer"], chunks, question=row["question"])
        got = results[str(row["id"])]
        assert got["score"] == pytest.approx(report.score)
        assert got["decision"] == report.route.value
        assert got["n_claims"] == len(report.claims)
        assert json.loads(got["report"])["answer"] == row["answer"]


def test_rerun_skips_everything_and_adds_nothing(mixed_jsonl, tmp_path):
    out = tmp_path / "results.parquet"
    first = run_batch(mixed_jsonl, out, check=LEXICAL)
    errors_before = first.errors_path.read_text(encoding="utf-8")
    second = run_batch(mixed_jsonl, out, check=LEXICAL)
    assert (second.done, second.errors, second.skipped) == (0, 0, first.rows_in)
    assert second.errors_path.read_text(encoding="utf-8") == errors_before
    assert len(read_results(out)) == first.done


def test_resume_after_a_partial_run_gives_the_same_results_as_one_run(tmp_path):
    full = write_jsonl(tmp_path / "full.jsonl", GOOD_ROWS)
    # An interrupted run is one that saw only the first rows; its parts and a torn errors line remain.
    head = write_jsonl(tmp_path / "head.jsonl", GOOD_ROWS[:3])
    resumed = tmp_path / "resumed.parquet"
    run_batch(head, resumed, check=LEXICAL)
    errors_path = tmp_path / "resumed.parquet.errors.jsonl"
    errors_path.write_text('{"id": "half-writ', encoding="utf-8")
    (resumed / "part-crashed.parquet.tmp").write_bytes(b"PAR1 unfinished")
    summary = run_batch(full, resumed, check=LEXICAL)
    assert (summary.done, summary.skipped, summary.errors) == (len(GOOD_ROWS) - 3, 3, 0)
    assert not list(resumed.glob("*.tmp"))
    assert errors_path.read_text(encoding="utf-8") == ""  # the torn line was cut, not parsed
    once = tmp_path / "once.parquet"
    run_batch(full, once, check=LEXICAL)
    assert read_results(resumed) == read_results(once)


def test_duplicate_ids_keep_the_first_and_report_the_rest(tmp_path):
    rows = [GOOD_ROWS[0], {**GOOD_ROWS[1], "id": GOOD_ROWS[0]["id"]}, GOOD_ROWS[2]]
    summary = run_batch(write_jsonl(tmp_path / "dup.jsonl", rows), tmp_path / "out.parquet", check=LEXICAL)
    assert (summary.done, summary.errors) == (2, 1)
    assert "duplicate id" in read_errors(summary.errors_path)["r1"]["error"]
    assert json.loads(read_results(tmp_path / "out.parquet")["r1"]["report"])["answer"] == GOOD_ROWS[0]["answer"]


def test_parquet_input_with_a_null_answer(tmp_path):
    rows = [{"id": str(r["id"]), "question": r["question"], "answer": r["answer"],
             "context": [c["text"] if isinstance(c, dict) else c for c in r["context"]]} for r in GOOD_ROWS[:4]]
    rows.append({"id": "null-answer", "question": None, "answer": None, "context": ["a chunk"]})
    path = tmp_path / "logs.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    summary = run_batch(path, tmp_path / "out.parquet", check=LEXICAL)
    assert (summary.rows_in, summary.done, summary.errors) == (5, 4, 1)
    error = read_errors(summary.errors_path)["null-answer"]
    assert "'answer' must be a string" in error["error"]
    assert json.loads(error["raw"])["context"] == ["a chunk"]


def test_output_that_is_a_file_is_refused(mixed_jsonl, tmp_path):
    (tmp_path / "taken.parquet").write_text("not a directory")
    with pytest.raises(InputError, match="exists and is a file"):
        run_batch(mixed_jsonl, tmp_path / "taken.parquet", check=LEXICAL)


def test_sink_flushes_parts_as_it_goes(tmp_path):
    sink = ResultSink(tmp_path / "out", errors_path=tmp_path / "errors.jsonl", flush_rows=2)
    blank = {name: None for name, _ in RESULT_FIELDS}
    for n in range(5):
        sink.add([{**blank, "id": f"x{n}", "score": 0.5, "status": "done", "error": None, "raw": None}])
    assert len(list((tmp_path / "out").glob("part-*.parquet"))) == 2  # 4 rows on disk before close
    sink.close()
    assert pq.read_table(tmp_path / "out").num_rows == 5


def test_cli_reports_totals_and_exits_5_when_some_rows_errored(mixed_jsonl, tmp_path):
    from groundwire.cli.main import app

    out = tmp_path / "results.parquet"
    args = ["batch", "--input", str(mixed_jsonl), "--output", str(out), "--scorer", "lexical", "--no-progress"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == CommandOutcome.ROWS_IN_ERROR.exit_status == 5, first.output
    assert f"rows in {len(GOOD_ROWS) + len(BAD_LINES)} = done {len(GOOD_ROWS)} + errors {len(BAD_LINES)}" in first.output
    again = CliRunner().invoke(app, args + ["--prune", "lexical"])
    assert again.exit_code == 5, again.output  # the first run's rows in error are still in the output
    assert f"skipped (earlier runs) {len(GOOD_ROWS) + len(BAD_LINES)}" in again.output
    assert f"{len(GOOD_ROWS)} written, {len(BAD_LINES)} in error" in again.output
    refused = CliRunner().invoke(app, args + ["--engine", "spark"])
    assert refused.exit_code != 0


def test_cli_strict_refuses_a_malformed_row_before_any_work(mixed_jsonl, tmp_path):
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["batch", "--input", str(mixed_jsonl), "--output", str(out), "--scorer",
                                      "lexical", "--strict", "--no-progress"])
    assert result.exit_code != 0 and isinstance(result.exception, InputError)
    assert f"{mixed_jsonl.name}:" in str(result.exception) and "--strict" in str(result.exception)
    assert not out.exists() or not any(out.iterdir())
