"""The negation check: a signal, not a verdict. The claim restates its best evidence sentence with the negation
flipped, clause by clause ("not X but Y" and "can't wait" are no flips); the score is capped mid-band."""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.checks.wording import content_sequence, in_place
from groundwire.core.lexicon import lexicon
from groundwire.foundation.textutil import STOPWORDS, has_negation, normalize, stem, word_share, words
from groundwire.foundation.types import Finding

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


def negation_finding(claim: str, evidence: str | None) -> Finding | None:
    """A signal, not a verdict: the claim restates its best evidence sentence with the negation flipped.

    Negations are compared clause by clause: a negated clause counts when it is about the other text and
    that text has no negated clause to match it. So in "It was not known who was aboard the aircraft,
    which the NTSB said was a Cessna", the "not" says nothing about "The aircraft was a Cessna", and
    "described the video but did not post it" matches itself however the claim words are spread.
    """
    if evidence is None:
        return None
    claim_words, evidence_words = _surface_words(claim), _surface_words(evidence)
    if word_share(_stems(claim_words), _stems(evidence_words)) < _NEGATION_OVERLAP:
        return None
    claim_negated, evidence_negated = _negated_words(claim), _negated_words(evidence)
    claim_place, evidence_place = _Place.of(claim, claim_words), _Place.of(evidence, evidence_words)
    if _unmatched_negation(claim_negated, evidence_place, evidence_negated, within=claim_place):
        return Finding("negation_mismatch", "only the claim is negated", None)
    if _unmatched_negation(evidence_negated, claim_place, claim_negated, within=evidence_place):
        return Finding("negation_mismatch", "only the evidence is negated", None)
    return None


def negated_clauses(text: str) -> list[str]:
    """The clauses of the text a negation governs ("not", "never", "n't", "prevent", "avoid"), as text; "not X
    but Y" and idioms such as "can't wait" or "whether or not" negate nothing."""
    text = _NEGATION_IDIOM_RE.sub(" ", text)
    clauses: list[str] = []
    start = 0
    for match in [*_CLAUSE_BREAK_RE.finditer(text), None]:
        clause = text[start : match.start() if match else len(text)]
        contrast = match is not None and match.group(0).lower() == "but" and _CONTRASTIVE_NOT_RE.match(clause)
        negated = has_negation(clause) or not _IMPLICIT_NEGATION.isdisjoint(clause.lower().split())
        if negated and not contrast:
            clauses.append(clause)
        start = match.end() if match else len(text)
    return clauses


def _surface_words(text: str) -> frozenset[str]:
    """Lower-cased content words as written (the lexicon reads words, not `content_words`' stems)."""
    return frozenset(w for w in words(text) if w not in STOPWORDS)


def _stems(surface: frozenset[str]) -> set[str]:
    return {stem(w) for w in surface}


def _negated_words(text: str) -> list[frozenset[str]]:
    return [clause_words for clause in negated_clauses(text) if (clause_words := _surface_words(clause))]


@dataclass(frozen=True, slots=True)
class _Place:
    """A text's content words, as a set and in order (where each stands)."""

    words: frozenset[str]
    sequence: list[str]

    @classmethod
    def of(cls, text: str, surface: frozenset[str]) -> _Place:
        return cls(surface, content_sequence(normalize(text)))


def _unmatched_negation(
    negated: list[frozenset[str]], other: _Place, other_negated: list[frozenset[str]], *, within: _Place
) -> bool:
    """Some negated clause (of the text `within`) is about the other text, no negated clause there matches it
    (shares half the content words of the shorter of the two clauses), and the other text does not say it with an
    opposite in its place ("not open" against "closed", "not allowed" against "banned")."""
    other_stems = _stems(other.words)
    for clause in negated:
        stems = _stems(clause)
        if word_share(stems, other_stems) < _NEGATED_CLAUSE_OVERLAP:
            continue
        if any(len(stems & o) >= _NEGATED_CLAUSE_OVERLAP * min(len(stems), len(o)) for o in map(_stems, other_negated)):
            continue
        # Only a word the other text does not also state ("not open" is not excused by a "closed" elsewhere beside
        # "open" itself), and an opposite in the same place ("not including ... and reducing debt" is not excused
        # by an "increase" in the dividend) with the same arguments ("students cannot borrow from the library" is
        # no "the library lends to students").
        unsaid = [word for word in clause if stem(word) not in other_stems]
        pairs = lexicon().opposite_pairs(unsaid, other.words, through_hypernyms=True)
        if not any(in_place(within.sequence, word, other.sequence, said) for word, said in pairs):
            return True
    return False


def _negation_check(item: ClaimCheckInput) -> list[Finding]:
    finding = negation_finding(item.claim.text, item.evidence)
    return [] if finding is None else [finding]


CHECK = ClaimCheck("negation", _negation_check, CheckEffect.SIGNAL, needs_evidence=True)
