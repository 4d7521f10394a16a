"""The LLM judge's labels (`serve --judge-labels`): when the judge settles an escalated answer, its verdict is kept
as a label of kind "judge", in a table apart from the reviewers' verdicts (verdicts.py), so that every read says
which kind it wants: nothing mixes them unasked. A request keeps the newest judge label written on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from groundwire.data.store.records import JudgeLabel, MarkedClaim, RequestRecord, aware, record_from_row
from groundwire.data.store.request_log import RequestLog
from groundwire.data.store.schema import now
from groundwire.foundation.errors import ErrorCode, InputError

_BATCH = 500
"""Ids per IN (...) query: well under SQLite's bound on host parameters."""


class JudgeLabels(RequestLog):
    def add_judge_label(self, request_id: str, *, scope: str, faithful: bool, judge: str,
                        unfaithful_claims: Sequence[int] = ()) -> JudgeLabel:
        """Record the judge's verdict on a logged request of this scope (`unfaithful_claims`: indexes into its
        logged claims, the ones the judge did not find supported)."""
        if faithful and unfaithful_claims:
            raise InputError("claims ruled not supported need the verdict faithful=false",
                             code=ErrorCode.INVALID_VERDICT)
        r, j = self.t["requests"], self.t["judge_labels"]
        with self._writer.begin() as conn:
            row = conn.execute(sa.select(r.c.claims).where(r.c.id == request_id, r.c.scope == scope)).first()
            if row is None:
                raise InputError(f"no logged request {request_id!r} in this scope", code=ErrorCode.REQUEST_NOT_FOUND)
            texts = [c["text"] for c in row.claims]
            claims = tuple(MarkedClaim(i, texts[i]) for i in unfaithful_claims if 0 <= i < len(texts))
            created = now()
            label_id = conn.execute(sa.insert(j).values(
                request_id=request_id, scope=scope, created_at=created, faithful=faithful, judge=judge,
                unfaithful_claims=[{"index": c.index, "text": c.text} for c in claims]).returning(j.c.id)).scalar_one()
        return JudgeLabel(int(label_id), request_id, faithful, claims, created, judge)

    def judge_labels_version(self, *, scope: str) -> tuple[int, int | None]:
        """A value that changes whenever a judge label is added to the scope (as `verdicts_version`)."""
        j = self.t["judge_labels"]
        with self.engine.connect() as conn:
            count, newest = conn.execute(sa.select(sa.func.count(), sa.func.max(j.c.id)).where(j.c.scope == scope)).one()
        return int(count), None if newest is None else int(newest)

    def judged(self, *, scope: str) -> list[tuple[RequestRecord, JudgeLabel]]:
        """The scope's requests that have a judge label, oldest first, each with its newest one."""
        j, r = self.t["judge_labels"], self.t["requests"]
        newest = sa.select(sa.func.max(j.c.id)).where(j.c.scope == scope).group_by(j.c.request_id)
        with self.engine.connect() as conn:
            labels = {row.request_id: _label(row) for row in conn.execute(sa.select(j).where(j.c.id.in_(newest)))}
        ids = list(labels)
        records: list[RequestRecord] = []
        with self.engine.connect() as conn:
            for start in range(0, len(ids), _BATCH):
                batch = ids[start : start + _BATCH]
                records.extend(record_from_row(row) for row in conn.execute(
                    sa.select(r).where(r.c.scope == scope, r.c.id.in_(batch))))
        records.sort(key=lambda rec: (rec.created_at or now(), rec.id or ""))
        return [(record, labels[record.id or ""]) for record in records]


def _label(row: Any) -> JudgeLabel:
    claims = tuple(MarkedClaim(int(item["index"]), str(item["text"])) for item in row.unfaithful_claims)
    return JudgeLabel(int(row.id), row.request_id, bool(row.faithful), claims, aware(row.created_at), str(row.judge))
