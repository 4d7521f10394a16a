"""Opposites: the claim restates its best evidence sentence with one word replaced by its opposite.

"Sales rose 5% in 2020" against "Sales fell 5% in 2020", "The museum is open on Mondays" against "The museum
closes its doors to visitors every Monday": every other word matches, and a cross-encoder reads the overlap as
support. The check fires when a claim word and an evidence word, each absent from the other text, are opposites
in WordNet (core.lexicon: antonyms per sense, adjective clusters, antonymous prefixes such as "illegal"), at least
half the claim's other content words occur in the sentence, and the negation is not flipped around the pair as
well: "is not open" says what "is closed" says (negation.py's clauses decide what a negation governs). The two
words must stand in the same place (a content word next to one is next to the other: wording.same_place), not
with their arguments swapped around them (a converse: "students borrow laptops from the library" says what "the
library lends laptops to students" says), and neither may be said in the other text in another form or with a
synonym. Names (capitalised past the first word)
and figures are never opposites.

A signal, not a verdict (like negation): the score is capped mid-band and the claim escalated. What it fires on
over the dev answers, and why that keeps it a signal: docs/accuracy.md, "What the signals fire on".
"""

from __future__ import annotations

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.checks.negation import negated_clauses
from groundwire.core.checks.wording import content_sequence, in_place
from groundwire.core.lexicon import lexicon
from groundwire.foundation.textutil import WORD_RE, stem, word_share, words
from groundwire.foundation.types import Finding

_RESTATED = 0.5
"""The claim restates the sentence when this share of its content words, the opposite aside, occur there."""


def opposite_finding(claim: str, evidence: str | None) -> Finding | None:
    """A signal, not a verdict: a claim word whose opposite stands in its place in the evidence sentence."""
    if evidence is None:
        return None
    claim_words, evidence_words = content_sequence(claim), content_sequence(evidence)
    replaced, replacing = _unsaid(claim, claim_words, evidence_words), _unsaid(evidence, evidence_words, claim_words)
    if not replaced or not replacing:
        return None
    claim_stems, evidence_stems = _stems(claim_words), _stems(evidence_words)
    claim_negated, evidence_negated = _negated(claim), _negated(evidence)
    for word, other in lexicon().opposite_pairs(replaced, replacing):
        if word_share(claim_stems - {stem(word.lower())}, evidence_stems) < _RESTATED:
            continue
        if not in_place(claim_words, word, evidence_words, other):
            # "raising its dividend" against "debt to fall": opposites about different things; or a converse:
            # "students borrow from the library" says "the library lends to students"
            continue
        if (word.lower() in claim_negated) != (other.lower() in evidence_negated):
            continue  # "is not open" against "is closed": the negation flips it back
        return Finding("opposite", f"the claim says '{word}' where the evidence says '{other}'", None)
    return None


def _stems(found: list[str]) -> set[str]:
    return {stem(word.lower()) for word in found}


def _unsaid(text: str, found: list[str], other: list[str]) -> list[str]:
    """The words that may have an opposite (no figures; no names, capitalised past the text's first word) and
    that the other text does not say in some form or with a synonym ("increasing" is said by "increase",
    "getting" by "receiving", "long-acting" by "long acting")."""
    lexical = lexicon()
    parts = [part for word in other for part in word.lower().split("-")]
    stems = _stems(parts)
    # Each distinct word once: a window of '[1][2][3]...' repeats three words thousands of times.
    bases = {base for part in set(parts) for base in lexical.base_forms(part)}
    first = next(iter(WORD_RE.findall(text)), "")
    return [
        word
        for word in dict.fromkeys(found)
        if (word == first or word.islower())
        and not any(ch.isdigit() for ch in word)
        and not all(
            stem(part) in stems or not lexical.synonyms(part).isdisjoint(bases) for part in word.lower().split("-")
        )
    ]


def _negated(text: str) -> set[str]:
    return {word for clause in negated_clauses(text) for word in words(clause)}


def _opposites_check(item: ClaimCheckInput) -> list[Finding]:
    finding = opposite_finding(item.claim.text, item.evidence)
    return [] if finding is None else [finding]


CHECK = ClaimCheck("opposites", _opposites_check, CheckEffect.SIGNAL, needs_evidence=True)
