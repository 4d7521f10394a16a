"""Citations: a claim that cites an id never retrieved (a note on the claim), and the answer-level validators
(empty answer, a refusal token that is not the whole answer, fabricated and, on request, missing citations)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.claims import Sentence, cited_ids
from groundwire.foundation.types import REFUSAL_TOKEN, Chunk, Finding, Verdict


def resolve_cited_id(raw: str, chunk_ids: Sequence[str]) -> str | None:
    """Map a citation marker's id to a retrieved chunk id ("Source 2" and "2" mean S2), or None."""
    if raw in chunk_ids:
        return raw
    digits = re.fullmatch(r"(?:Source\s*)?(\d+)", raw, re.IGNORECASE)
    if digits and f"S{digits.group(1)}" in chunk_ids:
        return f"S{digits.group(1)}"
    return None


def validate_output(
    answer: str, chunks: Sequence[Chunk], found: Sequence[Sentence], *, require_citations: bool = False
) -> list[Finding]:
    """Answer-level validators: empty answer, misplaced refusal token, fabricated and missing citations (`found`:
    the answer's sentences, as its plan split them)."""
    stripped = answer.strip()
    if not stripped:
        return [Finding("empty_answer", "the answer is empty", Verdict.NOT_FOUND)]
    findings: list[Finding] = []
    if REFUSAL_TOKEN in stripped and stripped != REFUSAL_TOKEN:
        findings.append(
            Finding("refusal_token_not_alone", f"{REFUSAL_TOKEN} must be the whole answer, not part of it", None)
        )
    chunk_ids = [chunk.id for chunk in chunks]
    for raw in cited_ids(answer):
        if resolve_cited_id(raw, chunk_ids) is None:
            findings.append(
                Finding(
                    "fabricated_citation", f"cites [{raw}], which is not among the retrieved chunks", Verdict.NOT_FOUND
                )
            )
    if require_citations:
        for sentence in found:
            if sentence.skip_reason is None and not cited_ids(sentence.text):
                findings.append(Finding("uncited_sentence", f"no citation: {sentence.text!r}", None))
    return findings


def _citation_check(item: ClaimCheckInput) -> list[Finding]:
    return [
        Finding("fabricated_citation", f"cites [{raw}], which was never retrieved", None)
        for raw in item.claim.cited_ids
        if resolve_cited_id(raw, item.chunk_ids) is None
    ]


CHECK = ClaimCheck("citations", _citation_check, CheckEffect.NOTE, needs_evidence=True)
