"""The request log's records as Python sees them (no database here): a logged request, its claims and retrieved
chunks, feedback, and what an ingest did. Pure Python, so the service and the eval loop can name them without
loading SQLAlchemy."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from groundwire.data.provenance import Passage
from groundwire.foundation.types import REFUSAL_TOKEN, Report, Route, Verdict

ERROR_KIND = "error"
"""The kind of a request-log row for a failed request (4xx/5xx): no report, nothing for the eval loop."""


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
        dumped: dict[str, Any] | None = None,
    ) -> RequestRecord:
        """`response` defaults to the verified answer; pass the repaired text when a repair ran. `dumped`: the
        report as JSON, serialised already by the caller (the service's response holds it); None: `to_dict()`."""
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
            route=report.route.value,
            escalations=sum(1 for c in claims if c.route == Route.ESCALATE.value),
            refused=bool(report.abstained) or response.strip() == REFUSAL_TOKEN,
            latency_ms=latency_ms,
            model_ids=model_ids if model_ids is not None else {"scorer": report.model_id},
            release=release,
            segment=segment,
            gold_ids=tuple(gold_ids) if gold_ids is not None else None,
            report=report.to_dict() if dumped is None else dumped,
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
class MarkedClaim:
    """A claim a reviewer marked not faithful: its index in the logged request's claims, and its text there."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """A reviewer's verdict on a logged answer: faithful to its context or not, and which claims are not.

    Verdicts are only ever added: the newest on a request is the one in force (the label `adapt --from-log` reads),
    the earlier ones stay, with their times, as its history."""

    id: int
    request_id: str
    faithful: bool
    unfaithful_claims: tuple[MarkedClaim, ...]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class JudgeLabel:
    """The LLM judge's settlement of an escalated answer, kept as a label of kind "judge" (`serve --judge-labels`).

    Kept apart from reviewers' verdicts (a table of its own): it is counted apart, weighted apart (`--judge-weight`)
    and used only where a fit asks for judge labels. `unfaithful_claims`: the claims the judge did not find supported
    (as a reviewer's marked claims); `judge`: the judge's model."""

    id: int
    request_id: str
    faithful: bool
    unfaithful_claims: tuple[MarkedClaim, ...]
    created_at: datetime
    judge: str


@dataclass(frozen=True, slots=True)
class ReviewWritten:
    """What one review wrote, in one transaction: a feedback row (thumbs, correction) and/or a verdict."""

    feedback_id: int | None
    verdict: ReviewVerdict | None
    replaces: int | None = None
    """The id of the verdict that was in force before this one, if any (it is kept, no longer in force)."""


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


def claim_dict(claim: ClaimLog) -> dict[str, Any]:
    return {
        "text": claim.text,
        "verdict": claim.verdict,
        "score": claim.score,
        "chunk_id": claim.chunk_id,
        "route": claim.route,
        "decided_by": claim.decided_by,
    }


def record_from_row(row: Any) -> RequestRecord:
    return RequestRecord(
        id=row.id,
        scope=row.scope,
        created_at=aware(row.created_at),
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


def aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything here is stored in UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
