"""Reading user files: plain-text contexts and answers, and the one grounding-eval row format.

The row format (see shared/data/README.md and docs/scaling.md) is parsed here and nowhere else: `check
--input`, `eval`, `eval-loop` and `batch` all read it through `parse_line` / `parse_record`. A row is an
object with `answer` and `context` (`chunks` is another name for it): a list of strings, or of
`{"id", "text", "doc_id", "page"}` objects (string chunks get the ids S1..Sn); other tools' column names
(RAGAS, DeepEval: COLUMN_ALIASES) and a `--columns` mapping are read too. A bad row becomes a
`RowError` that keeps its line number and the raw row, so nothing is lost; `read_rows(strict=True)` and
`read_eval_jsonl` raise an InputError naming the line instead.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Chunk

EVAL_TASKS = frozenset({"qa", "summary", "data2text", "claim", "dialogue"})
UNKNOWN_TASK = "unknown"
"""EvalRow.task of a row that names none."""

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "answer": ("response", "actual_output"),
    "context": ("chunks", "retrieved_contexts", "retrieval_context", "contexts"),
    "question": ("user_input", "input", "query"),
}
"""Other tools' names for groundwire's row fields, read when the row has no field of groundwire's own name:
RAGAS (response, retrieved_contexts, user_input; `contexts` before 0.2), DeepEval (actual_output,
retrieval_context, input), LlamaIndex (query)."""

_KIND_NAMES = {str: "a string", int: "an integer"}
_ID_IN_TEXT = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True)
class EvalRow:
    """One answer in the grounding-eval format (see shared/data/README.md)."""

    id: str
    task: str
    """The row's task, or UNKNOWN_TASK."""
    question: str | None
    context: tuple[str, ...]
    """The chunks' texts, in order."""
    answer: str
    hallucinated: bool | None
    spans: tuple[tuple[int, int, str], ...]
    source: str
    line: int
    """1-based line in its JSONL file; 0 when the row did not come from one (a Parquet row)."""
    chunks: tuple[Chunk, ...] = ()
    """The chunks to verify against: object chunks keep their ids, strings are S1..Sn of doc_id = the row's id."""

    @property
    def given_task(self) -> str | None:
        """The task as the row gives it (None when it names none): what selects the verifier's calibration."""
        return None if self.task == UNKNOWN_TASK else self.task


@dataclass(frozen=True, slots=True)
class RowError:
    """A row that could not be read, reported instead of dropped."""

    id: str
    """The row's id when readable, else its position ("file.jsonl:12"), else a content hash."""
    error: str
    raw: str
    """The row as it came in (the JSON line, or the Parquet row as JSON), so nothing is lost."""
    line: int = 0

    def message(self) -> str:
        where = f"line {self.line}" if self.line else f"row {self.id}"
        return f"{where}: {self.error}"


def read_text(path: str | Path) -> str:
    """A UTF-8 text file, or an InputError that says which file and where the bad byte is."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: no such file", code=ErrorCode.FILE_NOT_FOUND)
    data = file.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # before the binary test: UTF-16 is half NULs
        raise InputError(f"{file}: UTF-16 text, not UTF-8; convert it, e.g. iconv -f utf-16 -t utf-8",
                         code=ErrorCode.INVALID_FILE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        # Only a file that is not UTF-8 is judged binary: valid UTF-8 is text, whatever control characters it holds.
        if _looks_binary(data):
            raise InputError(f"{file}: a binary file, not text; give the text it holds (e.g. pdftotext for a PDF)",
                             code=ErrorCode.INVALID_FILE) from None
        raise InputError(
            f"{file}: not UTF-8 (bad byte at offset {error.start}); convert it, e.g. iconv -f latin1 -t utf-8"
        , code=ErrorCode.INVALID_FILE) from None


# Control bytes that text holds: tab, newline, vertical tab, form feed, carriage return, escape (ANSI colours).
_TEXT_CONTROLS = frozenset(b"\t\n\v\f\r\x1b")


def _looks_binary(data: bytes, sample: int = 8192) -> bool:
    """A NUL byte, or more than a tenth control bytes, in the first `sample` bytes (the test git and file(1) make)."""
    head = data[:sample]
    controls = sum(1 for byte in head if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return b"\0" in head or controls * 10 > len(head)


def parse_columns(spec: str | None) -> dict[str, str]:
    """`--columns answer=response,context=retrieved_contexts` -> {"answer": "response", "context": ...}.
    Keys are groundwire's field names; values the names in the user's file."""
    if spec is None or not spec.strip():
        return {}
    mapping: dict[str, str] = {}
    known = ("id", "task", "hallucinated", *COLUMN_ALIASES)
    for part in spec.split(","):
        field, sep, column = (piece.strip() for piece in part.partition("="))
        if not sep or not field or not column:
            raise InputError(f"--columns: {part.strip()!r} is not FIELD=COLUMN (e.g. answer=response)",
                             code=ErrorCode.INVALID_OPTION)
        if field not in known:
            raise InputError(f"--columns: unknown field {field!r}; choose from {', '.join(known)}",
                             code=ErrorCode.INVALID_OPTION)
        mapping[field] = column
    return mapping


def canonical_record(record: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The row with groundwire's field names: an explicit `columns` mapping first, then the field's own name,
    then the first known alias (COLUMN_ALIASES) the row has. Other keys are kept as they are."""
    out = dict(record)
    for field, column in (columns or {}).items():
        if column not in record:
            raise InputError(f"column {column!r} (given for {field!r} by --columns) is not in the row",
                             code=ErrorCode.MISSING_COLUMN)
        out[field] = record[column]
    for field, aliases in COLUMN_ALIASES.items():
        if out.get(field) is None:
            found = next((name for name in aliases if record.get(name) is not None), None)
            if found is not None:
                out[field] = record[found]
    return out


def read_rows(
    path: str | Path, *, limit: int | None = None, strict: bool = False, columns: Mapping[str, str] | None = None
) -> Iterator[EvalRow | RowError]:
    """Rows of a grounding-eval JSONL file, streamed; blank lines are not rows. A bad row is yielded as a
    RowError, or with `strict` raises an InputError naming the file and line."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: no such file", code=ErrorCode.FILE_NOT_FOUND)
    count = 0
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if limit is not None and count >= limit:
                return
            if not raw.strip():
                continue
            try:
                text, utf8 = raw.decode("utf-8").rstrip("\r\n"), True
            except UnicodeDecodeError:
                text, utf8 = raw.decode("utf-8", errors="replace").rstrip("\r\n"), False
            row = parse_line(text, where=f"{file}:{number}", utf8=utf8, line=number, source=file.stem, columns=columns)
            if strict and isinstance(row, RowError):
                raise InputError(f"{file}:{number}: {row.error}", code=ErrorCode.INVALID_ROW)
            yield row
            count += 1


def read_eval_jsonl(
    path: str | Path, *, limit: int | None = None, columns: Mapping[str, str] | None = None
) -> Iterator[EvalRow]:
    """Rows of a grounding-eval JSONL file, streamed; a malformed line raises InputError naming its number."""
    for row in read_rows(path, limit=limit, strict=True, columns=columns):
        assert isinstance(row, EvalRow)  # strict: a RowError was raised instead
        yield row


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
    text: str,
    *,
    where: str | None = None,
    utf8: bool = True,
    line: int = 0,
    require_id: bool = False,
    source: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> EvalRow | RowError:
    """One JSONL line. `where` ("file.jsonl:12") names the row when it has no readable id; `utf8` is False
    when the line's bytes were not valid UTF-8 (then `text` holds replacement characters and is not checked)."""
    if not utf8:
        return RowError(fallback_id(text, where), "line is not valid UTF-8", text, line)
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:  # a broken line is expected input: it becomes a row error
        return RowError(fallback_id(text, where, search=True), f"invalid JSON: {err}", text, line)
    if not isinstance(record, dict):
        return RowError(fallback_id(text, where), f"line is a JSON {type(record).__name__}, not an object", text, line)
    return parse_record(record, raw=text, where=where, line=line, require_id=require_id, source=source,
                        columns=columns)


def parse_record(
    record: Mapping[str, Any],
    *,
    raw: str | None = None,
    where: str | None = None,
    line: int = 0,
    require_id: bool = False,
    source: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> EvalRow | RowError:
    """A decoded row (a JSON object or a Parquet row). `require_id`: a row without a usable id is an error
    (batch resumes by id); otherwise it is named by its line. Field names are read as `canonical_record` says."""
    raw_text = raw if raw is not None else json.dumps(dict(record), ensure_ascii=False, default=str)
    try:
        record = canonical_record(record, columns)
    except InputError as err:
        return RowError(fallback_id(raw_text, where), str(err), raw_text, line)
    row_id = record.get("id")
    if isinstance(row_id, int) and not isinstance(row_id, bool):
        row_id = str(row_id)
    if require_id and (not isinstance(row_id, str) or not row_id.strip()):
        message = "missing or empty 'id' (a non-empty string or integer)"
        return RowError(fallback_id(raw_text, where), message, raw_text, line)
    # Elsewhere the id only labels the row: kept as given, or its line number when it has none.
    row_id = str(line) if row_id is None else str(row_id)
    problem = _problem(record)
    if problem is not None:
        return RowError(row_id, problem, raw_text, line)
    context = _context(record)
    context = [context] if isinstance(context, str) else context
    chunks = tuple(_chunk(i, c, row_id) for i, c in enumerate(context))
    return EvalRow(
        id=row_id,
        task=str(record.get("task") or UNKNOWN_TASK),
        question=record.get("question"),
        context=tuple(chunk.text for chunk in chunks),
        answer=record["answer"],
        hallucinated=record.get("hallucinated"),
        spans=tuple((int(s), int(e), str(label)) for s, e, label in record.get("spans") or ()),
        source=str(record.get("source") or source or (file_stem(where) if where else "")),
        line=line,
        chunks=chunks,
    )


def _context(record: Mapping[str, Any]) -> Any:
    return record.get("context")


def _problem(record: Mapping[str, Any]) -> str | None:
    if not isinstance(record.get("answer"), str):
        return "'answer' must be a string" if "answer" in record else "missing key 'answer'"
    question = record.get("question")
    if question is not None and not isinstance(question, str):
        return "'question' must be a string or null"
    if record.get("task") is not None and not isinstance(record.get("task"), str):
        return "'task' must be a string or null"
    hallucinated = record.get("hallucinated")
    if hallucinated is not None and not isinstance(hallucinated, bool):
        return "'hallucinated' must be true, false or absent"
    spans = record.get("spans")
    if spans is not None and not (
        isinstance(spans, list) and all(isinstance(s, list | tuple) and len(s) == 3 for s in spans)
    ):
        return "'spans' must be a list of [start, end, label]"
    context = _context(record)
    if isinstance(context, str):
        context = [context]
    if not isinstance(context, list | tuple) or not context:
        return "'context' must be a non-empty list of chunks"
    for i, chunk in enumerate(context):
        text = chunk.get("text") if isinstance(chunk, Mapping) else chunk
        if not isinstance(text, str) or not text.strip():
            return f"context[{i}] must be a non-empty string or an object with a non-empty 'text'"
        if isinstance(chunk, Mapping):
            for key, kind in (("id", str), ("doc_id", str), ("page", int)):
                if chunk.get(key) is not None and not isinstance(chunk.get(key), kind):
                    return f"context[{i}].{key} must be {_KIND_NAMES[kind]} or null"
            page = chunk.get("page")
            # Pages are 1-based everywhere (ingest, the service's inline chunks); a bool is not a page number.
            if isinstance(page, bool) or (isinstance(page, int) and page < 1):
                return f"context[{i}].page must be 1 or more (pages are 1-based) or null"
    return None


def _chunk(index: int, chunk: str | Mapping[str, Any], row_id: str) -> Chunk:
    if isinstance(chunk, Mapping):
        return Chunk(
            id=chunk.get("id") or f"S{index + 1}",
            text=chunk["text"],
            doc_id=chunk.get("doc_id"),
            page=chunk.get("page"),
        )
    return Chunk(id=f"S{index + 1}", text=chunk, doc_id=row_id)


def file_stem(where: str) -> str:
    return Path(where.rsplit(":", 1)[0]).stem
