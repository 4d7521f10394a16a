"""Persistence: documents, chunks, the request log and feedback, in one SQLAlchemy schema.

SQLite by default (WAL journal, so readers never block the writer and a killed process loses no
committed row); any SQLAlchemy URL works, e.g. postgresql+psycopg://user@host/db. Every row
carries a permission scope and every read filters on it: a caller sees only its own scope.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from groundwire.core.errors import ErrorCode, InputError
from groundwire.data.provenance import (
    CITE_ID_HEX,
    CiteKey,
    Document,
    Passage,
    cite_key,
    make_cite_id,
    resolve_cite_id,
)
from groundwire.core.textutil import split_text
from groundwire.core.types import REFUSAL_TOKEN, Report, Route, Verdict

if TYPE_CHECKING:  # pragma: no cover
    import sqlalchemy as sa

DEFAULT_URL = "sqlite:///groundwire.db"
SUPPORTED_DIALECTS = ("sqlite", "postgresql")


ERROR_KIND = "error"
"""The kind of a request-log row for a failed request (4xx/5xx): no report, nothing for the eval loop."""


def _now() -> datetime:
    return datetime.now(UTC)


def _tables(metadata: sa.MetaData) -> dict[str, sa.Table]:
    import sqlalchemy as sa

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
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "request_id", sa.String(32), sa.ForeignKey("requests.id", ondelete="CASCADE"), nullable=False, index=True
        ),
        sa.Column("scope", sa.String(200), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("thumbs", sa.SmallInteger, nullable=True),
        sa.Column("correction", sa.Text, nullable=True),
        sa.Column("comment", sa.Text, nullable=True),
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
        "eval_runs": eval_runs,
    }


# --- records ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    cite_id: str
    score: float | None = None


@dataclass(frozen=True, slots=True)
class ClaimLog:
    """One claim's outcome as logged: enough to recompute faithfulness without re-running a model."""

    text: str
    verdict: str
    score: float
    chunk_id: str | None = None
    route: str | None = None
    decided_by: str | None = None


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request-log row. Build it with `from_report` when a Report exists."""

    scope: str
    response: str
    context: str
    """The context exactly as sent (see provenance.render_context)."""
    query: str | None = None
    kind: str = "verify"
    """What the request did: "verify", "repair", "generate"..."""
    retrieved: tuple[RetrievedChunk, ...] = ()
    claims: tuple[ClaimLog, ...] = ()
    answer_score: float | None = None
    route: str | None = None
    escalations: int = 0
    refused: bool = False
    latency_ms: float | None = None
    model_ids: dict[str, str] = field(default_factory=dict)
    release: str | None = None
    segment: str | None = None
    gold_ids: tuple[str, ...] | None = None
    """Cite ids of the passages known to answer the query, where known (for retrieval hit rate)."""
    report: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    created_at: datetime | None = None

    @classmethod
    def from_report(
        cls,
        report: Report,
        *,
        scope: str,
        context: str,
        query: str | None = None,
        response: str | None = None,
        retrieved: Iterable[RetrievedChunk | tuple[str, float | None]] = (),
        kind: str = "verify",
        latency_ms: float | None = None,
        model_ids: dict[str, str] | None = None,
        release: str | None = None,
        segment: str | None = None,
        gold_ids: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> RequestRecord:
        """`response` defaults to the verified answer; pass the repaired text when a repair ran."""
        response = report.answer if response is None else response
        claims = tuple(
            ClaimLog(
                r.claim.text, Verdict(r.verdict).value, float(r.score), r.chunk_id, Route(r.route).value, r.decided_by
            )
            for r in report.claims
        )
        return cls(
            scope=scope,
            response=response,
            context=context,
            query=query if query is not None else report.question,
            kind=kind,
            retrieved=tuple(item if isinstance(item, RetrievedChunk) else RetrievedChunk(*item) for item in retrieved),
            claims=claims,
            answer_score=float(report.score),
            route=Route(report.decision).value,
            escalations=sum(1 for c in claims if c.route == Route.ESCALATE.value),
            refused=bool(report.abstained) or response.strip() == REFUSAL_TOKEN,
            latency_ms=latency_ms,
            model_ids=model_ids if model_ids is not None else {"scorer": report.model_id},
            release=release,
            segment=segment,
            gold_ids=tuple(gold_ids) if gold_ids is not None else None,
            report=report.to_dict(),
            extra=extra or {},
        )


@dataclass(frozen=True, slots=True)
class Feedback:
    id: int
    request_id: str
    thumbs: int | None
    correction: str | None
    comment: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class FeedbackSummary:
    up: int
    down: int
    corrections: int


@dataclass(frozen=True, slots=True)
class IngestResult:
    scope: str
    doc_version: int
    """The scope's document-set version after this ingest (unchanged when nothing changed)."""
    passages: tuple[Passage, ...]
    """Every current chunk of the ingested documents, in order."""
    changed_doc_ids: tuple[str, ...]
    """doc_ids whose content was new or differed: the cache entries that depend on them are stale."""
    retired_ids: tuple[str, ...]
    """Cite ids of chunks that the new versions of the documents no longer contain."""
    collisions: int = 0


# --- the store --------------------------------------------------------------------------------------------


class Store:
    """All persistence behind one object. Thread-safe: each call opens its own short transaction."""

    def __init__(self, url: str = DEFAULT_URL, *, cite_id_length: int = CITE_ID_HEX, echo: bool = False) -> None:
        import sqlalchemy as sa

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
        self.t = _tables(self.metadata)
        self.metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    # documents and chunks ---------------------------------------------------------------------------------

    def ingest(self, documents: Sequence[Document], *, scope: str, max_chars: int = 1200) -> IngestResult:
        """Store documents and their chunks; unchanged documents are left exactly as they were.

        A document unit (doc_id, page) that is re-ingested with other text replaces its chunks: ids of
        text that survives are kept, ids of text that is gone are retired (never reused for other text).
        """
        import sqlalchemy as sa

        _check_scope(scope)
        if not documents:
            raise InputError("nothing to ingest: send at least one document", code=ErrorCode.INVALID_INPUT)
        t = self.t
        changed: list[str] = []
        retired: list[str] = []
        out: list[Passage] = []
        collisions = 0
        with self._writer.begin() as conn:
            version = self._lock_scope(conn, scope) + 1
            for doc in documents:
                content_hash = _content_hash(doc)
                page_key = doc.page or 0
                row = conn.execute(
                    sa.select(t["documents"]).where(
                        t["documents"].c.scope == scope,
                        t["documents"].c.doc_id == doc.doc_id,
                        t["documents"].c.page_key == page_key,
                    )
                ).first()
                if row is not None and row.content_hash == content_hash:
                    out.extend(self._passages(conn, scope, document_id=row.id))
                    continue
                changed.append(doc.doc_id)
                values = {
                    "scope": scope,
                    "doc_id": doc.doc_id,
                    "page_key": page_key,
                    "page": doc.page,
                    "title": doc.title,
                    "type": doc.type,
                    "text": doc.text,
                    "content_hash": content_hash,
                    "version": version,
                    "updated_at": _now(),
                }
                if row is None:
                    document_id = conn.execute(
                        sa.insert(t["documents"]).values(**values).returning(t["documents"].c.id)
                    ).scalar_one()
                    old_ids: set[str] = set()
                else:
                    document_id = row.id
                    conn.execute(sa.update(t["documents"]).where(t["documents"].c.id == row.id).values(**values))
                    old_ids = set(
                        conn.execute(
                            sa.select(t["chunks"].c.cite_id).where(
                                t["chunks"].c.scope == scope, t["chunks"].c.document_id == row.id, t["chunks"].c.active
                            )
                        ).scalars()
                    )
                new_ids: list[str] = []
                for ordinal, text in enumerate(split_text(doc.text, max_chars=max_chars)):
                    key = cite_key(doc.doc_id, doc.page, text)
                    cite_id = resolve_cite_id(key, lambda cid: self._holder(conn, scope, cid), length=self._id_length)
                    collisions += cite_id != make_cite_id(key, length=self._id_length)
                    chunk_values = {
                        "document_id": document_id,
                        "doc_id": doc.doc_id,
                        "page": doc.page,
                        "type": doc.type,
                        "title": doc.title,
                        "ordinal": ordinal,
                        "text": text,
                        "norm_text": key[2],
                        "active": True,
                    }
                    exists = self._holder(conn, scope, cite_id) is not None
                    if exists:
                        conn.execute(
                            sa.update(t["chunks"])
                            .where(t["chunks"].c.scope == scope, t["chunks"].c.cite_id == cite_id)
                            .values(**chunk_values)
                        )
                    else:
                        conn.execute(sa.insert(t["chunks"]).values(scope=scope, cite_id=cite_id, **chunk_values))
                    new_ids.append(cite_id)
                    out.append(Passage(cite_id, text, doc.doc_id, doc.title, doc.page, doc.type))
                gone = sorted(old_ids - set(new_ids))
                if gone:
                    conn.execute(
                        sa.update(t["chunks"])
                        .where(t["chunks"].c.scope == scope, t["chunks"].c.cite_id.in_(gone))
                        .values(active=False)
                    )
                    retired.extend(gone)
            version = self._bump_version(conn, scope) if changed else version - 1
        return IngestResult(scope, version, tuple(out), tuple(dict.fromkeys(changed)), tuple(retired), collisions)

    def doc_version(self, *, scope: str) -> int:
        """The scope's document-set version: it goes up by one with every ingest that changes content."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(self.t["scopes"].c.doc_version).where(self.t["scopes"].c.scope == scope)
            ).scalar()
        return int(value or 0)

    def doc_set_version(self, *, scope: str, doc_ids: Sequence[str] | None = None) -> str:
        """A cache key for "the documents an answer can draw on", for SemanticCache's doc_version.

        With doc_ids: a fingerprint of exactly those documents' current content, so ingesting other
        documents leaves cached answers over these servable, while changing one of them does not.
        Without: the scope-wide counter (any content change anywhere in the scope makes a new version).
        """
        import sqlalchemy as sa

        if doc_ids is None:
            return f"scope:{self.doc_version(scope=scope)}"
        d = self.t["documents"].c
        query = sa.select(d.doc_id, d.page_key, d.content_hash).where(
            d.scope == scope, d.doc_id.in_(sorted(set(doc_ids)))
        )
        with self.engine.connect() as conn:
            rows = sorted((row.doc_id, row.page_key, row.content_hash) for row in conn.execute(query))
        digest = hashlib.blake2b(digest_size=16)
        for doc_id, page_key, content_hash in rows:
            digest.update(f"{doc_id}\x1f{page_key}\x1f{content_hash}\x1e".encode())
        return "docs:" + digest.hexdigest()

    def passages(
        self, *, scope: str, cite_ids: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None
    ) -> list[Passage]:
        """Active chunks of the scope, optionally only these cite ids or these documents."""
        import sqlalchemy as sa

        c = self.t["chunks"].c
        # coalesce: SQLite sorts NULL pages first and PostgreSQL last; the order must not depend on the backend.
        order = (c.doc_id, sa.func.coalesce(c.page, 0), c.ordinal)
        query = sa.select(self.t["chunks"]).where(c.scope == scope, c.active).order_by(*order)
        if cite_ids is not None:
            query = query.where(c.cite_id.in_(list(cite_ids)))
        if doc_ids is not None:
            query = query.where(c.doc_id.in_(list(doc_ids)))
        with self.engine.connect() as conn:
            return [_passage(row) for row in conn.execute(query)]

    def lookup_passages(self, cite_ids: Sequence[str], *, scope: str) -> dict[str, Passage]:
        """Any chunk of the scope that ever held these ids, retired ones included (old log rows resolve)."""
        import sqlalchemy as sa

        c = self.t["chunks"].c
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.t["chunks"]).where(c.scope == scope, c.cite_id.in_(list(cite_ids))))
            return {row.cite_id: _passage(row) for row in rows}

    def _holder(self, conn: sa.Connection, scope: str, cite_id: str) -> CiteKey | None:
        import sqlalchemy as sa

        c = self.t["chunks"].c
        row = conn.execute(
            sa.select(c.doc_id, c.page, c.norm_text).where(c.scope == scope, c.cite_id == cite_id)
        ).first()
        return None if row is None else (row.doc_id, row.page, row.norm_text)

    def _passages(self, conn: sa.Connection, scope: str, *, document_id: int) -> list[Passage]:
        import sqlalchemy as sa

        c = self.t["chunks"].c
        query = (
            sa.select(self.t["chunks"])
            .where(c.scope == scope, c.document_id == document_id, c.active)
            .order_by(c.ordinal)
        )
        return [_passage(row) for row in conn.execute(query)]

    def _lock_scope(self, conn: sa.Connection, scope: str) -> int:
        """Serialise ingests of one scope (row lock on PostgreSQL; SQLite's BEGIN IMMEDIATE already does),
        so two concurrent ingests cannot both insert the same document or claim the same cite id."""
        import sqlalchemy as sa

        s = self.t["scopes"]
        conn.execute(_insert_ignore(conn, s, {"scope": scope, "doc_version": 0}))
        return int(conn.execute(sa.select(s.c.doc_version).where(s.c.scope == scope).with_for_update()).scalar_one())

    def _bump_version(self, conn: sa.Connection, scope: str) -> int:
        import sqlalchemy as sa

        s = self.t["scopes"]
        conn.execute(sa.update(s).where(s.c.scope == scope).values(doc_version=s.c.doc_version + 1))
        return int(conn.execute(sa.select(s.c.doc_version).where(s.c.scope == scope)).scalar_one())

    # request log ------------------------------------------------------------------------------------------

    def log_request(self, record: RequestRecord) -> str:
        """Append one row to the request log (committed before this returns) and give back its id."""
        import sqlalchemy as sa

        _check_scope(record.scope)
        request_id = record.id or uuid.uuid4().hex
        values = {
            "id": request_id,
            "scope": record.scope,
            "created_at": record.created_at or _now(),
            "kind": record.kind,
            "query": record.query,
            "retrieved": [{"cite_id": r.cite_id, "score": r.score} for r in record.retrieved],
            "context": record.context,
            "response": record.response,
            "claims": [_claim_dict(c) for c in record.claims],
            "answer_score": record.answer_score,
            "route": record.route,
            "escalations": record.escalations,
            "refused": record.refused,
            "latency_ms": record.latency_ms,
            "model_ids": dict(record.model_ids),
            "release": record.release,
            "segment": record.segment,
            "gold_ids": list(record.gold_ids) if record.gold_ids is not None else None,
            "report": record.report,
            "extra": dict(record.extra),
        }
        _check_json(values)
        with self._writer.begin() as conn:
            conn.execute(sa.insert(self.t["requests"]).values(**values))
        return request_id

    def get_request(self, request_id: str, *, scope: str) -> RequestRecord | None:
        """The row, or None when it does not exist or belongs to another scope (the two look the same)."""
        import sqlalchemy as sa

        r = self.t["requests"]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(r).where(r.c.id == request_id, r.c.scope == scope)).first()
        return None if row is None else _record(row)

    def requests(
        self,
        *,
        scope: str | None,
        since: datetime | None = None,
        until: datetime | None = None,
        release: str | None = None,
        segment: str | None = None,
        limit: int | None = 100,
        newest_first: bool = True,
    ) -> list[RequestRecord]:
        """Logged requests of one scope (scope=None reads every scope: for operators' eval runs only)."""
        import sqlalchemy as sa

        r = self.t["requests"]
        query = sa.select(r)
        if scope is not None:
            query = query.where(r.c.scope == scope)
        if since is not None:
            query = query.where(r.c.created_at >= since)
        if until is not None:
            query = query.where(r.c.created_at < until)
        if release is not None:
            query = query.where(r.c.release == release)
        if segment is not None:
            query = query.where(r.c.segment == segment)
        query = query.order_by(r.c.created_at.desc() if newest_first else r.c.created_at, r.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_record(row) for row in conn.execute(query)]

    def sample_requests(
        self, *, scope: str | None, n: int, seed: int = 0, since: datetime | None = None
    ) -> list[RequestRecord]:
        """A reproducible random sample of up to n logged requests (the eval loop's rolling sample).

        Rows are ranked by a hash of (seed, id), so the same seed over the same rows gives the same sample
        and a growing log keeps most of an earlier sample.
        """
        import sqlalchemy as sa

        r = self.t["requests"]
        ids_query = sa.select(r.c.id).where(r.c.kind != ERROR_KIND)  # failed requests have nothing to evaluate
        if scope is not None:
            ids_query = ids_query.where(r.c.scope == scope)
        if since is not None:
            ids_query = ids_query.where(r.c.created_at >= since)
        # Rank ids only; the full rows (context, report) are read for the chosen few.
        with self.engine.connect() as conn:
            ids = list(conn.execute(ids_query).scalars())
        ids.sort(key=lambda request_id: hashlib.blake2b(f"{seed}:{request_id}".encode(), digest_size=8).digest())
        chosen = ids[: max(n, 0)]
        rows: list[RequestRecord] = []
        with self.engine.connect() as conn:
            for start in range(0, len(chosen), 500):
                batch = chosen[start : start + 500]
                rows.extend(_record(row) for row in conn.execute(sa.select(r).where(r.c.id.in_(batch))))
        return sorted(rows, key=lambda rec: (rec.created_at or _now(), rec.id or ""))

    # feedback ---------------------------------------------------------------------------------------------

    def add_feedback(
        self,
        request_id: str,
        *,
        scope: str,
        thumbs: int | None = None,
        correction: str | None = None,
        comment: str | None = None,
    ) -> int:
        """Record thumbs up (+1) / down (-1) and/or a correction for a logged request of the same scope."""
        import sqlalchemy as sa

        if thumbs is not None and thumbs not in (-1, 1):
            raise InputError("thumbs must be 1 (up) or -1 (down)", code=ErrorCode.INVALID_FEEDBACK)
        if thumbs is None and not (correction or "").strip() and not (comment or "").strip():
            raise InputError("feedback needs thumbs, a correction or a comment", code=ErrorCode.INVALID_FEEDBACK)
        with self._writer.begin() as conn:
            r = self.t["requests"]
            found = conn.execute(sa.select(r.c.id).where(r.c.id == request_id, r.c.scope == scope)).first()
            if found is None:
                raise InputError(f"no logged request {request_id!r} in this scope", code=ErrorCode.INVALID_FEEDBACK)
            values = {
                "request_id": request_id,
                "scope": scope,
                "created_at": _now(),
                "thumbs": thumbs,
                "correction": correction,
                "comment": comment,
            }
            return int(
                conn.execute(
                    sa.insert(self.t["feedback"]).values(**values).returning(self.t["feedback"].c.id)
                ).scalar_one()
            )

    def feedback(self, request_id: str, *, scope: str) -> list[Feedback]:
        import sqlalchemy as sa

        f = self.t["feedback"]
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(f).where(f.c.request_id == request_id, f.c.scope == scope).order_by(f.c.id))
            return [
                Feedback(row.id, row.request_id, row.thumbs, row.correction, row.comment, _aware(row.created_at))
                for row in rows
            ]

    def feedback_summary(self, request_ids: Sequence[str], *, scope: str | None) -> dict[str, FeedbackSummary]:
        """Thumbs and corrections per request, in one query (requests without feedback are left out).

        scope=None reads every scope: for operators' eval runs only.
        """
        import sqlalchemy as sa

        f = self.t["feedback"]
        query = (
            sa.select(
                f.c.request_id,
                sa.func.sum(sa.case((f.c.thumbs == 1, 1), else_=0)),
                sa.func.sum(sa.case((f.c.thumbs == -1, 1), else_=0)),
                sa.func.count(f.c.correction),
            )
            .where(f.c.request_id.in_(list(request_ids)))
            .group_by(f.c.request_id)
        )
        if scope is not None:
            query = query.where(f.c.scope == scope)
        with self.engine.connect() as conn:
            return {row[0]: FeedbackSummary(int(row[1]), int(row[2]), int(row[3])) for row in conn.execute(query)}

    # eval runs --------------------------------------------------------------------------------------------

    def save_eval_run(self, metrics: dict[str, Any], *, scope: str | None = None, release: str | None = None) -> int:
        import sqlalchemy as sa

        _check_json(metrics)
        with self._writer.begin() as conn:
            values = {"scope": scope, "created_at": _now(), "release": release, "metrics": metrics}
            return int(
                conn.execute(
                    sa.insert(self.t["eval_runs"]).values(**values).returning(self.t["eval_runs"].c.id)
                ).scalar_one()
            )

    def log_version(self, *, scope: str) -> tuple[object, ...]:
        """A value that changes whenever the scope's request log, feedback, eval runs or documents change (rows
        are only ever added): what a cache of eval-loop results over the scope is keyed on."""
        import sqlalchemy as sa

        r, f, e = self.t["requests"], self.t["feedback"], self.t["eval_runs"]
        with self.engine.connect() as conn:
            requests = conn.execute(sa.select(sa.func.count(), sa.func.max(r.c.created_at)).where(
                r.c.scope == scope, r.c.kind != ERROR_KIND)).one()
            feedback = conn.execute(sa.select(sa.func.count(), sa.func.max(f.c.id)).where(f.c.scope == scope)).one()
            runs = conn.execute(sa.select(sa.func.count(), sa.func.max(e.c.id)).where(e.c.scope == scope)).one()
        return (*requests, *feedback, *runs, self.doc_version(scope=scope))

    def eval_runs(self, *, scope: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Earlier eval-loop runs, oldest first: the history the report plots."""
        import sqlalchemy as sa

        e = self.t["eval_runs"]
        query = sa.select(e).where(e.c.scope.is_(None) if scope is None else e.c.scope == scope)
        query = query.order_by(e.c.created_at.desc(), e.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query))
        return [
            {
                "id": row.id,
                "created_at": _aware(row.created_at).isoformat(),
                "release": row.release,
                "metrics": row.metrics,
            }
            for row in reversed(rows)
        ]


# --- helpers ----------------------------------------------------------------------------------------------


def _insert_ignore(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> Any:
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


def _check_scope(scope: str) -> None:
    if not isinstance(scope, str) or not scope.strip():
        raise InputError("a permission scope is required (a non-empty string)", code=ErrorCode.INVALID_INPUT)


def _check_json(values: dict[str, Any]) -> None:
    """Fail with a clear message before the transaction, instead of a driver error half way through."""
    try:
        json.dumps(values, default=lambda o: o.isoformat() if isinstance(o, datetime) else _unjsonable(o))
    except (TypeError, ValueError) as error:
        raise InputError(f"request-log values must be JSON-serialisable: {error}",
                         code=ErrorCode.INVALID_INPUT) from error


def _unjsonable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _content_hash(doc: Document) -> str:
    material = "\x1f".join((doc.title, doc.type, doc.text))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything here is stored in UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _passage(row: Any) -> Passage:
    return Passage(row.cite_id, row.text, row.doc_id, row.title, row.page, row.type)


def _claim_dict(claim: ClaimLog) -> dict[str, Any]:
    return {
        "text": claim.text,
        "verdict": claim.verdict,
        "score": claim.score,
        "chunk_id": claim.chunk_id,
        "route": claim.route,
        "decided_by": claim.decided_by,
    }


def _record(row: Any) -> RequestRecord:
    return RequestRecord(
        id=row.id,
        scope=row.scope,
        created_at=_aware(row.created_at),
        kind=row.kind,
        query=row.query,
        retrieved=tuple(RetrievedChunk(item["cite_id"], item.get("score")) for item in row.retrieved),
        context=row.context,
        response=row.response,
        claims=tuple(ClaimLog(**item) for item in row.claims),
        answer_score=row.answer_score,
        route=row.route,
        escalations=row.escalations,
        refused=bool(row.refused),
        latency_ms=row.latency_ms,
        model_ids=dict(row.model_ids),
        release=row.release,
        segment=row.segment,
        gold_ids=tuple(row.gold_ids) if row.gold_ids is not None else None,
        report=row.report,
        extra=dict(row.extra or {}),
    )
