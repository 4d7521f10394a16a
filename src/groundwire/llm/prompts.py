"""The only place a prompt is built. Every LLM call in groundwire gets its messages from here.

Passages are ID-tagged (`[S1] ...`) under a header derived from their metadata (document, page,
type, first heading), so the model can cite them and the judge can name them. Generation comes in
grounding strengths (standard, strict, very strict, chain-of-thought), each with the same
insufficient-context instruction and the same fixed refusal token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from groundwire.foundation.types import REFUSAL_TOKEN, Chunk, ChunkType

Messages = list[dict[str, str]]

_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(?P<title>[^\n]{1,80})")


class Strength(StrEnum):
    STANDARD = "standard"
    STRICT = "strict"
    VERY_STRICT = "very_strict"
    CHAIN_OF_THOUGHT = "chain_of_thought"


# --- context ---------------------------------------------------------------------------------------


def context_header(chunk: Chunk) -> str:
    """`[S1] refund_policy.md, page 2, table, "Refunds"`: what the passage is and where it came from."""
    parts = [f"[{chunk.id}]"]
    details = [chunk.doc_id] if chunk.doc_id else []
    if chunk.page is not None:
        details.append(f"page {chunk.page}")
    if chunk.type == ChunkType.TABLE.value:
        details.append("table")
    elif chunk.type == ChunkType.IMAGE_TRANSCRIPT.value:
        details.append("transcribed from an image; figures may be misread")
    heading = _HEADING_RE.match(chunk.text)
    if heading:
        details.append(f'section "{heading.group("title").strip()}"')
    if details:
        parts.append("(" + ", ".join(details) + ")")
    return " ".join(parts)


def context_block(chunks: Sequence[Chunk]) -> str:
    return "\n\n".join(f"{context_header(chunk)}\n{chunk.text.strip()}" for chunk in chunks)


# --- grounded generation ----------------------------------------------------------------------------

_GROUNDING = (
    "Answer the question using only the passages below. After every sentence, cite the passage(s) it comes "
    "from by ID, like [S1] or [S1, S3]. Cite only IDs that appear below."
)
_CALIBRATION = (
    "Do not guess. If a detail is not stated in the passages, leave it out rather than fill it in from "
    "memory; a shorter answer that is fully supported is better than a complete one that is not."
)
_INSUFFICIENT = (
    f"If the passages do not contain the information needed to answer, reply with exactly {REFUSAL_TOKEN} "
    f"and nothing else. Never write {REFUSAL_TOKEN} inside a longer answer."
)
_STRENGTH_RULES: dict[Strength, str] = {
    Strength.STANDARD: "",
    Strength.STRICT: (
        "Strict grounding: every sentence must be directly stated in a cited passage. Copy numbers, dates, "
        "names and units exactly as written. Do not combine facts into conclusions the passages do not draw."
    ),
    Strength.VERY_STRICT: (
        "Very strict grounding: write only short sentences that restate a passage almost word for word, each "
        "with its citation. Add no background, no explanation and no advice. When in doubt, leave it out; "
        f"if nothing can be restated, reply {REFUSAL_TOKEN}."
    ),
    Strength.CHAIN_OF_THOUGHT: (
        "First, inside <evidence>...</evidence>, list the exact sentences from the passages that bear on the "
        "question, each with its ID. Then, after the line 'Answer:', write the answer using only that evidence, "
        "with citations."
    ),
}


def generation_messages(question: str, chunks: Sequence[Chunk], *, strength: Strength = Strength.STANDARD) -> Messages:
    rules = [_GROUNDING, _CALIBRATION, _STRENGTH_RULES[strength], _INSUFFICIENT]
    system = "You answer questions from retrieved passages.\n\n" + "\n\n".join(rule for rule in rules if rule)
    user = f"Passages:\n\n{context_block(chunks)}\n\nQuestion: {question.strip()}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def extract_cot_answer(text: str) -> str:
    """The part of a chain-of-thought reply after 'Answer:' (the evidence list is not the answer)."""
    marker = re.search(r"(?im)^\s*answer\s*:\s*", text)
    return text[marker.end() :].strip() if marker else re.sub(r"(?s)<evidence>.*?</evidence>", "", text).strip()


# --- judge ------------------------------------------------------------------------------------------


def judge_messages(claim: str, chunks: Sequence[Chunk]) -> Messages:
    system = (
        "You check whether a claim is supported by retrieved passages. Work in this order:\n"
        "1. Find the passage that bears most directly on the claim and copy the relevant sentence from it "
        'EXACTLY, character for character, into "quote". Do not paraphrase, shorten or fix it. If no '
        "passage bears on the claim, use an empty quote and a null chunk_id.\n"
        "2. Only then rule: SUPPORTED if the quote states the claim, CONTRADICTED if it states the opposite "
        "or a different value, NOT_FOUND otherwise.\n"
        "Reply with one JSON object and nothing else: "
        '{"quote": "...", "chunk_id": "S1", "verdict": "SUPPORTED|CONTRADICTED|NOT_FOUND", "reason": "..."}'
    )
    user = f"Passages:\n\n{context_block(chunks)}\n\nClaim: {claim.strip()}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# --- claim decomposition ----------------------------------------------------------------------------


def decompose_messages(answer: str, *, question: str | None = None) -> Messages:
    system = (
        "Split an answer into atomic, self-contained factual claims. Each claim states one fact, names its "
        "subject instead of using pronouns, and uses the answer's own words wherever possible. Leave out "
        "greetings, filler and citation markers like [S1]. Add nothing the answer does not say.\n"
        'Reply with one JSON object and nothing else: {"claims": ["...", "..."]}'
    )
    user = (f"Question: {question.strip()}\n\n" if question else "") + f"Answer: {answer.strip()}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# --- repair -----------------------------------------------------------------------------------------


def edit_messages(claim: str, chunk: Chunk) -> Messages:
    system = (
        "You correct a claim so that the passage supports it, with the smallest possible edit. Change only the "
        "words the passage contradicts or does not state; remove details the passage does not give. Never add "
        "a fact, number, name or qualifier that is not already in the claim or stated in the passage. If the "
        "claim cannot be made true by such an edit, return an empty string.\n"
        'Reply with one JSON object and nothing else: {"edited": "..."}'
    )
    user = f"Passage:\n{context_header(chunk)}\n{chunk.text.strip()}\n\nClaim: {claim.strip()}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# --- Self-RAG ---------------------------------------------------------------------------------------


def selfrag_messages(question: str, chunks: Sequence[Chunk], *, strength: Strength = Strength.STANDARD) -> Messages:
    """The Self-RAG instruction format, with each passage given as a <paragraph> the model may use."""
    rules = " ".join(
        rule
        for rule in (_STRENGTH_RULES[strength], _INSUFFICIENT)
        if rule and strength is not Strength.CHAIN_OF_THOUGHT
    )
    instruction = f"{question.strip()}\n\n{rules}".strip()
    paragraphs = "".join(f"[Retrieval]<paragraph>{context_header(c)} {c.text.strip()}</paragraph>" for c in chunks)
    return [{"role": "user", "content": f"### Instruction:\n{instruction}\n\n### Response:\n{paragraphs}"}]
