"""Certainty added: the context hedges a statement and the claim restates it as certain.

"Early results suggest the drug may lower blood pressure in some patients" does not support "The drug cures
high blood pressure in all patients": the words mostly match, and a cross-encoder reads the overlap as
support. The check reads the claim's best evidence sentence and fires when the claim restates it (half its
content words, the hedges and certainties aside, are in the sentence), hedges nothing itself, and either
- states as certain what the sentence only suggests (definitely, proven, cures against may, suggests), or
- widens its scope (all, every, always against some, many, often).
Idioms that only look like a scope ("not always", "all the way", "all the more") are no such widening.
"""

from __future__ import annotations

import re

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.foundation.textutil import content_words, word_share
from groundwire.foundation.types import Finding, Verdict

_MODAL_HEDGE = (
    r"may|might|could|possibly|probably|perhaps|likely|suggests?|suggested|suspects?|suspected|believes?|believed"
    r"|thought\s+to|appears?\s+to|seems?\s+to|preliminary|tentative(?:ly)?|reportedly|allegedly|expected\s+to"
)
_SCOPE_HEDGE = r"some|many|most|several|often|sometimes|usually|certain\s+(?:patients|people|cases)"
_HEDGE_RE = re.compile(rf"\b(?:{_MODAL_HEDGE}|{_SCOPE_HEDGE})\b", re.IGNORECASE)
MODAL_HEDGE_RE = re.compile(rf"\b(?:{_MODAL_HEDGE})\b", re.IGNORECASE)
_SCOPE_HEDGE_RE = re.compile(rf"\b(?:{_SCOPE_HEDGE})\b", re.IGNORECASE)
_CERTAIN_RE = re.compile(
    r"\b(?:definitely|certainly|undoubtedly|conclusively|proven|proved|proves|guaranteed|guarantees|cures?|cured)\b",
    re.IGNORECASE,
)
_WIDE_RE = re.compile(
    r"(?<!\bnot\s)(?<!\bnot\s\s)\b(?:all|every|always)\b(?!\s+(?:the\s+(?:more|way|same|better|worse)|of\s+a\s+sudden))",
    re.IGNORECASE,
)
_MARKERS_RE = re.compile(rf"{_HEDGE_RE.pattern}|{_CERTAIN_RE.pattern}|{_WIDE_RE.pattern}", re.IGNORECASE)
_RESTATED = 0.5
"""The claim restates the sentence when this share of its content words, markers aside, occur there."""


def certainty_findings(claim: str, evidence: str | None) -> list[Finding]:
    """One finding when the claim restates a hedged evidence sentence as certain or wider."""
    if evidence is None or _HEDGE_RE.search(claim):
        return []
    words = set(content_words(_MARKERS_RE.sub(" ", claim)))
    if word_share(words, set(content_words(evidence))) < _RESTATED:
        return []
    stated = {w.lower() for w in re.findall(r"[\w']+", evidence)}
    pairs = ((_CERTAIN_RE, MODAL_HEDGE_RE), (_WIDE_RE, _SCOPE_HEDGE_RE))
    for certain_re, hedge_re in pairs:
        added = [m.group(0) for m in certain_re.finditer(claim) if m.group(0).lower() not in stated]
        if added and (hedge := hedge_re.search(evidence)) is not None:
            detail = f"the context hedges ({hedge.group(0)!r}); the claim states it as certain ({added[0]!r})"
            return [Finding("certainty_added", detail, Verdict.NOT_FOUND)]
    return []


def _certainty_check(item: ClaimCheckInput) -> list[Finding]:
    return certainty_findings(item.claim.text, item.evidence)


CHECK = ClaimCheck("certainty", _certainty_check, CheckEffect.VERDICT, needs_evidence=True)
