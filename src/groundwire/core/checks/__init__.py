"""The deterministic claim checks, one module each, run in the order of CLAIM_CHECKS (the order of a claim's
`checks` in its report). A new check is one module that defines CHECK and one line below; nothing registers
itself on import.

Before scoring, on the context alone: figures (with opening hours and record attributes). After scoring, with
the claim's best evidence sentence: negation (a signal), citations (a note), certainty and roles (verdicts).
What each finding does to the claim is its check's `effect` (base.CheckEffect).
"""

from __future__ import annotations

from groundwire.core.checks import certainty, citations, figures, negation, roles
from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput

CLAIM_CHECKS: tuple[ClaimCheck, ...] = (figures.CHECK, negation.CHECK, citations.CHECK, certainty.CHECK, roles.CHECK)

__all__ = ["CLAIM_CHECKS", "CheckEffect", "ClaimCheck", "ClaimCheckInput"]
