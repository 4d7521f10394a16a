"""The write-side endpoints: verify, repair, ingest, feedback."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Sequence
from typing import Any

from groundwire.core.memo import shared_work
from groundwire.core.verifier import Verifier
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
from groundwire.service.runtime import Runtime


def verify(runtime: Runtime, body: models.VerifyRequest, sent: list[Chunk] | None, *, scope: str) -> dict[str, Any]:
    """The check, on the pipeline's path (the scope's verifier plans under the limits, then runs the plan), and the
    response body as plain JSON values: the report serialised once (`models.report_json`), the same dump logged."""
    started = time.perf_counter()
    chunks, context = runtime.context(body, sent, scope=scope)
    report = _verify(runtime, runtime.verifier_for(scope), body, chunks)
    out = _checked(runtime, body, report, chunks)
    runtime.log(report, out, kind="verify", scope=scope, context=context, body=body, chunks=chunks, started=started,
                dumped=out["report"])
    return out


def repair(runtime: Runtime, body: models.RepairRequest, sent: list[Chunk] | None, *, scope: str) -> dict[str, Any]:
    started = time.perf_counter()
    chunks, context = runtime.context(body, sent, scope=scope)
    verifier = runtime.verifier_for(scope)
    settings = runtime.config.repair
    with shared_work():  # the answer's check and repair's own share their context work (core.memo)
        report = _verify(runtime, verifier, body, chunks)
        # Without --llm the middle band is dropped rather than edited: repair still works offline.
        repaired = repair_answer(report, chunks, check=_repair_checker(runtime, verifier), client=runtime.llm,
                                 min_surviving_share=settings.min_surviving_share,
                                 abstain_message=settings.abstain_message)
    out = {**_checked(runtime, body, report, chunks),
           "repaired": {**repaired.to_dict(), "report": models.report_json(repaired.report),
                        "summary": _summary(repaired)}}
    runtime.log(report, out, kind="repair", scope=scope, context=context, body=body, chunks=chunks, started=started,
                response=repaired.answer, dumped=out["report"],
                extra={"repaired_score": repaired.report.score, "repair_abstained": repaired.abstained})
    return out


def _checked(runtime: Runtime, body: models.VerifyRequest, report: Report, chunks: Sequence[Chunk]) -> dict[str, Any]:
    """A verify response's body (`models.VerifyResponse`), as plain JSON values."""
    request_id = uuid.uuid4().hex
    review = runtime.review(request_id, body.question, body.answer, score=report.score, route=report.route,
                            findings=_finding_names(report))
    return {"request_id": request_id, "report": models.report_json(report), "review": review.model_dump(),
            "chunks": models.chunks_json(chunks)}


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


def _verify(runtime: Runtime, verifier: Verifier, body: models.VerifyRequest, chunks: Sequence[Chunk]) -> Report:
    """Verify with the scope's verifier (routed by its profile, where it has one), which plans and runs; with
    judge=true, the LLM judge then decides the claims in the escalation band."""
    client = runtime.judge_client() if body.judge else None
    # Every stage planned, and the limits read the plans, before anything is scored.
    plan = runtime.plan(verifier, body.answer, chunks, question=body.question)
    item = CheckItem(body.answer, chunks, question=body.question, task=body.task,
                     require_citations=body.require_citations)
    return check(verifier, item, judge=None if client is None else Judge(client), plan=plan)


REPAIR_PAIRS = 2
"""repair's own checks together may score REPAIR_PAIRS x max_pairs (claim, window) pairs: room for every claim of the
largest accepted answer split in two, each part checked against the whole context."""


def _repair_checker(runtime: Runtime, verifier: Verifier) -> Checker:
    """The checks repair makes of its own (each part of a claim it splits at its coordination, an LLM's edit, the
    repaired answer), each planned and held to the limits as a request's check is (`Runtime.plan`), and together to
    REPAIR_PAIRS x max_pairs pairs: past that, 413 `too_much_work` before the next is scored. Unbounded, one claim of
    31 coordinated verb phrases against a 200k context was checked 32 times: 35 s, where its verify took 1 s."""
    allowed = REPAIR_PAIRS * runtime.settings.max_pairs
    budget = WorkBudget(allowed=allowed, limit=f"{REPAIR_PAIRS} x max_pairs = {allowed}",
                        why="Repairing this answer (each part of a claim it splits, and each edit, is checked against "
                            "the whole context)")
    return Checker(verifier, planner=functools.partial(runtime.plan, verifier, budget=budget))


def _finding_names(report: Report) -> list[str]:
    return [finding.check for finding in report.findings]


def _summary(repaired: Repaired) -> str:
    counts: dict[str, int] = {}
    for action in repaired.actions:
        counts[action.action] = counts.get(action.action, 0) + 1
    parts = [f"{n} {name}" for name, n in sorted(counts.items())]
    head = "abstained" if repaired.abstained else f"re-verified score {repaired.report.score:.2f}"
    return f"{head}; claims: {', '.join(parts) or 'none'}"
