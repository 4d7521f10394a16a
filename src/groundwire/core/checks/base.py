"""What a claim check is: a function from one claim (and its context, and after scoring its best evidence
sentence) to findings, and the effect its findings have on the claim."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from groundwire.core.checks.context import ContextIndex
from groundwire.core.figures import Figure
from groundwire.foundation.types import Claim, Finding


class CheckEffect(StrEnum):
    VERDICT = "verdict"
    """A finding with a verdict decides the claim (CONTRADICTED over NOT_FOUND) and caps its score at reject_at."""
    SIGNAL = "signal"
    """Evidence against the claim, not proof: the score is capped mid-band, so it is never accepted outright."""
    NOTE = "note"
    """Recorded on the claim; the score is left alone."""


@dataclass(frozen=True, slots=True)
class ClaimCheckInput:
    claim: Claim
    context: ContextIndex
    chunk_ids: Sequence[str]
    evidence: str | None = None
    """The claim's best evidence sentence; None for checks that run before the pair matrix is scored."""
    figures: tuple[Figure, ...] = ()
    """The figures the claim states (`figures.claim_figures`), read once per claim by its state."""


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    name: str
    run: Callable[[ClaimCheckInput], Sequence[Finding]]
    effect: CheckEffect
    needs_evidence: bool = False
    """Run after scoring, with the evidence sentence (else before scoring, on the context alone)."""
    opt_in: bool = False
    """Runs only for a verifier that names it (`CheckSettings(entities=True)`, `[verify] entities`): a check that loads a
    heavy model (spaCy) must not load it for a user who installed its extra for something else."""
