"""Reviewers' verdicts on logged answers: faithful or not, and which claims are not, written with the thumbs and
correction given beside them (one transaction); the verdict in force per request, and the reviewed requests of a
scope (what `groundwire.data.labelled` turns into labelled rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from groundwire.data.store.records import (
    ERROR_KIND,
    MarkedClaim,
    RequestRecord,
    ReviewVerdict,
    ReviewWritten,
    aware,
    record_from_row,
)
from groundwire.data.store.request_log import RequestLog, check_thumbs
from groundwire.data.store.schema import now
from groundwire.foundation.errors import ErrorCode, InputError

_BATCH = 500
"""Ids per IN (...) query: well under SQLite's bound on host parameters."""


class Verdicts(RequestLog):
    def add_review(
        self,
        request_id: str,
        *,
        scope: str,
        thumbs: int | None = None,
        correction: str | None = None,
        faithful: bool | None = None,
        unfaithful_claims: Sequence[int] = (),
    ) -> ReviewWritten:
        """Record a reviewer's input on a logged request of this scope, in one transaction: thumbs (+1 / -1) and/or a
        correction as a feedback row, and/or a verdict (`faithful`, with `unfaithful_claims` as indexes into the
        request's logged claims when it is not). A verdict never overwrites: the newest is the one in force."""
        check_thumbs(thumbs)
        marked = list(unfaithful_claims)
        if marked and faithful is not False:
            raise InputError("claims marked not faithful need the verdict faithful=false",
                             code=ErrorCode.INVALID_VERDICT)
        if thumbs is None and not (correction or "").strip() and faithful is None:
            raise InputError("a review needs thumbs, a correction or a verdict (faithful true or false)",
                             code=ErrorCode.INVALID_FEEDBACK)
        if len(set(marked)) != len(marked):
            raise InputError(f"a claim is marked twice: {marked}", code=ErrorCode.INVALID_VERDICT)
        r, v = self.t["requests"], self.t["verdicts"]
        with self._writer.begin() as conn:
            row = conn.execute(sa.select(r.c.kind, r.c.claims, r.c.response).where(
                r.c.id == request_id, r.c.scope == scope)).first()
            if row is None:
                raise InputError(f"no logged request {request_id!r} in this scope", code=ErrorCode.REQUEST_NOT_FOUND)
            feedback_id = None
            if thumbs is not None or (correction or "").strip():
                feedback_id = self._insert_feedback(conn, request_id, scope=scope, thumbs=thumbs,
                                                    correction=correction, comment=None)
            if faithful is None:
                return ReviewWritten(feedback_id, None)
            claims = _marked(request_id, row.kind, row.response, [c["text"] for c in row.claims], marked)
            replaces = conn.execute(sa.select(sa.func.max(v.c.id)).where(v.c.request_id == request_id,
                                                                          v.c.scope == scope)).scalar()
            created = now()
            verdict_id = conn.execute(sa.insert(v).values(
                request_id=request_id, scope=scope, created_at=created, faithful=faithful,
                unfaithful_claims=[{"index": c.index, "text": c.text} for c in claims]).returning(v.c.id)).scalar_one()
        verdict = ReviewVerdict(int(verdict_id), request_id, faithful, claims, created)
        return ReviewWritten(feedback_id, verdict, None if replaces is None else int(replaces))

    def verdicts(self, request_id: str, *, scope: str) -> list[ReviewVerdict]:
        """Every verdict on the request, oldest first: the last is the one in force."""
        v = self.t["verdicts"]
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(v).where(v.c.request_id == request_id, v.c.scope == scope).order_by(v.c.id))
            return [_verdict(row) for row in rows]

    def latest_verdicts(self, request_ids: Sequence[str], *, scope: str) -> dict[str, ReviewVerdict]:
        """The verdict in force per request (requests without one are left out)."""
        v = self.t["verdicts"]
        newest = sa.select(sa.func.max(v.c.id)).where(v.c.scope == scope).group_by(v.c.request_id)
        out: dict[str, ReviewVerdict] = {}
        ids = list(dict.fromkeys(request_ids))
        with self.engine.connect() as conn:
            for start in range(0, len(ids), _BATCH):
                batch = ids[start : start + _BATCH]
                query = sa.select(v).where(v.c.id.in_(newest.where(v.c.request_id.in_(batch))))
                out.update((row.request_id, _verdict(row)) for row in conn.execute(query))
        return out

    def verdicts_version(self, *, scope: str) -> tuple[int, int | None]:
        """A value that changes whenever a verdict is added to the scope (verdicts are only added, and the requests
        they label never change): what a cache of the scope's labels is keyed on."""
        v = self.t["verdicts"]
        with self.engine.connect() as conn:
            count, newest = conn.execute(sa.select(sa.func.count(), sa.func.max(v.c.id)).where(v.c.scope == scope)).one()
        return int(count), None if newest is None else int(newest)

    def reviewed(self, *, scope: str) -> list[tuple[RequestRecord, ReviewVerdict]]:
        """The scope's requests that have a verdict, oldest first, each with the verdict in force."""
        v = self.t["verdicts"]
        query = sa.select(v.c.request_id).where(v.c.scope == scope).distinct()
        with self.engine.connect() as conn:
            ids = list(conn.execute(query).scalars())
        verdicts = self.latest_verdicts(ids, scope=scope)
        r = self.t["requests"]
        records: list[RequestRecord] = []
        with self.engine.connect() as conn:
            for start in range(0, len(ids), _BATCH):
                batch = ids[start : start + _BATCH]
                rows = conn.execute(sa.select(r).where(r.c.scope == scope, r.c.id.in_(batch)))
                records.extend(record_from_row(row) for row in rows)
        records.sort(key=lambda rec: (rec.created_at or now(), rec.id or ""))
        return [(record, verdicts[record.id or ""]) for record in records]


    def reviewed_keys(self, *, scope: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
        """The `extra` and the retrieved cite ids of the scope's requests that have a verdict: what the review
        queue's teach order reads (the task and the source of each label) without the rows' context and report."""
        v, r = self.t["verdicts"], self.t["requests"]
        reviewed = sa.select(v.c.request_id).where(v.c.scope == scope)
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(r.c.extra, r.c.retrieved).where(r.c.scope == scope,
                                                                          r.c.id.in_(reviewed)))
            return [(dict(row.extra or {}), tuple(str(item["cite_id"]) for item in row.retrieved)) for row in rows]

    def unreviewed_requests(self, *, scope: str, limit: int) -> list[RequestRecord]:
        """The scope's newest `limit` requests without feedback and without a verdict: what the review queue is
        drawn from (a reviewed request has left it)."""
        r, v, f = self.t["requests"], self.t["verdicts"], self.t["feedback"]
        query = (sa.select(r).where(r.c.scope == scope,
                                    ~sa.exists().where(v.c.request_id == r.c.id, v.c.scope == scope),
                                    ~sa.exists().where(f.c.request_id == r.c.id, f.c.scope == scope))
                 .order_by(r.c.created_at.desc(), r.c.id).limit(limit))
        with self.engine.connect() as conn:
            return [record_from_row(row) for row in conn.execute(query)]


def _marked(request_id: str, kind: str, answer: str | None, texts: Sequence[str],
            marked: Sequence[int]) -> tuple[MarkedClaim, ...]:
    """The marked claims with their logged texts; an index the request does not have is the reviewer's error. A
    failed request takes a verdict when its answer was logged (one that failed after it was accepted: it has no
    claims to mark); one logged without an answer does not."""
    if kind == ERROR_KIND and not (answer or "").strip():
        raise InputError(f"request {request_id!r} failed before its answer was accepted: it has no answer to give a "
                         "verdict on", code=ErrorCode.INVALID_VERDICT)
    wrong = [index for index in marked if not 0 <= index < len(texts)]
    if wrong:
        have = f"claims 0 to {len(texts) - 1}" if texts else "no claims"
        raise InputError(f"request {request_id!r} has {have}: no claim {', '.join(map(str, wrong))} to mark",
                         code=ErrorCode.INVALID_VERDICT)
    return tuple(MarkedClaim(index, texts[index]) for index in marked)


def _verdict(row: Any) -> ReviewVerdict:
    claims = tuple(MarkedClaim(int(item["index"]), str(item["text"])) for item in row.unfaithful_claims)
    return ReviewVerdict(int(row.id), row.request_id, bool(row.faithful), claims, aware(row.created_at))
