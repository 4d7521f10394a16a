"""The request log and its feedback, by scope: a row per request (its report, claims and retrieved chunks),
reads and samples of it, and the thumbs and corrections users give."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime

import sqlalchemy as sa

from groundwire.data.store.records import (
    ERROR_KIND,
    Feedback,
    FeedbackSummary,
    RequestRecord,
    aware,
    claim_dict,
    record_from_row,
)
from groundwire.data.store.schema import StoreBase, now, validate_json, validate_scope
from groundwire.foundation.errors import ErrorCode, InputError


def check_thumbs(thumbs: int | None) -> None:
    if thumbs is not None and thumbs not in (-1, 1):
        raise InputError("thumbs must be 1 (up) or -1 (down)", code=ErrorCode.INVALID_FEEDBACK)


class RequestLog(StoreBase):
    def log_request(self, record: RequestRecord) -> str:
        """Append one row to the request log (committed before this returns) and give back its id."""
        validate_scope(record.scope)
        request_id = record.id or uuid.uuid4().hex
        values = {
            "id": request_id,
            "scope": record.scope,
            "created_at": record.created_at or now(),
            "kind": record.kind,
            "query": record.query,
            "retrieved": [{"cite_id": r.cite_id, "score": r.score} for r in record.retrieved],
            "context": record.context,
            "response": record.response,
            "claims": [claim_dict(c) for c in record.claims],
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
        validate_json(values)
        with self._writer.begin() as conn:
            conn.execute(sa.insert(self.t["requests"]).values(**values))
        return request_id

    def get_request(self, request_id: str, *, scope: str) -> RequestRecord | None:
        """The row, or None when it does not exist or belongs to another scope (the two look the same)."""
        r = self.t["requests"]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(r).where(r.c.id == request_id, r.c.scope == scope)).first()
        return None if row is None else record_from_row(row)

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
            return [record_from_row(row) for row in conn.execute(query)]

    def arrivals(self, *, scope: str) -> Iterator[tuple[datetime, str | None]]:
        """Every logged request of `scope` as (when it arrived, its route), in no order: what a refit weighs the
        scope's labels by (data.labelled.label_strata). Two columns, streamed: a long log is not held in memory."""
        r = self.t["requests"]
        query = sa.select(r.c.created_at, r.c.route).where(r.c.scope == scope)
        with self.engine.connect() as conn:
            for created_at, route in conn.execution_options(yield_per=5000).execute(query):
                yield aware(created_at), route

    def sample_requests(
        self, *, scope: str | None, n: int, seed: int = 0, since: datetime | None = None
    ) -> list[RequestRecord]:
        """A reproducible random sample of up to n logged requests (the eval loop's rolling sample).

        Rows are ranked by a hash of (seed, id), so the same seed over the same rows gives the same sample
        and a growing log keeps most of an earlier sample.
        """
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
                rows.extend(record_from_row(row) for row in conn.execute(sa.select(r).where(r.c.id.in_(batch))))
        return sorted(rows, key=lambda rec: (rec.created_at or now(), rec.id or ""))

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
        check_thumbs(thumbs)
        if thumbs is None and not (correction or "").strip() and not (comment or "").strip():
            raise InputError("feedback needs thumbs, a correction or a comment", code=ErrorCode.INVALID_FEEDBACK)
        with self._writer.begin() as conn:
            r = self.t["requests"]
            found = conn.execute(sa.select(r.c.id).where(r.c.id == request_id, r.c.scope == scope)).first()
            if found is None:
                raise InputError(f"no logged request {request_id!r} in this scope", code=ErrorCode.INVALID_FEEDBACK)
            return self._insert_feedback(conn, request_id, scope=scope, thumbs=thumbs, correction=correction,
                                         comment=comment)

    def _insert_feedback(self, conn: sa.Connection, request_id: str, *, scope: str, thumbs: int | None,
                         correction: str | None, comment: str | None) -> int:
        values = {
            "request_id": request_id,
            "scope": scope,
            "created_at": now(),
            "thumbs": thumbs,
            "correction": correction,
            "comment": comment,
        }
        return int(
            conn.execute(sa.insert(self.t["feedback"]).values(**values).returning(self.t["feedback"].c.id)).scalar_one()
        )

    def feedback(self, request_id: str, *, scope: str) -> list[Feedback]:
        f = self.t["feedback"]
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(f).where(f.c.request_id == request_id, f.c.scope == scope).order_by(f.c.id))
            return [
                Feedback(row.id, row.request_id, row.thumbs, row.correction, row.comment, aware(row.created_at))
                for row in rows
            ]

    def feedback_summary(self, request_ids: Sequence[str], *, scope: str | None) -> dict[str, FeedbackSummary]:
        """Thumbs and corrections per request, in one query (requests without feedback are left out).

        scope=None reads every scope: for operators' eval runs only.
        """
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
