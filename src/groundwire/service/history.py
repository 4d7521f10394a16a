"""The read side: logged requests, the review queue and the eval-loop dashboard, always of one scope."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from groundwire.calibration.adapt import Targets
from groundwire.calibration.refit import labels_section
from groundwire.core import cancel
from groundwire.core.cancel import CancelToken, cancellable
from groundwire.data.store import ERROR_KIND
from groundwire.evaluation.evalloop import EvidenceBudget, render_html, run_eval_loop
from groundwire.evaluation.labels import LabelsSection
from groundwire.evaluation.review_order import QueueOrder, Reason, order_queue
from groundwire.foundation.errors import ErrorCode
from groundwire.service import models, review
from groundwire.service.runtime import Runtime
from groundwire.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.verifier import Verifier
    from groundwire.data.store import RequestRecord, ReviewVerdict
    from groundwire.evaluation.evalloop import EvalLoopResult
    from groundwire.service.settings import ServiceSettings


def list_requests(runtime: Runtime, *, scope: str, limit: int) -> list[dict[str, Any]]:
    return [summary for summary, _ in _listed(runtime, scope=scope, limit=limit)]


def _listed(runtime: Runtime, *, scope: str, limit: int) -> list[tuple[dict[str, Any], RequestRecord]]:
    """The newest requests summarised, with their feedback counts and the verdict in force, beside their records."""
    records = runtime.store.requests(scope=scope, limit=limit)
    ids = [r.id for r in records if r.id]
    feedback = runtime.store.feedback_summary(ids, scope=scope)
    verdicts = runtime.store.latest_verdicts(ids, scope=scope)
    out = []
    for record in records:
        given = feedback.get(record.id or "")
        verdict = verdicts.get(record.id or "")
        out.append(({**_summary(runtime, record), "feedback": None if given is None else {
            "up": given.up, "down": given.down, "corrections": given.corrections},
            "verdict": None if verdict is None else verdict_out(verdict).model_dump()}, record))
    return out


def verdict_out(verdict: ReviewVerdict) -> models.VerdictOut:
    return models.VerdictOut(id=str(verdict.id), faithful=verdict.faithful,
                             unfaithful_claims=[models.MarkedClaimOut(index=c.index, text=c.text)
                                                for c in verdict.unfaithful_claims],
                             created_at=verdict.created_at.isoformat())


def get_request(runtime: Runtime, request_id: str, *, scope: str) -> dict[str, Any] | None:
    """One logged request with every logged field, or None (also for another scope's id)."""
    record = runtime.store.get_request(request_id, scope=scope)
    if record is None:
        return None
    feedback = runtime.store.feedback(request_id, scope=scope)
    verdicts = [verdict_out(v).model_dump() for v in runtime.store.verdicts(request_id, scope=scope)]
    return {
        **_summary(runtime, record),
        "context": record.context,
        "retrieved": [{"cite_id": r.cite_id, "score": r.score} for r in record.retrieved],
        "claims": [{"text": c.text, "verdict": c.verdict, "score": c.score, "chunk_id": c.chunk_id, "route": c.route,
                    "decided_by": c.decided_by} for c in record.claims],
        "escalations": record.escalations,
        "refused": record.refused,
        "latency_ms": record.latency_ms,
        "model_ids": record.model_ids,
        "release": record.release,
        "response_text": record.response,
        "response": _response_body(record),
        # A check that failed after its answer was accepted: the chunks it was to be checked against (failures.py).
        "chunks": record.extra.get("chunks") if record.kind == ERROR_KIND else None,
        "feedback": [{"id": f.id, "thumbs": f.thumbs, "correction": f.correction,
                      "created_at": f.created_at.isoformat()} for f in feedback],
        "verdict": verdicts[-1] if verdicts else None,
        "verdicts": verdicts,
    }


def review_queue(runtime: Runtime, *, scope: str, limit: int, order: QueueOrder | None = None) -> models.ReviewQueue:
    """The scope's review queue: of its newest `review_window` requests without feedback or a verdict (feedback or a
    verdict from a person takes a request out), those with a reason to be reviewed (service/review.py), in `order`
    (the service's `review_order` by default; evaluation/review_order.py), the first `limit` of them. Each item says
    why it is queued (`reason`, `reasons`) and what the teach order ranked it by (`teach`), and lists its claims, by
    the index a verdict marks them with, each with the evidence sentence it was checked against."""
    settings = runtime.settings
    order = settings.review_order if order is None else order
    records = {record.id or "": record
               for record in runtime.store.unreviewed_requests(scope=scope, limit=settings.review_window)}
    flags = {request_id: _flags(runtime, record) for request_id, record in records.items()}
    candidates = [review.candidate(record, [code for code, _ in flags[request_id]])
                  for request_id, record in records.items()]
    ordered = order_queue(candidates, labelled=review.labelled(runtime.store.reviewed_keys(scope=scope)),
                          order=order, audit_share=settings.review_audit_share)
    items = []
    for position, item in enumerate(ordered[:limit], start=1):
        record = records[item.candidate.id]
        items.append({**_summary(runtime, record), "feedback": None, "verdict": None,
                      "claims": _review_claims(record), "reason": item.reason, "reasons": list(item.reasons),
                      "position": position, "teach": item.teaching.to_dict()})
    return models.ReviewQueue(threshold=settings.review_threshold, patterns=list(settings.high_risk_patterns),
                              order=order, audit_share=settings.review_audit_share, total=len(ordered), items=items)


def _flags(runtime: Runtime, record: RequestRecord) -> list[tuple[Reason, str]]:
    answer = (record.report or {}).get("answer", record.response)
    settings = runtime.settings
    return review.flagged(score=record.answer_score, texts=(record.query, answer), threshold=settings.review_threshold,
                          patterns=settings.high_risk_patterns, findings=_findings(record), failure=_failure(record))


def _review_claims(record: RequestRecord) -> list[dict[str, Any]]:
    """The logged claims, each with what a reviewer judges it by: the evidence sentence it was checked against, and
    the spans of the claim (character offsets into its text) whose words or figures that evidence lacks."""
    reported = (record.report or {}).get("claims") or []
    out = []
    for index, claim in enumerate(record.claims):
        detail = reported[index] if index < len(reported) and isinstance(reported[index], dict) else {}
        out.append({"index": index, "text": claim.text, "verdict": claim.verdict, "score": claim.score,
                    "chunk_id": claim.chunk_id, "evidence": detail.get("evidence"),
                    "lacking": _lacking(detail, claim.text)})
    return out


def _lacking(detail: dict[str, Any], text: str) -> list[list[int]]:
    """The claim's unsupported spans (the report's, offsets into the answer) as offsets into the claim's text."""
    span = (detail.get("claim") or {}).get("span")
    if not (isinstance(span, list) and len(span) == 2):
        return []
    start = int(span[0])
    out = []
    for pair in detail.get("unsupported_spans") or ():
        lo, hi = int(pair[0]) - start, int(pair[1]) - start
        if 0 <= lo < hi <= len(text):
            out.append([lo, hi])
    return out


def _response_body(record: RequestRecord) -> dict[str, Any] | None:
    """The response as it was sent: the logged body with its report, which the row stores once (in `report`)."""
    body = record.extra.get("body")
    if body is None:
        return None
    return body if "report" in body else {**body, "report": record.report}


def _summary(runtime: Runtime, record: RequestRecord) -> dict[str, Any]:
    answer = (record.report or {}).get("answer", record.response)
    # A failed request's HTTP route is `http_route`: `route` is the routing, as on every surface (issue 57).
    failed = ({"status": record.extra.get("status"), "http_route": record.extra.get("route"),
               "error": record.extra.get("error")} if record.kind == ERROR_KIND else {})
    failure = _failure(record)
    return {
        **failed,
        "request_id": record.id,
        "created_at": record.created_at.isoformat() if record.created_at else None,
        "endpoint": record.kind,
        "question": record.query,
        "answer": answer,
        "score": record.answer_score,
        "route": record.route,
        "decision": record.route,  # deprecated: `route` (issue 57); kept for one release, gone in 0.3
        # Recomputed with today's rule, so a changed threshold or pattern applies to the whole log.
        "review": runtime.review(record.id or "", record.query, answer, score=record.answer_score,
                                 route=_route(record), failure=failure, findings=_findings(record)).model_dump(),
    }


def _failure(record: RequestRecord) -> str | None:
    """A check that failed after its answer was accepted is logged with it (failures.py): a person labels it."""
    if record.kind != ERROR_KIND:
        return None
    answer = (record.report or {}).get("answer", record.response)
    error, status = record.extra.get("error"), record.extra.get("status")
    return f"{error.get('code')} ({status})" if answer and isinstance(error, dict) else None


def _route(record: RequestRecord) -> str | None:
    """The answer's route; none for a failed request (one that failed after its answer was accepted is queued as a
    failure, not audited as an accepted answer)."""
    return None if record.kind == ERROR_KIND else record.route


def _findings(record: RequestRecord) -> list[str]:
    return [f["check"] for f in (record.report or {}).get("findings", ())]


# --- the eval loop ----------------------------------------------------------------------------------------


def eval_loop(runtime: Runtime, *, scope: str, sample_size: int, save: bool) -> EvalLoopResult:
    """The eval loop over a rolling sample of this scope's log (and this scope's corpus only).

    Cached per release and scope until the scope's log changes; a recorded run (save) always runs, and its
    result is then what later reads get. Its work is bounded (evalloop.EvidenceBudget): the corpus failures are
    looked up in within eval_max_corpus_chars, each evidence check within max_pairs and max_claims, all of them within
    eval_max_pairs; meta["evidence"] counts the failures left unchecked (undetermined) and says why."""
    settings = runtime.settings
    in_force = runtime.verifier_for(scope)  # the scope's profile, where it has one: a claim is SUPPORTED as it routes

    def run() -> EvalLoopResult:
        budget = EvidenceBudget(total=settings.eval_max_pairs, per_check=settings.max_pairs,
                                max_claims=settings.max_claims, corpus_chars=settings.eval_max_corpus_chars)
        with _within_reserve(settings):
            return run_eval_loop(verifier=in_force, store=runtime.store, scope=scope, sample_size=sample_size,
                                 release=settings.release, save=save, budget=budget)

    if save:
        result = run()
        runtime.eval_cache.put(_eval_key(runtime, in_force, scope, sample_size), result)
    else:
        result = runtime.eval_cache.get_or_compute(_eval_key(runtime, in_force, scope, sample_size), run)
    with _within_reserve(settings):
        return replace(result, labels=eval_labels(runtime, scope=scope).to_dict())


def eval_labels(runtime: Runtime, *, scope: str) -> LabelsSection:
    """The scope's reviewers' labels and what `groundwire adapt --from-log` would fit on them, against the routing in
    force for this scope (its profile's, where it has one). It checks every reviewed answer, so it is kept apart
    from the eval loop's result, until a verdict is added or the routing in force changes (a new request does not
    change it); a refit cut short by the time budget is not kept. The log is named DB in the command shown, so
    that no URL (nor a password in it) reaches the page."""
    in_force, settings = runtime.verifier_for(scope), runtime.settings
    targets = Targets(settings.refit_target_far, settings.refit_target_frr, settings.refit_confidence)
    key = (settings.check.model_dump_json(), *_routing(in_force), __version__, scope,
           runtime.store.verdicts_version(scope=scope), runtime.store.judge_labels_version(scope=scope))
    return runtime.labels_cache.get_or_compute(
        key, lambda: labels_section(runtime.store, scope=scope, in_force=in_force, settings=settings.check,
                                    db="DB", targets=targets),
        keep=lambda section: (section.refit.refusal or {}).get("code") != ErrorCode.TIME_BUDGET_EXCEEDED.value)


def _within_reserve(settings: ServiceSettings) -> AbstractContextManager[CancelToken]:
    """The eval loop's work (the evidence checks, the labels' refit) stops a reserve before the request's deadline,
    so that the rest (the summary, the report's HTML) is done and answered within the time budget; a caller that has
    gone stops it all."""
    token = cancel.current()
    return cancellable(token.within(eval_reserve_s(settings)) if token is not None else CancelToken())


def eval_reserve_s(settings: ServiceSettings) -> float:
    """What the eval routes keep of their time budget for the work after the evidence checks: a tenth, at least
    1 s, at most half. They are begun only with this much left (workers.WorkerPool.run_with_reserve)."""
    return min(settings.time_budget_s / 2, max(1.0, settings.time_budget_s / 10))


def _eval_key(runtime: Runtime, verifier: Verifier, scope: str, sample_size: int) -> tuple[object, ...]:
    """What a kept eval-loop result depends on: the release, the routing in force for the scope (a refitted profile
    is another verifier), the sample and the scope's log."""
    release = (runtime.settings.release, verifier.model_id, *_routing(verifier), verifier.router, __version__)
    return (*release, scope, sample_size, runtime.store.log_version(scope=scope))


def _routing(verifier: Verifier) -> tuple[object, ...]:
    """The routing a kept result was computed with: the verifier itself (a profile reloaded is another one) and its
    thresholds."""
    return (id(verifier), verifier.accept_at, verifier.reject_at, tuple(sorted(verifier.task_thresholds.items())))


def eval_summary(runtime: Runtime, *, scope: str, limit: int, save: bool = False) -> models.EvalSummary:
    """What the dashboard shows: metric cards, per release and segment, the score series, failures, history."""
    result = eval_loop(runtime, scope=scope, sample_size=limit, save=save)
    rolling = result.rolling or {}
    recent = runtime.store.requests(scope=scope, limit=min(limit, 200))
    return models.EvalSummary(
        metrics=_flat(rolling.get("overall") or {}),
        releases=[{"release": name, **_flat(values)} for name, values in rolling.get("by_release", {}).items()],
        segments=[{"segment": name, **_flat(values)} for name, values in rolling.get("by_segment", {}).items()],
        by_day=rolling.get("by_day", {}),
        series=[models.ScorePoint(created_at=r.created_at.isoformat() if r.created_at else None, score=r.answer_score)
                for r in reversed(recent) if r.answer_score is not None],
        failure_examples=rolling.get("failure_examples", []),
        history=result.history,
        meta=result.meta,
        labels=result.labels,
    )


def eval_report(runtime: Runtime, *, scope: str, limit: int) -> str:
    """The eval loop's self-contained HTML report (nothing is recorded)."""
    return render_html(eval_loop(runtime, scope=scope, sample_size=limit, save=False))


def _flat(values: dict[str, Any]) -> dict[str, Any]:
    """One level: the failure partition's counts become failures_<kind> next to the rates."""
    failures = values.get("failures") or {}
    return {**{k: v for k, v in values.items() if k != "failures"},
            **{f"failures_{name}": count for name, count in failures.items()}}
