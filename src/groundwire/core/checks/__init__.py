"""The deterministic claim checks, one module each, run in the order of CLAIM_CHECKS (the order of a claim's
`checks` in its report). A new check is one module that defines CHECK and one line below; nothing registers
itself on import.

Before scoring, on the context alone: figures (with opening hours and record attributes) and moved figures (a
signal: the claim's figure is in the context, but not in the sentence the claim restates). After scoring, with
the claim's best evidence sentence: negation (a signal), opposites (a signal), citations (a note), certainty and
roles (verdicts), entities (a signal; spaCy's names and roles, with the [entities] extra).
What each finding does to the claim is its check's `effect` (base.CheckEffect).
"""

from __future__ import annotations

from groundwire.core.checks import certainty, citations, entities, figures, moved_figures, negation, opposites, roles
from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.foundation.extras import require_extra

CLAIM_CHECKS: tuple[ClaimCheck, ...] = (
    figures.CHECK,
    moved_figures.CHECK,
    negation.CHECK,
    opposites.CHECK,
    citations.CHECK,
    certainty.CHECK,
    roles.CHECK,
    entities.CHECK,
)


def validate_opt_ins(names: frozenset[str]) -> None:
    """Opt-in checks (`ClaimCheck.opt_in`) are named exactly, and one that needs an extra has it installed (else it
    would silently find nothing)."""
    known = {check.name for check in CLAIM_CHECKS if check.opt_in}
    if unknown := names - known:
        raise ValueError(f"unknown opt-in check(s) {sorted(unknown)}; the opt-in checks are {sorted(known)}")
    if "entities" in names:  # else it would silently find nothing
        require_extra("entities", "spacy", entities.MODEL, needed_by='the "entities" check')


__all__ = ["CLAIM_CHECKS", "CheckEffect", "ClaimCheck", "ClaimCheckInput", "validate_opt_ins"]
