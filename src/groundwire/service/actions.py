"""The write-side endpoints: verify, repair, ingest, feedback."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Sequence

from groundwire.core.memo import shared_work
from groundwire.data.provenance import Document
from groundwire.foundation.errors import ErrorCode
from groundwire.foundation.types import Chunk, Report
from groundwire.llm.repair import Repaired
from groundwire.llm.repair import repair as repair_answer
from groundwire.pipeline import Checker, CheckItem, Judge, check
from groundwire.redact import redact_data
from groundwire.service import models
from groundwire.service.errors import ServiceError
from groundwire.service.history import verdict_out
from groundwire.service.limits import WorkBudget
from groundwire.service.runtime import Runtime, chunk_out


def verify(runtime: Runtime, body: models.VerifyRequest, *, scope: str) -> models.VerifyResponse:
    started = time.perf_counter()
    chunks, context = runtime.context(body, scope=scope)
    report = _verify(runtime, body, chunks, scope=scope)
    request_id = uuid.uuid4().hex
    response = models.VerifyResponse(
        request_id=request_id, report=report.to_dict(),
        review=runtime.review(request_id, body.question, body.answer, score=report.score, route=report.route,
                              findings=_finding_names(report)),
        chunks=[chunk_out(c) for c in chunks])
    runtime.log(report, response.model_dump(), kind="verify", scope=scope, context=context, body=body,
                chunks=chunks, started=started)
    return response


def repair(runtime: Runtime, body: models.RepairRequest, *, scope: str) -> models.RepairResponse:
    started = time.perf_counter()
    chunks, context = runtime.context(body, scope=scope)
    settings = runtime.config.repair
    with shared_work():  # the answer's check and repair's own share their context work (core.memo)
        report = _verify(runtime, body, chunks, scope=scope)
        # Without --llm the middle band is dropped rather than edited: repair still works offline.
        repaired = repair_answer(report, chunks, check=_repair_checker(runtime, scope=scope), client=runtime.llm,
                                 min_surviving_share=settings.min_surviving_share,
                                 abstain_message=settings.abstain_message)
    request_id = uuid.uuid4().hex
    response = models.RepairResponse(
        request_id=request_id, report=report.to_dict(),
        review=runtime.review(request_id, body.question, body.answer, score=report.score, route=report.route,
                              findings=_finding_names(report)),
        chunks=[chunk_out(c) for c in chunks],
        repaired={**repaired.to_dict(), "summary": _summary(repaired)})
    runtime.log(report, response.model_dump(), kind="repair", scope=scope, context=context, body=body,
                chunks=chunks, started=started, response=repaired.answer,
                extra={"repaired_score": repaired.report.score, "repair_abstained": repaired.abstained})
    return response


def ingest(runtime: Runtime, body: models.IngestRequest, *, scope: str) -> models.IngestResponse:
    # No key at rest: a configured API key in a document is stored redacted, as everywhere else.
    documents = redact_data([Document(doc_id=d.doc_id, title=d.title, text=d.text, page=d.page, type=d.type)
                             for d in body.documents])
    result = runtime.store.ingest(documents, scope=scope)
    changed = result.changed_doc_ids
    invalidated = runtime.cache.invalidate(scope=scope, doc_ids=changed) if changed else 0
    return models.IngestResponse(
        doc_set_version=str(result.doc_version),
        chunks=[models.IngestedChunk(id=p.cite_id, doc_id=p.doc_id, title=p.title, page=p.page, type=p.type,
                                     text=p.text) for p in result.passages],
        changed_doc_ids=list(changed),
        retired_ids=list(result.retired_ids),
        cache_invalidated=invalidated,
    )


def feedback(runtime: Runtime, body: models.FeedbackRequest, *, scope: str) -> models.FeedbackResponse:
    """Thumbs and a correction, and/or a reviewer's verdict, recorded together (one transaction)."""
    if runtime.store.get_request(body.request_id, scope=scope) is None:
        raise ServiceError(ErrorCode.REQUEST_NOT_FOUND, f"No request {body.request_id!r} in your scope.")
    thumbs = {"up": 1, "down": -1, None: None}[body.thumbs]
    written = runtime.store.add_review(body.request_id, scope=scope, thumbs=thumbs,
                                       correction=redact_data(body.correction), faithful=body.faithful,
                                       unfaithful_claims=body.unfaithful_claims or ())
    if written.verdict is not None:  # counted toward the scope's next refit (serve --learn), run in the background
        runtime.verdict_added(scope)
    return models.FeedbackResponse(
        feedback_id=None if written.feedback_id is None else str(written.feedback_id), request_id=body.request_id,
        verdict=None if written.verdict is None else verdict_out(written.verdict),
        replaces=None if written.replaces is None else str(written.replaces))


def _verify(runtime: Runtime, body: models.VerifyRequest, chunks: Sequence[Chunk], *, scope: str) -> Report:
    """Verify (routed by the scope's profile, where it has one); with judge=true, the LLM judge then decides the
    claims in the escalation band."""
    client = runtime.judge_client() if body.judge else None
    plan = runtime.plan(body.answer, chunks, question=body.question)  # the limits read it before anything is scored
    item = CheckItem(body.answer, chunks, question=body.question, task=body.task,
                     require_citations=body.require_citations)
    return check(runtime.verifier_for(scope), item, judge=None if client is None else Judge(client), plan=plan)


REPAIR_PAIRS = 2
"""repair's own checks together may score REPAIR_PAIRS x max_pairs (claim, window) pairs: room for every claim of the
largest accepted answer split in two, each part checked against the whole context."""


def _repair_checker(runtime: Runtime, *, scope: str) -> Checker:
    """The checks repair makes of its own (each part of a claim it splits at its coordination, an LLM's edit, the
    repaired answer), each planned and held to the limits as a request's check is (`Runtime.plan`), and together to
    REPAIR_PAIRS x max_pairs pairs: past that, 413 `too_much_work` before the next is scored. Unbounded, one claim of
    31 coordinated verb phrases against a 200k context was checked 32 times: 35 s, where its verify took 1 s."""
    allowed = REPAIR_PAIRS * runtime.settings.max_pairs
    budget = WorkBudget(allowed=allowed, limit=f"{REPAIR_PAIRS} x max_pairs = {allowed}",
                        why="Repairing this answer (each part of a claim it splits, and each edit, is checked against "
                            "the whole context)")
    return Checker(runtime.verifier_for(scope), planner=functools.partial(runtime.plan, budget=budget))


def _finding_names(report: Report) -> list[str]:
    return [finding.check for finding in report.findings]


def _summary(repaired: Repaired) -> str:
    counts: dict[str, int] = {}
    for action in repaired.actions:
        counts[action.action] = counts.get(action.action, 0) + 1
    parts = [f"{n} {name}" for name, n in sorted(counts.items())]
    head = "abstained" if repaired.abstained else f"re-verified score {repaired.report.score:.2f}"
    return f"{head}; claims: {', '.join(parts) or 'none'}"
