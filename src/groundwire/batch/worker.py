"""The unit of work both engines share: build the verifier once, then check batches of raw rows.

The local engine calls `Worker.process` in-process; the Ray engine runs `RayWorker` as the actor class
of `map_batches`, so each actor loads the model once and every actor runs this same code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundwire.batch.sink import result_schema
from groundwire.batch.sources import Format
from groundwire.config import CheckSettings, Config
from groundwire.core.verifier import Verifier
from groundwire.data.results import RESULT_FIELDS, STATUS_DONE, STATUS_ERROR, STATUS_SKIPPED, result_row
from groundwire.data.rows import EvalRow, RowError, parse_line, parse_record
from groundwire.foundation.errors import ErrorCode
from groundwire.llm.client import LLMClient, client_from_config
from groundwire.pipeline import CheckItem, build_verifier, check_many

_EMPTY_RESULT = {name: None for name, _ in RESULT_FIELDS}


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What each worker needs to build its verifier; plain data, so it pickles to Ray actors."""

    settings: CheckSettings = CheckSettings()
    """Scorer, thresholds, decomposer, require_citations and pruner: groundwire.toml's [verify] and the flags."""
    config: Config | None = None
    """The rest of groundwire.toml: its [llm] endpoint serves decomposer = "llm"."""
    columns: tuple[tuple[str, str], ...] = ()
    """(field, column) pairs from --columns: the input's names for answer, context, question..."""

    def llm_client(self) -> LLMClient | None:
        """The [llm] endpoint, for decomposer = "llm" (None otherwise, or when groundwire.toml configures none)."""
        if self.settings.decomposer == "llm" and self.config is not None and self.config.llm_configured:
            return client_from_config(self.config)
        return None


class Worker:
    def __init__(self, *, fmt: Format, options: CheckOptions, skip_ids: frozenset[str] = frozenset()) -> None:
        self.fmt = fmt
        self.options = options
        self.skip_ids = skip_ids
        # Built here, in the actor on Ray, by the one builder every surface uses.
        self.verifier: Verifier = build_verifier(options.settings, client=options.llm_client())

    def process(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One output row (status done / error / skipped) per input row, in order."""
        return [self._one(row) for row in rows]

    def _one(self, row: dict[str, Any]) -> dict[str, Any]:
        parsed = self._parse(row)
        # Rows an earlier run wrote or reported (errors included) are skipped, so re-runs add nothing twice.
        if parsed.id in self.skip_ids:
            return {**_EMPTY_RESULT, "id": parsed.id, "status": STATUS_SKIPPED, "code": None, "error": None, "raw": None}
        if isinstance(parsed, RowError):
            return _error(parsed.id, ErrorCode.INVALID_ROW, parsed.error, parsed.raw)
        return self._check(parsed, row)

    def _parse(self, row: dict[str, Any]) -> EvalRow | RowError:
        return parse_input_row(self.fmt, row, dict(self.options.columns))

    def _check(self, item: EvalRow, row: dict[str, Any]) -> dict[str, Any]:
        raw = row["line"] if self.fmt == "jsonl" else None
        # A batch of millions must not die on one row: any failure is recorded with the row's id and code,
        # and the totals at the end still account for it (check_many, the one per-item failure policy).
        [checked] = check_many(self.verifier, [CheckItem(item.answer, item.chunks, question=item.question,
                                                         task=item.given_task)])
        if checked.report is None:
            return _error(item.id, checked.code or ErrorCode.INTERNAL_ERROR, checked.error or "", raw, row)
        return {**result_row(item.id, checked.report), "status": STATUS_DONE, "code": None, "error": None, "raw": None}


def parse_input_row(fmt: Format, row: dict[str, Any], columns: Mapping[str, str] | None = None) -> EvalRow | RowError:
    """A raw input row (a JSONL line from sources.iter_rows, or a Parquet row) through the one row parser, with
    the --columns mapping. Batch resumes by id, so a row must carry one."""
    if fmt == "jsonl":
        return parse_line(row["line"], where=row["where"], utf8=row["utf8"], line=_line_number(row["where"]),
                          require_id=True, columns=columns)
    return parse_record(row, require_id=True, columns=columns)


def _line_number(where: str) -> int:
    number = where.rpartition(":")[2]
    return int(number) if number.isdigit() else 0


def _error(row_id: str, code: ErrorCode, message: str, raw: str | None,
           row: dict[str, Any] | None = None) -> dict[str, Any]:
    if raw is None and row is not None:
        raw = json.dumps(row, ensure_ascii=False, default=str)
    return {**_EMPTY_RESULT, "id": row_id, "status": STATUS_ERROR, "code": code.value, "error": message, "raw": raw}


class RayWorker(Worker):
    """The map_batches actor: Arrow table in, Arrow table out (explicit schema, so all-null columns keep
    their types across blocks)."""

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        schema = result_schema()
        for name in ("status", "code", "error", "raw"):
            schema = schema.append(pa.field(name, pa.string()))
        return pa.Table.from_pylist(self.process(batch.to_pylist()), schema=schema)
