"""One input row -> a checkable item or a row error; one Report -> one output row.

Both engines run exactly these functions, so the local and the Ray engine cannot drift apart.
Pure Python: no Ray, no pyarrow.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groundwire.core.errors import InputError
from groundwire.core.types import Chunk, Report, Verdict
from groundwire.data.rows import canonical_record

RESULT_FIELDS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("score", "float64"),
    ("decision", "string"),
    ("grounded", "bool_"),
    ("abstained", "bool_"),
    ("n_claims", "int32"),
    ("n_supported", "int32"),
    ("n_contradicted", "int32"),
    ("n_not_found", "int32"),
    ("supported_share", "float64"),
    ("model_id", "string"),
    ("report", "string"),
)
"""Columns of results.parquet, in order, with their Arrow type names. `report` is Report.to_dict() as JSON."""

STATUS_DONE = "done"
STATUS_ERROR = "error"
STATUS_SKIPPED = "skipped"

_KIND_NAMES = {str: "a string", int: "an integer"}
_ID_IN_TEXT = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    answer: str
    chunks: tuple[Chunk, ...]
    question: str | None
    task: str | None = None
    """The grounding-eval 'task' when the row has one: it selects the verifier's calibration."""


@dataclass(frozen=True, slots=True)
class RowError:
    id: str
    error: str
    raw: str
    """The row as it came in (the JSON line, or the Parquet row as JSON), so nothing is lost."""


def fallback_id(raw: str, where: str | None, *, search: bool = False) -> str:
    """An id for a row that has none we can read: with `search` (JSON that did not parse) the first
    "id": "..." in the text, else its position when known, else a content hash."""
    found = _ID_IN_TEXT.search(raw) if search else None
    if found and found.group(1).strip():
        return found.group(1)
    if where is not None:
        return where
    return "sha1:" + hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def parse_line(
    line: str, *, where: str | None = None, utf8: bool = True, columns: Mapping[str, str] | None = None
) -> Item | RowError:
    """A JSONL line in the grounding-eval format (id, question, context, answer; other keys ignored).

    `where` ("file.jsonl:12") names the row when it has no readable id; `utf8` is False when the
    line's bytes were not valid UTF-8 (then `line` holds replacement characters and is not checked).
    """
    if not utf8:
        return RowError(fallback_id(line, where), "line is not valid UTF-8", line)
    record, problem = _loads(line)
    if problem is not None:
        return RowError(fallback_id(line, where, search=True), problem, line)
    return parse_record(record, raw=line, where=where, columns=columns)


def _loads(line: str) -> tuple[dict[str, Any], None] | tuple[None, str]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as err:  # a broken line is expected input: it becomes a row error
        return None, f"invalid JSON: {err}"
    if not isinstance(value, dict):
        return None, f"line is a JSON {type(value).__name__}, not an object"
    return value, None


def parse_record(
    record: Mapping[str, Any], *, raw: str | None = None, where: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> Item | RowError:
    """A decoded row (JSON object or Parquet row). `context` is a list of strings or of {id, text} objects;
    other tools' column names (chunks, RAGAS's, DeepEval's) and a `columns` mapping are read as in
    groundwire.data.rows.canonical_record."""
    raw_text = raw if raw is not None else json.dumps(dict(record), ensure_ascii=False, default=str)
    try:
        record = canonical_record(record, columns)
    except InputError as err:
        return RowError(fallback_id(raw_text, where), str(err), raw_text)
    row_id = record.get("id")
    if isinstance(row_id, int) and not isinstance(row_id, bool):
        row_id = str(row_id)
    if not isinstance(row_id, str) or not row_id.strip():
        return RowError(fallback_id(raw_text, where), "missing or empty 'id' (a non-empty string or integer)", raw_text)
    problem = _problem(record)
    if problem is not None:
        return RowError(row_id, problem, raw_text)
    context = record["context"]
    chunks = tuple(_chunk(i, c) for i, c in enumerate(context))
    return Item(id=row_id, answer=record["answer"], chunks=chunks, question=record.get("question"),
                task=record.get("task"))


def _problem(record: Mapping[str, Any]) -> str | None:
    answer = record.get("answer")
    if not isinstance(answer, str):
        return "'answer' must be a string"
    question = record.get("question")
    if question is not None and not isinstance(question, str):
        return "'question' must be a string or null"
    if record.get("task") is not None and not isinstance(record.get("task"), str):
        return "'task' must be a string or null"
    context = record.get("context")
    if not isinstance(context, (list, tuple)) or not context:
        return "'context' must be a non-empty list of chunks"
    for i, chunk in enumerate(context):
        text = chunk.get("text") if isinstance(chunk, Mapping) else chunk
        if not isinstance(text, str) or not text.strip():
            return f"context[{i}] must be a non-empty string or an object with a non-empty 'text'"
        if isinstance(chunk, Mapping):
            for key, kind in (("id", str), ("doc_id", str), ("page", int)):
                if chunk.get(key) is not None and not isinstance(chunk.get(key), kind):
                    return f"context[{i}].{key} must be {_KIND_NAMES[kind]} or null"
    return None


def _chunk(index: int, chunk: Any) -> Chunk:
    if isinstance(chunk, Mapping):
        return Chunk(
            id=chunk.get("id") or f"S{index + 1}",
            text=chunk["text"],
            doc_id=chunk.get("doc_id"),
            page=chunk.get("page"),
        )
    return Chunk(id=f"S{index + 1}", text=chunk)


def result_row(item_id: str, report: Report) -> dict[str, Any]:
    """The output row for one checked item. Timings are left out of `report` so that a re-run, or the
    other engine, writes byte-identical rows."""
    data = report.to_dict()
    data.pop("timings", None)
    verdicts = [c.verdict for c in report.claims]
    return {
        "id": item_id,
        "score": float(report.score),
        "decision": report.decision.value,
        "grounded": report.grounded,
        "abstained": report.abstained,
        "n_claims": len(verdicts),
        "n_supported": verdicts.count(Verdict.SUPPORTED),
        "n_contradicted": verdicts.count(Verdict.CONTRADICTED),
        "n_not_found": verdicts.count(Verdict.NOT_FOUND),
        "supported_share": report.supported_share,
        "model_id": report.model_id,
        "report": json.dumps(data, ensure_ascii=False, sort_keys=True),
    }
