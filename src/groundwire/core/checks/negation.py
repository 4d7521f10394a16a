"""The negation check: a signal, not a verdict. The claim restates its best evidence sentence with the negation
flipped, clause by clause ("not X but Y" and "can't wait" are no flips); the score is capped mid-band."""

from __future__ import annotations

import re

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.textutil import content_words, has_negation, stem, word_share
from groundwire.core.types import Finding

_NEGATION_OVERLAP = 0.6
"""Only a near-restatement counts: most of the claim's content words must be in the evidence sentence."""
_NEGATED_CLAUSE_OVERLAP = 0.5
"""A negated clause is about the other text when half its content words occur there, and is matched by a
negated clause of the other text that holds half of them."""
_CLAUSE_BREAK_RE = re.compile(
    r"[,;()\u2014\u2013]|\s-\s|\b(?:but|while|whereas|although|though|which|who|whom)\b"
    r"|\band\s+(?=(?:the|a|an|it|its|they|their|he|his|she|her|we|this|these|those|there)\b)",
    re.IGNORECASE,
)
# Phrases with a negation word that negate nothing in the sentence ("can't wait for", "whether or not").
_NEGATION_IDIOM_RE = re.compile(
    r"\b(?:can(?:no|')t\s+wait|or\s+not|not\s+only|not\s+just|no\s+doubt|no\s+matter|not\s+to\s+mention)\b",
    re.IGNORECASE,
)
# "not with the launch but with the way": the "not" clause is the contrast, not a claim about the launch.
_CONTRASTIVE_NOT_RE = re.compile(r"^\s*(?:(?:and|yet|but)\s+)?not\b", re.IGNORECASE)
# "to prevent birds from becoming used to it" says what "so birds do not become used to it" says.
_IMPLICIT_NEGATION = frozenset(
    {"prevent", "prevents", "prevented", "preventing", "avoid", "avoids", "avoided", "avoiding"}
)

# Complementary words: "not open" says what "closed" says, so a negated clause whose word's complement stands in
# the other text is matched by it ("The library is not open on Sundays" / "The library is closed on Sundays").
_COMPLEMENTS = (
    ("open", "opened"),
    ("closed", "shut"),
    ("allowed", "permitted", "allow", "permit"),
    ("banned", "forbidden", "prohibited", "ban", "forbid", "prohibit"),
    ("available",),
    ("unavailable",),
    ("possible",),
    ("impossible",),
    ("legal",),
    ("illegal",),
    ("able",),
    ("unable",),
    ("present",),
    ("absent",),
    ("alive",),
    ("dead",),
    ("true",),
    ("false",),
    ("included", "include"),
    ("excluded", "exclude"),
    ("required", "mandatory", "compulsory"),
    ("optional", "voluntary"),
    ("charge", "charges", "fee", "fees", "paid"),
    ("free",),
    ("known",),
    ("unknown",),
    ("complete", "completed"),
    ("incomplete", "unfinished"),
    ("pass", "passed"),
    ("fail", "failed"),
)
_COMPLEMENT_OF: dict[str, frozenset[str]] = {
    stem(word): frozenset(stem(w) for w in _COMPLEMENTS[i ^ 1])
    for i, group in enumerate(_COMPLEMENTS)
    for word in group
}


def negation_finding(claim: str, evidence: str | None) -> Finding | None:
    """A signal, not a verdict: the claim restates its best evidence sentence with the negation flipped.

    Negations are compared clause by clause: a negated clause counts when it is about the other text and
    that text has no negated clause to match it. So in "It was not known who was aboard the aircraft,
    which the NTSB said was a Cessna", the "not" says nothing about "The aircraft was a Cessna", and
    "described the video but did not post it" matches itself however the claim words are spread.
    """
    if evidence is None:
        return None
    claim_words, evidence_words = set(content_words(claim)), set(content_words(evidence))
    if word_share(claim_words, evidence_words) < _NEGATION_OVERLAP:
        return None
    claim_negated, evidence_negated = _negated_clauses(claim), _negated_clauses(evidence)
    if _unmatched_negation(claim_negated, evidence_words, evidence_negated):
        return Finding("negation_mismatch", "only the claim is negated", None)
    if _unmatched_negation(evidence_negated, claim_words, claim_negated):
        return Finding("negation_mismatch", "only the evidence is negated", None)
    return None


def _negated_clauses(text: str) -> list[set[str]]:
    text = _NEGATION_IDIOM_RE.sub(" ", text)
    clauses: list[set[str]] = []
    start = 0
    for match in [*_CLAUSE_BREAK_RE.finditer(text), None]:
        clause = text[start : match.start() if match else len(text)]
        contrast = match is not None and match.group(0).lower() == "but" and _CONTRASTIVE_NOT_RE.match(clause)
        negated = has_negation(clause) or not _IMPLICIT_NEGATION.isdisjoint(clause.lower().split())
        if negated and not contrast and (words := set(content_words(clause))):
            clauses.append(words)
        start = match.end() if match else len(text)
    return clauses


def _unmatched_negation(negated: list[set[str]], other_words: set[str], other_negated: list[set[str]]) -> bool:
    """Some negated clause is about the other text (`other_words`) and no negated clause there matches it
    (shares half the content words of the shorter of the two clauses)."""
    for words in negated:
        if word_share(words, other_words) < _NEGATED_CLAUSE_OVERLAP:
            continue
        if any(_COMPLEMENT_OF.get(word, frozenset()) & other_words for word in words):
            continue  # "not open" against "closed": the other text says it with the complement
        if not any(len(words & o) >= _NEGATED_CLAUSE_OVERLAP * min(len(words), len(o)) for o in other_negated):
            return True
    return False


def _negation_check(item: ClaimCheckInput) -> list[Finding]:
    finding = negation_finding(item.claim.text, item.evidence)
    return [] if finding is None else [finding]


CHECK = ClaimCheck("negation", _negation_check, CheckEffect.SIGNAL, needs_evidence=True)
