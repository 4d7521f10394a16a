"""LLM claim decomposition behind the same Decomposer protocol as the rule-based splitter.

The model returns {"claims": [...]}: atomic, self-contained claims. Each is mapped back to its span in
the answer: its own words where they occur in order, else the answer sentence it overlaps most. The
decomposer may split and reword, never add or leave out:
- a sentence's claims stand for it only when none adds a content word or figure the answer does not have
  (SmolLM2 turned "The Eiffel Tower is in Paris" into "Paris has been named after Gustave Eiffel Tower", which
  the context would then reject although the answer never said it) and together they leave none of the
  sentence's out;
- any other sentence, one the model skipped included, is split by the rules, so every sentence is checked
  whole (else an unsupported part the model left out would be accepted unseen).
Any failure (endpoint down, unparseable reply, nothing usable) falls back to the rules.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field

from pydantic import BaseModel

from groundwire.core.claims import RuleDecomposer, Sentence, Split, cited_ids, strip_citations
from groundwire.core.novelty import added_content
from groundwire.foundation.textutil import WORD_RE, content_words
from groundwire.foundation.types import Claim
from groundwire.llm import prompts
from groundwire.llm.client import LLMClient
from groundwire.llm.errors import LLMError

log = logging.getLogger("groundwire.decompose")


class ClaimList(BaseModel):
    claims: list[str]


@dataclass
class LLMDecomposer:
    client: LLMClient
    rules: RuleDecomposer = field(default_factory=RuleDecomposer)
    """What splits the answer into sentences (once), splits the sentences the model's claims do not stand for, and
    takes over when the model fails."""

    def decompose(self, answer: str, *, question: str | None = None) -> list[Claim]:
        return self.split(answer, question=question).claims

    def split(self, answer: str, *, question: str | None = None, limit: int | None = None) -> Split:
        """The model's claims where they may stand for their sentence, the rules' elsewhere. An answer the rules
        find over the limit is refused without a model call."""
        ruled = self.rules.split(answer, question=question, limit=limit)
        if not ruled.complete:
            return ruled
        claims = self._claims(answer, question, ruled)
        if limit is not None and len(claims) > limit:
            return Split(claims[: limit + 1], complete=False, sentences=ruled.sentences)
        return Split(claims, complete=True, sentences=ruled.sentences)

    def _claims(self, answer: str, question: str | None, ruled: Split) -> list[Claim]:
        messages = prompts.decompose_messages(answer, question=question)
        try:
            parsed, _ = self.client.chat_json(messages, ClaimList, purpose="decompose")
        except LLMError as exc:
            log.warning("LLM decomposition failed, using the rules: %s", exc)
            return ruled.claims
        candidates = [sentence for sentence in ruled.sentences if sentence.skip_reason is None]
        mapped = [claim for text in parsed.claims if (claim := map_claim(text, answer, candidates)) is not None]
        by_sentence: dict[str, list[Claim]] = defaultdict(list)
        for claim in mapped:
            by_sentence[claim.sentence].append(claim)
        claims = [claim for sentence, members in by_sentence.items() if faithful_split(sentence, members, answer)
                  for claim in members]  # fmt: skip
        if not claims:
            log.warning("LLM decomposition gave no claim found in the answer, using the rules")
            return ruled.claims
        kept = {claim.sentence for claim in claims}
        by_rules = [claim for claim in ruled.claims if claim.sentence not in kept]
        if by_rules:
            log.warning("LLM decomposition added to or left out of %d answer sentence(s); the rules split them",
                        len({claim.sentence for claim in by_rules}))  # fmt: skip
        return sorted(claims + by_rules, key=lambda claim: claim.span)


def faithful_split(sentence: str, claims: list[Claim], answer: str) -> bool:
    """The sentence's LLM claims may stand for it: none adds a word or figure the answer lacks, and together
    they leave none of the sentence's out ("costs $10 and includes 5 GB" split into the price alone would
    leave the storage unchecked)."""
    if any(added_content(answer, claim.text, "") for claim in claims):
        return False
    return not added_content(" ".join(claim.text for claim in claims), strip_citations(sentence), "")


def map_claim(text: str, answer: str, candidates: list[Sentence]) -> Claim | None:
    """Place one LLM claim in the answer; None when it shares no content word with any sentence."""
    text = strip_citations(text).strip()
    if not text or not candidates:
        return None
    text = text[0].upper() + text[1:]
    text = text if text[-1] in ".!?" else text + "."
    span = _verbatim_span(text, answer)
    sentence = _containing(span, candidates) if span else _most_overlapping(text, candidates)
    if sentence is None:
        return None
    return Claim(text=text, span=span or sentence.span, sentence=sentence.text, cited_ids=cited_ids(sentence.text))


def _verbatim_span(text: str, answer: str) -> tuple[int, int] | None:
    words = WORD_RE.findall(text)
    if not words:
        return None
    # The claim's words in order, allowing only punctuation, spacing and citation markers between them.
    pattern = r"(?<!\w)" + r"(?:\W|\[[^\]]*\])+".join(re.escape(word) for word in words) + r"(?!\w)"
    match = re.search(pattern, answer, re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def _containing(span: tuple[int, int], candidates: list[Sentence]) -> Sentence | None:
    for sentence in candidates:
        if sentence.span[0] <= span[0] < sentence.span[1]:
            return sentence
    return None


def _most_overlapping(text: str, candidates: list[Sentence]) -> Sentence | None:
    claim_words = set(content_words(text))
    best, best_overlap = None, 0
    for sentence in candidates:
        overlap = len(claim_words & set(content_words(sentence.text)))
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best
