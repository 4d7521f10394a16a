"""Reading user files: plain-text contexts and answers, and the grounding-eval JSONL format.

Every error names the file (and the line, for JSONL) and says what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwire.core.errors import InputError

EVAL_TASKS = frozenset({"qa", "summary", "data2text", "claim", "dialogue"})

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "answer": ("response", "actual_output"),
    "context": ("chunks", "retrieved_contexts", "retrieval_context", "contexts"),
    "question": ("user_input", "input", "query"),
}
"""Other tools' names for groundwire's row fields, read when the row has no field of groundwire's own name:
RAGAS (response, retrieved_contexts, user_input; `contexts` before 0.2), DeepEval (actual_output,
retrieval_context, input), LlamaIndex (query)."""


@dataclass(frozen=True, slots=True)
class EvalRow:
    """One answer in the grounding-eval format (see shared/data/README.md)."""

    id: str
    task: str
    question: str | None
    context: tuple[str, ...]
    answer: str
    hallucinated: bool | None
    spans: tuple[tuple[int, int, str], ...]
    source: str
    line: int


def read_text(path: str | Path) -> str:
    """A UTF-8 text file, or an InputError that says which file and where the bad byte is."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{file}: not UTF-8 (bad byte at offset {error.start}); convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None


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
            raise InputError(f"--columns: {part.strip()!r} is not FIELD=COLUMN (e.g. answer=response)")
        if field not in known:
            raise InputError(f"--columns: unknown field {field!r}; choose from {', '.join(known)}")
        mapping[field] = column
    return mapping


def canonical_record(record: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The row with groundwire's field names: an explicit `columns` mapping first, then the field's own name,
    then the first known alias (COLUMN_ALIASES) the row has. Other keys are kept as they are."""
    out = dict(record)
    for field, column in (columns or {}).items():
        if column not in record:
            raise InputError(f"column {column!r} (given for {field!r} by --columns) is not in the row")
        out[field] = record[column]
    for field, aliases in COLUMN_ALIASES.items():
        if out.get(field) is None:
            found = next((name for name in aliases if record.get(name) is not None), None)
            if found is not None:
                out[field] = record[found]
    return out


def read_eval_jsonl(
    path: str | Path, *, limit: int | None = None, columns: Mapping[str, str] | None = None
) -> Iterator[EvalRow]:
    """Rows of a grounding-eval JSONL file, streamed; a malformed line raises InputError naming its number."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    count = 0
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if limit is not None and count >= limit:
                return
            if not raw.strip():
                continue
            yield parse_eval_row(raw, where=f"{file}:{number}", line=number, columns=columns)
            count += 1


def parse_eval_row(
    raw: bytes | str, *, where: str, line: int = 0, columns: Mapping[str, str] | None = None
) -> EvalRow:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        obj = json.loads(text)
    except UnicodeDecodeError:
        raise InputError(f"{where}: line is not UTF-8") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{where}: malformed JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    try:
        obj = canonical_record(obj, columns)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None
    missing = [key for key in ("context", "answer") if key not in obj]
    if missing:
        raise InputError(f"{where}: missing key(s) {', '.join(missing)}")
    context = obj["context"]
    if isinstance(context, str):
        context = [context]
    if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
        raise InputError(f"{where}: 'context' must be a list of strings")
    if not isinstance(obj["answer"], str):
        raise InputError(f"{where}: 'answer' must be a string")
    hallucinated = obj.get("hallucinated")
    if hallucinated is not None and not isinstance(hallucinated, bool):
        raise InputError(f"{where}: 'hallucinated' must be true, false or absent")
    return EvalRow(
        id=str(obj.get("id", line)),
        task=str(obj.get("task") or "unknown"),
        question=obj.get("question"),
        context=tuple(context),
        answer=obj["answer"],
        hallucinated=hallucinated,
        spans=tuple((int(s), int(e), str(label)) for s, e, label in obj.get("spans") or ()),
        source=str(obj.get("source") or file_stem(where)),
        line=line,
    )


def file_stem(where: str) -> str:
    return Path(where.rsplit(":", 1)[0]).stem
