"""Incremental, resumable output: a directory of Parquet parts plus a JSONL errors file.

Each part is written to a temporary name and renamed when complete, so a crash leaves only whole parts
behind; the ids in those parts and in the errors file are what a re-run skips. Errors are appended and
flushed as they come, one JSON object a line: {"id", "code", "error", "raw"} (`code`: an ErrorCode's name).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from groundwire.data.results import RESULT_FIELDS, STATUS_DONE, STATUS_ERROR, STATUS_SKIPPED, written_ids
from groundwire.foundation.errors import ErrorCode, InputError

if TYPE_CHECKING:
    import pyarrow as pa


def result_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, getattr(pa, kind)()) for name, kind in RESULT_FIELDS])


def default_errors_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".errors.jsonl")


def read_done_ids(output: Path, errors_path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """Ids an earlier run finished: those written to complete parts, and those reported as errors."""
    import pyarrow.parquet as pq

    written: set[str] = set()
    if output.is_dir():
        for part in sorted(output.glob("part-*.parquet")):
            written.update(pq.read_table(part, columns=["id"]).column("id").to_pylist())
    return frozenset(written), frozenset(written_ids(errors_path) - written)


class ResultSink:
    """Takes the engines' output rows (status done / error / skipped), in any order, and persists them.

    The sink is the single writer and the single place that counts, so both engines are checked the
    same way. A second row with an id already written in this run is an error ("duplicate id").
    """

    def __init__(self, output: str | Path, *, errors_path: str | Path, flush_rows: int = 512) -> None:
        self.output = Path(output)
        self.errors_path = Path(errors_path)
        if self.output.exists() and not self.output.is_dir():
            raise InputError(f"output {self.output} exists and is a file; results go to a directory of Parquet parts",
                             code=ErrorCode.OUTPUT_EXISTS)
        self.output.mkdir(parents=True, exist_ok=True)
        for stale in self.output.glob("*.tmp"):
            stale.unlink()  # a part a crash left unfinished; its rows are redone
        written_before, failed_before = read_done_ids(self.output, self.errors_path)
        self.done_before = written_before | failed_before
        """What this run skips: every id an earlier run finished."""
        # The run's exit status covers them too: a rerun must not pass on rows an earlier run could not check.
        self.written_before, self.errors_before = len(written_before), len(failed_before)
        self._flush_rows = flush_rows
        # Unique per run: two runs in the same second must never overwrite each other's parts.
        self._stamp = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
        self._parts = 0
        self._pending: list[dict[str, Any]] = []
        self._seen: set[str] = set()
        self._errors = self.errors_path.open("a", encoding="utf-8")
        self.done = self.errors = self.skipped = 0

    def add(self, rows: Iterable[dict[str, Any]]) -> int:
        """Take a batch of output rows; returns how many rows it was."""
        count = 0
        new_errors = False
        for row in rows:
            count += 1
            status = row["status"]
            if status == STATUS_SKIPPED:
                self.skipped += 1
                continue
            if row["id"] in self._seen:
                row = {**row, "status": STATUS_ERROR, "code": ErrorCode.INVALID_ROW.value,
                       "error": "duplicate id: an earlier row of this run had it"}
                status = STATUS_ERROR
            self._seen.add(row["id"])
            if status == STATUS_DONE:
                self.done += 1
                self._pending.append({name: row[name] for name, _ in RESULT_FIELDS})
            elif status == STATUS_ERROR:
                self.errors += 1
                new_errors = True
                record = {"id": row["id"], "code": row["code"], "error": row["error"], "raw": row["raw"]}
                self._errors.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                raise ValueError(f"unknown row status {status!r}")
        if new_errors:
            self._errors.flush()
        if len(self._pending) >= self._flush_rows:
            self.flush()
        return count

    def flush(self) -> None:
        if not self._pending:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(self._pending, schema=result_schema())
        final = self.output / f"part-{self._stamp}-{self._parts:05d}.parquet"
        tmp = final.with_name(final.name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, final)
        self._parts += 1
        self._pending = []

    def close(self) -> None:
        self.flush()
        self._errors.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        # Flush on the way out even after an error, so that finished rows are not redone on resume.
        self.close()
