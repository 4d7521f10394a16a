"""One Report -> one output row, as `groundwire batch` writes it and `verify_many` returns it (rows are read by
groundwire.data.rows, the one row parser).

Both batch engines and verify_many run exactly these functions, so the local and the Ray engine cannot drift apart.
Pure Python: no Ray, no pyarrow, no pandas.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Report, Verdict

RESULT_FIELDS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("score", "float64"),
    ("route", "string"),
    ("grounded", "bool_"),
    ("abstained", "bool_"),
    ("n_claims", "int32"),
    ("n_supported", "int32"),
    ("n_contradicted", "int32"),
    ("n_not_found", "int32"),
    ("n_unresolved", "int32"),
    ("supported_share", "float64"),
    ("model_id", "string"),
    ("report", "string"),
)
"""Columns of results.parquet, in order, with their Arrow type names. `report` is Report.to_dict() as JSON."""

STATUS_DONE = "done"
STATUS_ERROR = "error"
STATUS_SKIPPED = "skipped"


def result_row(item_id: str, report: Report) -> dict[str, Any]:
    """The output row for one checked item. Timings are left out of `report` so that a re-run, or the
    other engine, writes byte-identical rows."""
    data = report.to_dict()
    data.pop("timings", None)
    verdicts = [c.verdict for c in report.claims]
    return {
        "id": item_id,
        "score": float(report.score),
        "route": report.route.value,
        "grounded": report.grounded,
        "abstained": report.abstained,
        "n_claims": len(verdicts),
        "n_supported": verdicts.count(Verdict.SUPPORTED),
        "n_contradicted": verdicts.count(Verdict.CONTRADICTED),
        "n_not_found": verdicts.count(Verdict.NOT_FOUND),
        "n_unresolved": verdicts.count(Verdict.UNRESOLVED),
        "supported_share": report.supported_share,
        "model_id": report.model_id,
        "report": json.dumps(data, ensure_ascii=False, sort_keys=True),
    }


WRITTEN_ERROR = "error"
"""What `written_outcomes` gives for a record that is an error (a row that could not be read or checked)."""


def written_outcomes(path: Path) -> dict[str, str]:
    """Each record an earlier run wrote to a JSONL output (results or errors), by id: its route's value ("accept",
    "escalate", "reject"), or WRITTEN_ERROR. A rerun skips these ids, and its exit status counts them too, so that
    rerunning a batch that stopped cannot pass on rows the first run failed or rejected. A last line a crash left
    half-written is cut first: its row is simply done again."""
    if not path.exists():
        return {}
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    outcomes: dict[str, str] = {}
    legacy = False
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise InputError(f"{path}:{number} is not a JSON record, so it is no output of groundwire to resume: "
                                 "give another output path", code=ErrorCode.INVALID_FILE) from None
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                # `route` is the routing's name; `decision` its name in the records of 0.1 (issue 57).
                legacy = legacy or ("route" not in record and "decision" in record)
                route = record.get("route", record.get("decision"))
                is_error = "error_code" in record or "code" in record or not isinstance(route, str)
                outcomes[record["id"]] = route if isinstance(route, str) and not is_error else WRITTEN_ERROR
    if legacy:
        warnings.warn(f"{path} holds records of 0.1 with 'decision': read for one release; the field is 'route'",
                      DeprecationWarning, stacklevel=2)
    return outcomes


def written_ids(path: Path) -> set[str]:
    """The ids of the records an earlier run wrote to a JSONL output (results or errors): what a rerun skips."""
    return set(written_outcomes(path))
