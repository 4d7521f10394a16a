"""The eval loop's items: one answer under evaluation, built from the frozen set (re-checked with today's verifier)
or from the request log (the verdicts logged at the time), and the failure kinds the partition gives it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Chunk, Route, Verdict
from groundwire.pipeline import CheckItem, check_many

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.verifier import Verifier
    from groundwire.data.rows import EvalRow
    from groundwire.data.store import ClaimLog, FeedbackSummary, RequestRecord

RETRIEVAL_MISS, GENERATOR_DRIFT, UNDETERMINED = "retrieval_miss", "generator_drift", "undetermined"


@dataclass(frozen=True, slots=True)
class LoggedClaim:
    text: str
    verdict: str
    score: float


@dataclass(frozen=True, slots=True)
class EvalItem:
    """One answer under evaluation, from the frozen set or the request log (`origin` says which)."""

    id: str
    origin: str
    answer: str
    claims: tuple[LoggedClaim, ...]
    refused: bool
    escalated: bool
    retrieved_ids: tuple[str, ...] = ()
    gold_ids: tuple[str, ...] | None = None
    hallucinated: bool | None = None
    """The gold label, where one exists (frozen set)."""
    score: float | None = None
    route: str | None = None
    """The answer-level decision (accept / escalate / reject)."""
    release: str | None = None
    segment: str | None = None
    scope: str | None = None
    created_at: datetime | None = None
    failure: str | None = None
    """None (not a failure), RETRIEVAL_MISS, GENERATOR_DRIFT or UNDETERMINED."""
    thumbs_down: bool | None = None
    """Whether a person gave the answer a thumbs down (or sent a correction); None without feedback."""

    @property
    def failed(self) -> bool:
        if self.refused:
            return False
        if self.hallucinated is not None:
            return self.hallucinated
        return any(c.verdict != Verdict.SUPPORTED.value for c in self.claims)

    @property
    def unsupported_claims(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.claims if c.verdict != Verdict.SUPPORTED.value)


def items_from_frozen(
    rows: Sequence[EvalRow],
    verifier: Verifier,
    *,
    release: str | None = None,
    segment_by: Callable[[EvalRow], str | None] = lambda row: row.source,
    on_row: Callable[[], None] | None = None,
) -> list[EvalItem]:
    """Verify every frozen-set answer against its own context (chunks S1, S2...) with today's verifier, through
    `pipeline.check_many`; `on_row` is called after each (a progress bar). A row the verifier refuses stops the
    run with its InputError: a frozen set is curated, so it is fixed rather than skipped."""
    items: list[EvalItem] = []
    checks = (
        CheckItem(
            row.answer,
            [Chunk(id=f"S{i}", text=text, doc_id=row.id) for i, text in enumerate(row.context, start=1)],
            question=row.question,
        )
        for row in rows
    )
    for row, checked in zip(rows, check_many(verifier, checks), strict=True):
        if checked.report is None:
            cause = (checked.code or ErrorCode.INTERNAL_ERROR).value
            raise InputError(f"frozen row {row.id!r} could not be checked ({cause}): {checked.error}",
                             code=ErrorCode.INVALID_ROW)
        report = checked.report
        claims = tuple(LoggedClaim(r.claim.text, Verdict(r.verdict).value, float(r.score)) for r in report.claims)
        items.append(
            EvalItem(
                id=row.id,
                origin="frozen",
                answer=row.answer,
                claims=claims,
                refused=bool(report.abstained),
                escalated=report.route is Route.ESCALATE or any(r.route is Route.ESCALATE for r in report.claims),
                retrieved_ids=tuple(text_id(text) for text in row.context),
                hallucinated=row.hallucinated,
                score=float(report.score),
                route=report.route.value,
                release=release,
                segment=segment_by(row),
            )
        )
        if on_row is not None:
            on_row()
    return items


def items_from_log(
    records: Iterable[RequestRecord], *, feedback: Mapping[str, FeedbackSummary] | None = None
) -> list[EvalItem]:
    """Items from logged requests, using the verdicts logged at the time (no model is re-run)."""
    feedback = feedback or {}
    return [
        EvalItem(
            id=record.id or "",
            origin="log",
            answer=record.response,
            claims=tuple(_logged(c) for c in record.claims),
            refused=record.refused,
            escalated=record.escalations > 0 or record.route == Route.ESCALATE.value,
            retrieved_ids=tuple(r.cite_id for r in record.retrieved),
            gold_ids=record.gold_ids,
            score=record.answer_score,
            route=record.route,
            release=record.release,
            segment=record.segment,
            scope=record.scope,
            created_at=record.created_at,
            thumbs_down=_thumbs_down(feedback.get(record.id or "")),
        )
        for record in records
    ]


def _thumbs_down(summary: FeedbackSummary | None) -> bool | None:
    return None if summary is None else bool(summary.down or summary.corrections)


def _logged(claim: ClaimLog) -> LoggedClaim:
    return LoggedClaim(claim.text, claim.verdict, claim.score)


def text_id(text: str) -> str:
    """A frozen-set chunk's id: rows that share a passage share its id."""
    return "t_" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()
