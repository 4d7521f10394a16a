"""The one place a check is assembled: settings -> Verifier, and item -> Report (verify, then the optional judge).

Every surface builds its verifier here (the commands check, eval, batch, serve, repair, generate and eval-loop,
and the service), so a [verify] setting in groundwire.toml means the same thing everywhere:

    from groundwire.pipeline import CheckItem, CheckSettings, build_verifier, check
    verifier = build_verifier(CheckSettings(scorer="lexical", require_citations=True))
    report = check(verifier, CheckItem(answer, chunks, question=question))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundwire.config import CheckSettings
from groundwire.core.claims import Decomposer
from groundwire.core.errors import InputError
from groundwire.core.pruning import get_pruner
from groundwire.core.types import Chunk, Report
from groundwire.core.verifier import Plan, Verifier

if TYPE_CHECKING:
    from groundwire.llm.client import LLMClient

__all__ = ["CheckItem", "CheckSettings", "Judge", "build_verifier", "check"]


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One answer to check against its chunks."""

    answer: str
    chunks: Sequence[Chunk]
    question: str | None = None
    task: str | None = None
    """Selects the calibration ("qa", "summary", "data2text", ...); None: pooled (data2text for a JSON record)."""
    require_citations: bool = False
    """Asked for by this request, on top of the verifier's own setting."""


@dataclass(frozen=True, slots=True)
class Judge:
    """The LLM judge for the claims in the escalation band."""

    client: LLMClient
    required: bool = False
    """True: an endpoint failure raises LLMError (the CLI's --judge); False: the claim stays escalated."""


def build_verifier(settings: CheckSettings, *, client: LLMClient | None = None) -> Verifier:
    """The Verifier these settings describe. `client` is the [llm] endpoint; decomposer = "llm" needs it."""
    decomposer: Decomposer | None = None
    if settings.decomposer == "llm":
        if client is None:
            raise InputError('[verify] decomposer = "llm" needs an LLM: configure [llm] in groundwire.toml')
        # Lazy, as is the judge below: the LLM tier (httpx) loads only for a check that uses it.
        from groundwire.llm.decompose import LLMDecomposer

        decomposer = LLMDecomposer(client)
    try:
        return Verifier(
            settings.scorer,
            accept_at=settings.accept_at,
            reject_at=settings.reject_at,
            decomposer=decomposer,
            pruner=get_pruner(settings.pruner),
            require_citations=settings.require_citations,
            canonical_figures=settings.canonical_figures,
        )
    except ValueError as error:  # an unknown scorer or pruner, thresholds out of order: the user's input
        raise InputError(str(error)) from None


def check(verifier: Verifier, item: CheckItem, *, judge: Judge | None = None, plan: Plan | None = None) -> Report:
    """Verify one item; with a `judge`, the LLM judge then decides the claims in the escalation band.

    `plan`: the item's plan, made by `verifier.plan` for a caller that read its workload first (the service's
    limits), so the answer is split once; None: planned here."""
    if plan is None:
        plan = verifier.plan(item.answer, item.chunks, question=item.question)
    elif (plan.answer, plan.question) != (item.answer, item.question):
        raise ValueError("the plan is for another answer or question than the item")
    report = verifier.run(plan, task=item.task, require_citations=item.require_citations or None)
    if judge is None:
        return report
    from groundwire.llm.judge import adjudicate

    return adjudicate(report, list(item.chunks), client=judge.client, required=judge.required)
