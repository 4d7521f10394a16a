"""The Ray engine on a local Ray instance gives the local engine's results, row by row."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from batch_rows import BAD_LINES, GOOD_ROWS, write_jsonl

from groundwire.batch import CheckOptions, run_batch
from groundwire.batch.engines import EngineOptions
from groundwire.cli.exit_status import CommandOutcome
from groundwire.config import CheckSettings

# Small batches so that rows are spread over both actors and come back out of order.
SMALL = EngineOptions(batch_size=2, num_actors=2)


def rows_by_id(path):
    return {row["id"]: row for row in pq.read_table(path).to_pylist()}


def errors_by_id(path):
    return {rec["id"]: rec for rec in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_ray_matches_local_row_by_row_with_pruning(ray_local, mixed_jsonl, tmp_path):
    check = CheckOptions(CheckSettings(scorer="lexical", pruner="lexical"))
    local = run_batch(mixed_jsonl, tmp_path / "local.parquet", check=check)
    distributed = run_batch(mixed_jsonl, tmp_path / "ray.parquet", engine="ray", check=check, engine_options=SMALL)
    assert distributed.balanced
    assert (distributed.rows_in, distributed.done, distributed.errors) == (local.rows_in, local.done, local.errors)
    local_rows, ray_rows = rows_by_id(tmp_path / "local.parquet"), rows_by_id(tmp_path / "ray.parquet")
    assert set(ray_rows) == {str(r["id"]) for r in GOOD_ROWS}
    for row_id, row in local_rows.items():
        assert ray_rows[row_id] == row, row_id
    assert errors_by_id(distributed.errors_path) == errors_by_id(local.errors_path)


def test_ray_resumes_and_reads_parquet(ray_local, tmp_path):
    rows = [{"id": str(r["id"]), "question": r["question"], "answer": r["answer"],
             "context": [c["text"] if isinstance(c, dict) else c for c in r["context"]]} for r in GOOD_ROWS]
    rows.insert(3, {"id": "null-context", "question": None, "answer": "Something.", "context": None})
    path = tmp_path / "logs.parquet"
    pq.write_table(pa.Table.from_pylist(rows[:4]), tmp_path / "head.parquet")
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=3)
    check = CheckOptions(CheckSettings(scorer="lexical"))
    out = tmp_path / "ray.parquet"
    first = run_batch(tmp_path / "head.parquet", out, engine="ray", check=check, engine_options=SMALL)
    assert (first.done, first.errors) == (3, 1)
    resumed = run_batch(path, out, engine="ray", check=check, engine_options=SMALL)
    assert (resumed.rows_in, resumed.done, resumed.errors, resumed.skipped) == (len(rows), len(rows) - 4, 0, 4)
    run_batch(path, tmp_path / "local.parquet", check=check)
    assert rows_by_id(out) == rows_by_id(tmp_path / "local.parquet")
    assert "context" in errors_by_id(first.errors_path)["null-context"]["error"]


def test_bad_lines_do_not_stop_a_ray_run(ray_local, tmp_path):
    bad_only = write_jsonl(tmp_path / "bad.jsonl", [], [line for line, _ in BAD_LINES])
    summary = run_batch(bad_only, tmp_path / "out.parquet", engine="ray", check=CheckOptions(CheckSettings(scorer="lexical")),
                        engine_options=SMALL)
    assert (summary.rows_in, summary.done, summary.errors) == (len(BAD_LINES), 0, len(BAD_LINES))


def test_cli_ray_engine_writes_what_the_local_engine_writes(ray_local, mixed_jsonl, tmp_path):
    from typer.testing import CliRunner

    from groundwire.cli.main import app

    common = ["--input", str(mixed_jsonl), "--scorer", "lexical", "--no-progress", "--batch-size", "3"]
    local = CliRunner().invoke(app, ["batch", *common, "--output", str(tmp_path / "local.parquet")])
    distributed = CliRunner().invoke(app, ["batch", *common, "--output", str(tmp_path / "ray.parquet"),
                                           "--engine", "ray", "--actors", "2"])
    assert local.exit_code == distributed.exit_code == CommandOutcome.ROWS_IN_ERROR.exit_status  # the bad lines were reported
    assert rows_by_id(tmp_path / "ray.parquet") == rows_by_id(tmp_path / "local.parquet")
