"""LLM claim decomposition behind the same Decomposer protocol as the rule-based splitter.

The model returns {"claims": [...]}: atomic, self-contained claims. Each is mapped back to its span in
the answer: its own words where they occur in order, else the answer sentence it overlaps most. The
decomposer may split and reword, never add or leave out:
- a claim with a content word or figure the answer does not have was invented and is dropped (SmolLM2 turned
  "The Eiffel Tower is in Paris" into "Paris has been named after Gustave Eiffel Tower", which the context
  would then reject although the answer never said it), and with it the other claims from its sentence;
- an answer sentence that no kept claim comes from is split by the rules instead, so a sentence the model left
  out is still checked (else an unsupported sentence it skipped would be accepted unseen).
Any failure (endpoint down, unparseable reply, nothing usable) falls back to the rules.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from pydantic import BaseModel

from groundwire.llm import prompts
from groundwire.core.claims import Decomposer, RuleDecomposer, Sentence, cited_ids, sentences, strip_citations
from groundwire.llm.client import LLMClient
from groundwire.llm.errors import LLMError
from groundwire.core.novelty import added_content
from groundwire.core.textutil import WORD_RE, content_words
from groundwire.core.types import Claim

log = logging.getLogger("groundwire.decompose")


class ClaimList(BaseModel):
    claims: list[str]


@dataclass
class LLMDecomposer:
    client: LLMClient
    fallback: Decomposer = field(default_factory=RuleDecomposer)

    def decompose(self, answer: str, *, question: str | None = None) -> list[Claim]:
        messages = prompts.decompose_messages(answer, question=question)
        try:
            parsed, _ = self.client.chat_json(messages, ClaimList, purpose="decompose")
        except LLMError as exc:
            log.warning("LLM decomposition failed, using the rules: %s", exc)
            return self.fallback.decompose(answer, question=question)
        candidates = [sentence for sentence in sentences(answer) if sentence.skip_reason is None]
        mapped = [claim for text in parsed.claims if (claim := map_claim(text, answer, candidates)) is not None]
        # A sentence that yielded an invented claim is the rules' to split: the claim may have reworded a part of
        # it ("5 GB" as "5 gigabytes") that the sentence's other claims do not cover.
        invented = {claim.sentence for claim in mapped if added_content(answer, claim.text, "")}
        claims = [claim for claim in mapped if claim.sentence not in invented]
        if invented:
            log.warning("LLM decomposition invented claims from %d answer sentence(s); the rules split them",
                        len(invented))  # fmt: skip
        if not claims:
            log.warning("LLM decomposition gave no claim found in the answer, using the rules")
            return self.fallback.decompose(answer, question=question)
        covered = {claim.sentence for claim in claims}
        left_out = [claim for claim in self.fallback.decompose(answer, question=question) if claim.sentence not in covered]
        if left_out:
            log.warning("LLM decomposition left %d answer sentence(s) out; the rules split them",
                        len({claim.sentence for claim in left_out}))  # fmt: skip
        return sorted(claims + left_out, key=lambda claim: claim.span)


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
