"""Batch verification of logged answers: `groundwire batch` and `run_batch`.

    from groundwire.batch import run_batch
    summary = run_batch("logs.jsonl", "results.parquet", engine="ray", scorer="bundled")

Input: JSONL or Parquet rows in the grounding-eval format (id, question, context, answer), streamed.
Output: a directory of Parquet parts (one row per answer, see groundwire.data.results.RESULT_FIELDS), written as it goes;
a re-run skips the ids already there. Malformed rows go, with their id and the raw row, to an errors
file; they never stop the run. At the end, rows in = done + errors + skipped, or the run fails loudly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from groundwire.batch.engines import ENGINES, EngineOptions, Job
from groundwire.batch.sink import ResultSink, default_errors_path
from groundwire.batch.sources import count_rows, input_format, iter_rows
from groundwire.batch.worker import CheckOptions, parse_input_row
from groundwire.data.results import RESULT_FIELDS
from groundwire.data.rows import RowError
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import require_extra

if TYPE_CHECKING:
    from groundwire.batch.sources import Format

__all__ = ["RESULT_FIELDS", "BatchSummary", "CheckOptions", "engine_names", "run_batch"]


@dataclass(frozen=True, slots=True)
class BatchSummary:
    rows_in: int
    done: int
    """Rows checked and written by this run."""
    errors: int
    """Rows reported to the errors file by this run."""
    skipped: int
    """Rows already done (or reported) by an earlier run."""
    output: Path
    errors_path: Path
    seconds: float
    written_before: int = 0
    """Rows an earlier run wrote to the output (in this run's input or not)."""
    errors_before: int = 0
    """Rows an earlier run reported to the errors file (in this run's input or not)."""

    @property
    def all_errors(self) -> int:
        """Rows in error in the whole output, earlier runs' included: what the exit status covers."""
        return self.errors + self.errors_before

    @property
    def all_written(self) -> int:
        """Rows checked and written in the whole output, earlier runs' included."""
        return self.done + self.written_before

    @property
    def balanced(self) -> bool:
        return self.rows_in == self.done + self.errors + self.skipped


class RowsLostError(RuntimeError):
    """The engine returned fewer or more rows than were read: a bug, never a data problem."""


def engine_names() -> list[str]:
    return sorted(ENGINES)


def run_batch(
    input_path: str | Path,
    output: str | Path,
    *,
    engine: str = "local",
    errors_path: str | Path | None = None,
    check: CheckOptions | None = None,
    engine_options: EngineOptions | None = None,
    progress: bool = False,
    on_rows: Callable[[int], None] | None = None,
    strict: bool = False,
) -> BatchSummary:
    """Check every row of `input_path` and write results under `output` (see the module docstring).

    `on_rows(n)` is called each time n more rows have been written (for a caller's own progress display).
    `strict`: read the whole input first and raise InputError naming the first malformed row, before any work.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {sorted(ENGINES)}")
    require_extra("ray", *(("pyarrow", "ray") if engine == "ray" else ("pyarrow",)),
                  needed_by=f"groundwire batch --engine {engine}")
    source = Path(input_path)
    fmt = input_format(source)
    if strict:
        _refuse_malformed(source, fmt, dict((check or CheckOptions()).columns))
    rows_in = count_rows(source)
    errors_file = Path(errors_path) if errors_path is not None else default_errors_path(output)
    started = time.perf_counter()
    with ResultSink(output, errors_path=errors_file) as sink, _progress(rows_in, enabled=progress) as advance:
        ENGINES[engine](Job(
            source, sink, fmt=fmt, check=check or CheckOptions(), options=engine_options or EngineOptions(),
            on_rows=advance if on_rows is None else _both(advance, on_rows),
        ))
    summary = BatchSummary(
        rows_in=rows_in, done=sink.done, errors=sink.errors, skipped=sink.skipped,
        output=sink.output, errors_path=errors_file, seconds=time.perf_counter() - started,
        written_before=sink.written_before, errors_before=sink.errors_before,
    )
    if not summary.balanced:
        raise RowsLostError(
            f"rows in {rows_in} != done {summary.done} + errors {summary.errors} + skipped {summary.skipped}; "
            "finished rows are saved, re-run to resume"
        )
    return summary


def _refuse_malformed(source: Path, fmt: Format, columns: dict[str, str]) -> None:
    for rows in iter_rows(source):
        for row in rows:
            parsed = parse_input_row(fmt, row, columns)
            if isinstance(parsed, RowError):
                where = row.get("where") if fmt == "jsonl" else f"{source} row {parsed.id}"
                raise InputError(f"{where}: {parsed.error} (--strict)", code=ErrorCode.INVALID_ROW)


def _both(first: Callable[[int], None], second: Callable[[int], None]) -> Callable[[int], None]:
    """One row hook that calls both, in order (the progress bar first)."""
    def call(n: int) -> None:
        first(n)
        second(n)

    return call


@contextmanager
def _progress(total: int, *, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr counting rows written (or a no-op)."""
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task("checking", total=total)
        yield lambda n: bar.advance(task, n)
