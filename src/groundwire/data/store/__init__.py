"""Persistence: documents, chunks, the request log and feedback, and eval runs, in one SQLAlchemy schema.

SQLite by default (WAL journal, so readers never block the writer and a killed process loses no
committed row); any SQLAlchemy URL works, e.g. postgresql+psycopg://user@host/db. Every row
carries a permission scope and every read filters on it: a caller sees only its own scope.

One module per data path: schema.py (the tables and the engine), documents.py, request_log.py (and feedback),
verdicts.py (reviewers' verdicts), judge_labels.py (the LLM judge's, kept apart), eval_runs.py, records.py (the rows as Python sees them); database.py puts them together as `Store`. The
records load without SQLAlchemy; `Store` loads it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groundwire.data.store.records import (
    ERROR_KIND,
    ClaimLog,
    Feedback,
    FeedbackSummary,
    IngestResult,
    JudgeLabel,
    MarkedClaim,
    RequestRecord,
    RetrievedChunk,
    ReviewVerdict,
    ReviewWritten,
)
from groundwire.foundation.extras import optional_import

if TYPE_CHECKING:
    from groundwire.data.store.database import Store
    from groundwire.data.store.schema import DEFAULT_URL

__all__ = [
    "DEFAULT_URL",
    "ERROR_KIND",
    "ClaimLog",
    "Feedback",
    "FeedbackSummary",
    "IngestResult",
    "JudgeLabel",
    "MarkedClaim",
    "RequestRecord",
    "RetrievedChunk",
    "ReviewVerdict",
    "ReviewWritten",
    "Store",
]


_NEEDED_BY = "groundwire's store (serve, eval-loop --db)"


def __getattr__(name: str) -> Any:
    # SQLAlchemy loads with the store, not with its records.
    if name == "Store":
        with optional_import("serve", needed_by=_NEEDED_BY):
            from groundwire.data.store.database import Store

        return Store
    if name == "DEFAULT_URL":
        with optional_import("serve", needed_by=_NEEDED_BY):
            from groundwire.data.store.schema import DEFAULT_URL

        return DEFAULT_URL
    raise AttributeError(name)
