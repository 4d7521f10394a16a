"""`verify_many`: a table of answers in, a pandas DataFrame of results out.

The input is a pandas DataFrame, a Hugging Face `datasets.Dataset`, or anything with `to_pandas()` (a pyarrow
Table, a polars DataFrame). Column names are found as `check --input` finds them (groundwire's own, then RAGAS's
and DeepEval's, see groundwire.data.rows.COLUMN_ALIASES), or given by keyword. pandas is imported only here
(the `frames` extra).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Unpack, overload

from groundwire.core.settings import refuse_unknown_options
from groundwire.core.tracing import batch_span
from groundwire.data.results import result_row
from groundwire.data.rows import COLUMN_ALIASES, EvalRow, RowError, canonical_record, parse_record
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import Report
from groundwire.pipeline import CHECK_OPTION_NAMES, CheckOptions, check_rows, checker_for

if TYPE_CHECKING:
    import pandas as pd
    from anyio import CapacityLimiter


RESULT_COLUMNS: tuple[str, ...] = (
    "score", "route", "grounded", "abstained", "n_claims", "n_supported", "n_contradicted", "n_not_found",
    "n_unresolved", "supported_share", "model_id", "error_code", "error",
)
"""One row per answer. `score` is the weakest claim's score (what routing uses); `supported_share` the share of
SUPPORTED claims (what RAGAS calls faithfulness). A row that could not be read or checked has `error_code` (an
ErrorCode's name) and `error` set, the rest empty; one such row never stops the others."""

REQUIRED_FIELDS: tuple[str, ...] = ("answer", "context")
"""Fields every frame needs a column for (question and task are optional)."""

CLAIM_COLUMNS: tuple[str, ...] = (
    "row", "claim", "text", "verdict", "score", "support", "route", "chunk_id", "evidence", "decided_by",
)
"""One row per claim; `row` is the input row's index label, `claim` the claim's position in its answer."""


class ToPandas(Protocol):
    """A frame of another library (Polars, Arrow, a Hugging Face Dataset) that converts itself to pandas."""

    def to_pandas(self) -> pd.DataFrame:
        """The frame as pandas."""
        ...


@overload
def verify_many(data: pd.DataFrame | ToPandas, *, answer: str | None = ..., context: str | None = ...,
                question: str | None = ..., task: str | None = ..., claims: Literal[False] = ...,
                require_citations: bool = ..., progress: bool | None = ..., **options: Unpack[CheckOptions]) -> pd.DataFrame: ...


@overload
def verify_many(data: pd.DataFrame | ToPandas, *, answer: str | None = ..., context: str | None = ...,
                question: str | None = ..., task: str | None = ..., claims: Literal[True],
                require_citations: bool = ..., progress: bool | None = ..., **options: Unpack[CheckOptions]) -> tuple[pd.DataFrame, pd.DataFrame]: ...


def verify_many(
    data: pd.DataFrame | ToPandas,
    *,
    answer: str | None = None,
    context: str | None = None,
    question: str | None = None,
    task: str | None = None,
    claims: bool = False,
    require_citations: bool = False,
    progress: bool | None = None,
    **options: Unpack[CheckOptions],
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Verify every row; the result has the input's index, so `df.join(verify_many(df))` lines up.

    `answer`, `context`, `question` and `task` name the columns (default: found by name). A context cell is a
    list of strings or of {id, text} objects, or one string. With `claims=True` a second frame lists every claim.
    `options` (CheckOptions: settings and any of its fields as keywords, verifier, client) choose the check as
    verify()'s keywords do, and are refused as verify() refuses them.
    `progress`: a progress bar of rows done out of the frame's rows, on stderr (rich); by default (None) shown only
    when stderr is a terminal, `True` shows it anyway (its last state, where stderr is not a terminal), `False`
    never. Raises InputError when no answer or no context column is found (naming the frame's columns and those
    expected).
    """
    pd = _pandas()
    frame = data if isinstance(data, pd.DataFrame) else _to_pandas(data)
    columns = {field: name for field, name in
               (("answer", answer), ("context", context), ("question", question), ("task", task)) if name}
    missing = [name for name in columns.values() if name not in frame.columns]
    if missing:
        raise InputError(f"no column {', '.join(map(repr, missing))}; the frame has {', '.join(map(str, frame.columns))}",
                         code=ErrorCode.MISSING_COLUMN)
    _require_columns(frame.columns, columns)
    checker = checker_for("verify_many()", **options)
    parsed = [_parse_row(label, record, columns) for label, record in zip(frame.index, frame.to_dict("records"),
                                                                          strict=True)]
    answers: list[dict[str, Any]] = []
    claim_rows: list[dict[str, Any]] = []
    # One span for the table, the rows' spans inside it (and it inside the caller's current span, if any).
    with batch_span("groundwire.verify_many", len(parsed)) as summarise, _progress_bar(len(parsed), progress) as advance:
        checked = check_rows(checker.verifier, parsed, judge=checker.judge, require_citations=require_citations)  # one outcome per row, in order
        for label, outcome in zip(frame.index, checked, strict=True):
            # A row that could not be read or checked stays in the output, with the reason.
            answers.append(_answer_row(outcome.report, outcome.code, outcome.error))
            if outcome.report is not None and claims:
                claim_rows.extend(_claim_rows(label, outcome.report))
            advance()
        summarise(_batch_summary(answers))
    results = pd.DataFrame(answers, index=frame.index, columns=list(RESULT_COLUMNS))
    if not claims:
        return results
    return results, pd.DataFrame(claim_rows, columns=list(CLAIM_COLUMNS))


async def averify_many(
    data: pd.DataFrame | ToPandas,
    *,
    answer: str | None = None,
    context: str | None = None,
    question: str | None = None,
    task: str | None = None,
    require_citations: bool = False,
    limiter: CapacityLimiter | None = None,
    progress: bool | None = None,
    **options: Unpack[CheckOptions],
) -> pd.DataFrame:
    """`verify_many` for async code: the rows are checked in a worker thread and the event loop keeps serving.
    The same frame comes back, one row per answer, a row that failed with its `error_code` and `error`."""
    import anyio.to_thread  # lazy: only async callers need it

    refuse_unknown_options("averify_many()", options, CHECK_OPTION_NAMES)  # here, not in the worker thread
    call = functools.partial(verify_many, data, answer=answer, context=context, question=question, task=task,
                             require_citations=require_citations, progress=progress, **options)
    return await anyio.to_thread.run_sync(call, limiter=limiter)


def _pandas() -> ModuleType:
    """pandas, or a MissingExtraError that names the extra that brings it."""
    with optional_import("frames", needed_by="verify_many"):
        return importlib.import_module("pandas")


@contextlib.contextmanager
def _progress_bar(total: int, progress: bool | None) -> Iterator[Callable[[], None]]:
    """A function that counts one row done: on a rich progress bar on stderr ("12/250"), or nothing. `progress`
    None shows the bar only when stderr is a terminal, so logs and captured output stay clean."""
    if not (_stderr_is_terminal() if progress is None else progress):
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("verify_many"), BarColumn(), MofNCompleteColumn(), TextColumn("rows"), TimeElapsedColumn())
    # No redirection of sys.stdout / sys.stderr: averify_many runs this in a worker thread of someone's server.
    with Progress(*columns, console=Console(stderr=True), redirect_stdout=False, redirect_stderr=False) as bar:
        rows = bar.add_task("rows", total=total)
        yield functools.partial(bar.advance, rows)


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)  # None where there is no stderr (pythonw)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


def _require_columns(found: pd.Index, given: Mapping[str, str]) -> None:
    """Refuse a frame whose answer or context column is not found, rather than return a row of NaN per answer."""
    unfound = [field for field in REQUIRED_FIELDS
               if field not in given and not {field, *COLUMN_ALIASES[field]} & set(found)]
    if unfound:
        expected = "; ".join(f"{field}: one of {', '.join((field, *COLUMN_ALIASES[field]))}" for field in unfound)
        keywords = ", ".join(f"{field}='your column'" for field in unfound)
        raise InputError(f"verify_many found no {' and no '.join(unfound)} column. The frame's columns: "
                         f"{', '.join(map(str, found)) or '(none)'}. Expected {expected}; "
                         f"or name yours: verify_many(df, {keywords})", code=ErrorCode.MISSING_COLUMN)


def _to_pandas(data: ToPandas) -> pd.DataFrame:
    if not hasattr(data, "to_pandas"):
        raise InputError(f"verify_many takes a pandas DataFrame or a datasets.Dataset, not {type(data).__name__}",
                         code=ErrorCode.INVALID_INPUT)
    return data.to_pandas()


def _parse_row(label: Hashable, record: Mapping[str, Any], columns: Mapping[str, str]) -> EvalRow | RowError:
    """A frame row through the one row parser (data.rows), with the caller's column names."""
    fields = canonical_record({key: _plain(value) for key, value in record.items()}, columns)
    if isinstance(fields.get("context"), str):
        fields["context"] = [fields["context"]]
    return parse_record({**fields, "id": str(label)})


def _plain(value: Any) -> Any:
    """pandas gives list cells as numpy arrays (from Parquet or Arrow) and missing cells as NaN."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and value != value:  # NaN
        return None
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _batch_summary(answers: list[dict[str, Any]]) -> dict[str, int]:
    """The table's span attributes: rows not checked, and rows per route (`route.accept`, ...)."""
    routes = Counter(row["route"] for row in answers if row.get("error_code") is None)
    failed = sum(row.get("error_code") is not None for row in answers)
    return {"failed_rows": failed} | {f"route.{route}": count for route, count in sorted(routes.items())}


def _answer_row(report: Report | None, code: ErrorCode | None, error: str | None) -> dict[str, Any]:
    if report is None:
        return {"error_code": (code or ErrorCode.INTERNAL_ERROR).value, "error": error}
    row = result_row("", report)
    return {name: row[name] for name in RESULT_COLUMNS if name in row} | {"error_code": None, "error": None}


def _claim_rows(label: Hashable, report: Report) -> list[dict[str, Any]]:
    return [
        {"row": label, "claim": number, "text": result.claim.text, "verdict": result.verdict.value,
         "score": result.score, "support": result.support, "route": result.route.value,
         "chunk_id": result.chunk_id, "evidence": result.evidence, "decided_by": result.decided_by}
        for number, result in enumerate(report.claims)
    ]
