"""The database: one SQLAlchemy schema for documents, chunks, the request log, feedback and eval runs, and the
engine every part of the store shares (SQLite by default, with WAL and BEGIN IMMEDIATE for writers; PostgreSQL)."""

from __future__ import annotations

import importlib
import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from groundwire.data.provenance import CITE_ID_HEX
from groundwire.foundation.errors import ErrorCode, InputError

DEFAULT_URL = "sqlite:///groundwire.db"
SUPPORTED_DIALECTS = ("sqlite", "postgresql")


def now() -> datetime:
    return datetime.now(UTC)


def tables(metadata: sa.MetaData) -> dict[str, sa.Table]:
    scopes = sa.Table(
        "scopes",
        metadata,
        sa.Column("scope", sa.String(200), primary_key=True),
        sa.Column("doc_version", sa.Integer, nullable=False, default=0),
    )
    documents = sa.Table(
        "documents",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(200), nullable=False, index=True),
        sa.Column("doc_id", sa.String(500), nullable=False),
        # page_key is page, or 0 for "no page": a unique constraint cannot see NULLs as equal. Never rendered.
        sa.Column("page_key", sa.Integer, nullable=False),
        sa.Column("page", sa.Integer, nullable=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("scope", "doc_id", "page_key", name="uq_document_unit"),
    )
    chunks = sa.Table(
        "chunks",
        metadata,
        sa.Column("scope", sa.String(200), primary_key=True),
        sa.Column("cite_id", sa.String(80), primary_key=True),
        sa.Column(
            "document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=True, index=True
        ),
        sa.Column("doc_id", sa.String(500), nullable=False),
        sa.Column("page", sa.Integer, nullable=True),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("norm_text", sa.Text, nullable=False),
        # A chunk whose document was re-ingested without it is retired, not deleted: its id stays taken,
        # so old log rows still resolve and the id is never handed to different text.
        sa.Column("active", sa.Boolean, nullable=False, default=True),
    )
    requests = sa.Table(
        "requests",
        metadata,
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("scope", sa.String(200), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("query", sa.Text, nullable=True),
        sa.Column("retrieved", sa.JSON, nullable=False),
        sa.Column("context", sa.Text, nullable=False),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("claims", sa.JSON, nullable=False),
        sa.Column("answer_score", sa.Float, nullable=True),
        sa.Column("route", sa.String(16), nullable=True),
        sa.Column("escalations", sa.Integer, nullable=False),
        sa.Column("refused", sa.Boolean, nullable=False),
        sa.Column("latency_ms", sa.Float, nullable=True),
        sa.Column("model_ids", sa.JSON, nullable=False),
        sa.Column("release", sa.String(100), nullable=True, index=True),
        sa.Column("segment", sa.String(100), nullable=True),
        sa.Column("gold_ids", sa.JSON, nullable=True),
        sa.Column("report", sa.JSON, nullable=True),
        sa.Column("extra", sa.JSON, nullable=False),
        # The rolling sample and the history page read one scope's recent rows.
        sa.Index("ix_requests_scope_created", "scope", "created_at"),
    )
    feedback = sa.Table(
        "feedback",
        metadata,
        *_about_a_request(),
        sa.Column("thumbs", sa.SmallInteger, nullable=True),
        sa.Column("correction", sa.Text, nullable=True),
        sa.Column("comment", sa.Text, nullable=True),
    )
    # A reviewer's verdicts: rows only ever added, the newest per request in force (records.ReviewVerdict). A table of
    # its own, not columns of `feedback`: create_all adds a missing table to an existing database, never a column.
    verdicts = sa.Table(
        "review_verdicts",
        metadata,
        *_about_a_request(),
        sa.Column("faithful", sa.Boolean, nullable=False),
        sa.Column("unfaithful_claims", sa.JSON, nullable=False),
    )
    # The LLM judge's settlements of escalated answers, kept as labels of kind "judge" (serve --judge-labels): a
    # table apart from the reviewers' verdicts, so that no read mixes them unasked (records.JudgeLabel).
    judge_labels = sa.Table(
        "judge_labels",
        metadata,
        *_about_a_request(),
        sa.Column("faithful", sa.Boolean, nullable=False),
        sa.Column("unfaithful_claims", sa.JSON, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
    )
    eval_runs = sa.Table(
        "eval_runs",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(200), nullable=True, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("release", sa.String(100), nullable=True),
        sa.Column("metrics", sa.JSON, nullable=False),
    )
    return {
        "scopes": scopes,
        "documents": documents,
        "chunks": chunks,
        "requests": requests,
        "feedback": feedback,
        "verdicts": verdicts,
        "judge_labels": judge_labels,
        "eval_runs": eval_runs,
    }


def _about_a_request() -> list[sa.Column[Any]]:
    """The columns of a row a person adds about a logged request (feedback, a verdict): its id, the request's, the
    scope and when."""
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "request_id", sa.String(32), sa.ForeignKey("requests.id", ondelete="CASCADE"), nullable=False, index=True
        ),
        sa.Column("scope", sa.String(200), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    ]


class StoreBase:
    """The engine and tables every part of the store works on. Thread-safe: each call opens its own short
    transaction."""

    def __init__(self, url: str = DEFAULT_URL, *, cite_id_length: int = CITE_ID_HEX, echo: bool = False) -> None:
        self.url = url
        self._id_length = cite_id_length
        kwargs: dict[str, Any] = {"echo": echo}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        self.engine = sa.create_engine(url, **kwargs)
        if self.engine.dialect.name not in SUPPORTED_DIALECTS:
            raise InputError(f"the store supports SQLite and PostgreSQL URLs, not {self.engine.dialect.name!r} ({url})",
                             code=ErrorCode.INVALID_SETTINGS)
        if self.engine.dialect.name == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        # Writes take SQLite's write lock up front (BEGIN IMMEDIATE): a read-then-write transaction that
        # upgrades later can fail at once with SQLITE_BUSY under concurrent writers instead of waiting.
        self._writer = self.engine.execution_options(groundwire_write=True)
        self.metadata = sa.MetaData()
        self.t = tables(self.metadata)
        self.metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()


def insert_ignore(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING in the connection's dialect."""
    insert = importlib.import_module(f"sqlalchemy.dialects.{conn.dialect.name}").insert
    return insert(table).values(**values).on_conflict_do_nothing()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN itself (below)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk before it returns, so neither a killed process nor a power cut loses it.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("groundwire_write") else "BEGIN")


def validate_scope(scope: str) -> None:
    if not isinstance(scope, str) or not scope.strip():
        raise InputError("a permission scope is required (a non-empty string)", code=ErrorCode.INVALID_INPUT)


def validate_json(values: dict[str, Any]) -> None:
    """Fail with a clear message before the transaction, instead of a driver error half way through."""
    try:
        json.dumps(values, default=lambda o: o.isoformat() if isinstance(o, datetime) else _unjsonable(o))
    except (TypeError, ValueError) as error:
        raise InputError(f"request-log values must be JSON-serialisable: {error}",
                         code=ErrorCode.INVALID_INPUT) from error


def _unjsonable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")
