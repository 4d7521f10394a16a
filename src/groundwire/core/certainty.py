"""Certainty added: the context hedges a statement and the claim states it as certain.

"Early results suggest the drug may lower blood pressure in some patients" does not support "The drug cures
high blood pressure in all patients": the words mostly match, and a cross-encoder reads the overlap as
support. The check reads the claim's best evidence sentence. It fires when that sentence hedges (may,
might, suggest, suspect, some, ...), the claim hedges nothing, and the claim states a certainty or a scope
the sentence does not (definitely, proven, always, all, every, cures, ...).
"""

from __future__ import annotations

import re

from groundwire.core.checks import CheckEffect, ClaimCheck, ClaimCheckInput, register_claim_check
from groundwire.core.types import Finding, Verdict

_HEDGE_RE = re.compile(
    r"\b(?:may|might|could|possibly|probably|perhaps|likely|unlikely|suggests?|suggested|suspects?|suspected"
    r"|believes?|believed|thought\s+to|appears?\s+to|seems?\s+to|some|preliminary|tentative(?:ly)?"
    r"|reportedly|allegedly|expected\s+to|estimated)\b",
    re.IGNORECASE,
)
_CERTAIN_RE = re.compile(
    r"\b(?:definitely|certainly|undoubtedly|conclusively|proven|proved|proves|prove|guaranteed|guarantees"
    r"|always|all|every|cures?|cured|confirmed|will\s+definitely)\b",
    re.IGNORECASE,
)


def certainty_findings(claim: str, evidence: str | None) -> list[Finding]:
    """One finding when the evidence hedges, the claim does not, and the claim adds a certainty word."""
    if evidence is None or _HEDGE_RE.search(claim):
        return []
    hedge = _HEDGE_RE.search(evidence)
    if hedge is None:
        return []
    stated = {w.lower() for w in re.findall(r"[\w']+", evidence)}
    added = [m.group(0) for m in _CERTAIN_RE.finditer(claim) if m.group(0).split()[-1].lower() not in stated]
    if not added:
        return []
    return [
        Finding(
            "certainty_added",
            f"the context hedges ({hedge.group(0)!r}); the claim states it as certain ({added[0]!r})",
            Verdict.NOT_FOUND,
        )
    ]


def _certainty_check(item: ClaimCheckInput) -> list[Finding]:
    return certainty_findings(item.claim.text, item.evidence)


register_claim_check(ClaimCheck("certainty", _certainty_check, CheckEffect.VERDICT, needs_evidence=True))
