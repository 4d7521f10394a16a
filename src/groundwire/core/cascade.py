"""A cascade's stages (`Verifier.escalate_to`, issue 19): every stage planned ahead for a caller that holds the check
to limits before anything is scored (the service), and the next stage run on an answer a stage escalates."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from groundwire.core.plan import Plan
from groundwire.foundation.types import CascadeStage, Chunk, Claim, Report

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier


def plan_cascade(
    verifier: Verifier,
    answer: str,
    chunks: Sequence[Chunk | str],
    *,
    question: str | None = None,
    max_claims: int | None = None,
    claims: Sequence[Claim] | None = None,
    admit: Callable[[Plan], None] | None = None,
) -> Plan:
    """`verifier.plan`, and every later stage of its cascade planned ahead for the same claims and chunks
    (`Plan.later`), so that `Verifier.run` runs each stage's plan rather than planning it when the answer reaches it.
    `admit` is called with each stage's plan as it is made, first stage first: a caller that holds a check to limits
    (the service) raises there, before a later stage is planned and before anything is scored. A plan that cannot
    run (`complete` False) is returned as it is, with no later stage planned."""
    first = verifier.plan(answer, chunks, question=question, max_claims=max_claims, claims=claims)
    if admit is not None:
        admit(first)
    if not first.complete:
        return first
    laters: list[Plan] = []
    stage, previous = verifier.escalate_to, first
    while stage is not None:
        previous = stage.plan_after(previous)
        if admit is not None:
            admit(previous)
        laters.append(previous)
        stage = stage.escalate_to
    chain: Plan | None = None
    for later in reversed(laters):
        chain = replace(later, later=chain)
    return first if chain is None else replace(first, later=chain)


def run_later(
    following: Verifier, report: Report, plan: Plan, *, require_citations: bool | None, task: str | None
) -> Report:
    """The answer an earlier stage escalated (`report`, of `plan`), checked again by the `following` stage (with the
    plan made ahead, `Plan.later`, else planned now); its report is the answer's, listing every stage."""
    later = following.run(plan.later or following.plan_after(plan), require_citations=require_citations, task=task)
    stages = (_stage(report), *(later.meta.cascade or (_stage(later, following.calibrated_after),)))
    total = report.timings.get("total", 0.0) + later.timings.get("total", 0.0)
    return replace(later, meta=replace(later.meta, cascade=stages), timings={**later.timings, "total": total})


def _stage(report: Report, calibrated_after: str | None = None) -> CascadeStage:
    """A cascade stage as the report lists it: which model, its answer score, its route and how long it took;
    for a later stage, the stage its thresholds were calibrated after (None: its own, stand-alone ones)."""
    return CascadeStage(report.model_id, report.score, report.route, report.timings.get("total", 0.0), calibrated_after)
