"""The meaning layer: each claim aligned to its best evidence sentence by a sentence-embedding model, what of the
claim that sentence covers, and the paraphrase gate.

The embedder is all-MiniLM-L6-v2 as it was released (trained for sentence similarity on about a billion pairs),
not the bundled cross-encoder fine-tuned from it: it reads "Tickets cost 12 euros for adults." as the same
sentence as "Adult tickets are 12 euros.", which the cross-encoder leaves undecided. Similarity alone cannot tell a
claim from its opposite or from a swapped figure or name (they embed close), so the gate SUPPORTs a claim only
when, besides a high similarity, its aligned sentence covers every content word of it (the word, a form of it or a
WordNet synonym; names only as written), every figure it states is in the context, and no check has a finding
on it: the figure, negation, opposites, certainty and role checks are what stand between a swap and the gate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from groundwire.core.cancel import batches
from groundwire.core.lexicon import lexicon
from groundwire.foundation.textutil import STOPWORDS, WORD_RE, normalize, sentence_spans, stem
from groundwire.foundation.types import Chunk
from groundwire.scoring.embedder import Embedder

GATE_SIMILARITY = 0.80
"""Cosine similarity of the claim and its aligned sentence at or above which the gate may SUPPORT the claim."""
MAX_SENTENCE_CHARS = 1000
"""A longer 'sentence' (a table row, a run-on list) is cut at whitespace into pieces of about this size, so the
embedder (256 word pieces) reads all of it."""
_POSSESSIVE_RE = re.compile(r"['\u2019]s\b")


@dataclass(frozen=True, slots=True)
class Alignment:
    """A claim's best evidence sentence by meaning."""

    chunk_index: int
    span: tuple[int, int]
    """The sentence's (start, end) in its chunk's text."""
    similarity: float
    """Cosine similarity of the claim and the sentence."""
    uncovered: tuple[str, ...]
    """The claim's content words that neither the sentence nor a synonym in it covers (figures left out: the
    figure check reads them against the whole context)."""
    uncovered_names: tuple[str, ...]
    """Capitalised words of the claim (past its first word) that the sentence does not contain in some form
    ("Monday" covers "Mondays"; a synonym never covers a name)."""
    content_words: int
    """How many content words (figures left out) the claim has."""

    @property
    def uncovered_share(self) -> float:
        return len(self.uncovered) / self.content_words if self.content_words else 0.0


def context_sentences(context: Sequence[Chunk]) -> list[tuple[int, int, int]]:
    """(chunk index, start, end) of every sentence of every chunk, long ones cut into embeddable pieces."""
    out: list[tuple[int, int, int]] = []
    for index, chunk in enumerate(context):
        for start, end in sentence_spans(chunk.text):
            while end - start > MAX_SENTENCE_CHARS:
                cut = chunk.text.rfind(" ", start, start + MAX_SENTENCE_CHARS)
                cut = cut if cut > start else start + MAX_SENTENCE_CHARS
                out.append((index, start, cut))
                start = cut + 1 if chunk.text[cut : cut + 1] == " " else cut
            out.append((index, start, end))
    return out


ALIGN_BATCH = 256
"""Texts embedded in one call of `align`: the embedder batches within it; several calls let a check stop between
them."""


def align(claims: Sequence[str], context: Sequence[Chunk], embedder: Embedder) -> list[Alignment | None]:
    """Each claim's best evidence sentence by cosine similarity, in embedding calls of ALIGN_BATCH texts at most.
    None for every claim when the context has no sentence."""
    sentences = context_sentences(context)
    if not claims or not sentences:
        return [None] * len(claims)
    texts = [context[i].text[s:e] for i, s, e in sentences]
    every = [*claims, *texts]
    # Batches that fit a service request's time budget (core.cancel), for a large context's thousands of sentences.
    vectors = np.concatenate([embedder.embed(every[part]) for part in batches(len(every), most=ALIGN_BATCH)])
    similarity = vectors[: len(claims)] @ vectors[len(claims) :].T
    out: list[Alignment | None] = []
    for row, claim in zip(similarity, claims, strict=True):
        best = int(np.argmax(row))
        index, start, end = sentences[best]
        out.append(_aligned(claim, context[index].text[start:end], index, (start, end), float(row[best])))
    return out


def _aligned(claim: str, sentence: str, chunk_index: int, span: tuple[int, int], similarity: float) -> Alignment:
    claim_words = _claim_words(claim)
    sentence_stems = {stem(w) for w in _words(sentence)}
    uncovered = tuple(w for w in claim_words if not _covered(w, sentence_stems))
    names = [w for w in WORD_RE.findall(_POSSESSIVE_RE.sub("", claim))[1:] if w[:1].isupper()]
    return Alignment(
        chunk_index=chunk_index,
        span=span,
        similarity=similarity,
        uncovered=uncovered,
        uncovered_names=tuple(name for name in names if stem(name.lower()) not in sentence_stems),
        content_words=len(claim_words),
    )


def _words(text: str) -> list[str]:
    return WORD_RE.findall(normalize(_POSSESSIVE_RE.sub("", text)))


def _claim_words(claim: str) -> list[str]:
    """Lower-cased content words, figures left out."""
    return [w for w in dict.fromkeys(_words(claim)) if w not in STOPWORDS and not any(c.isdigit() for c in w)]


def _covered(word: str, sentence_stems: set[str]) -> bool:
    if stem(word) in sentence_stems:
        return True
    # The word's synonyms hold its base forms ("became" -> "become") too.
    return any(stem(other) in sentence_stems for other in lexicon().synonyms(word) if " " not in other)


def paraphrase(alignment: Alignment | None, *, findings: bool, figures_ok: bool) -> bool:
    """The gate: the claim says what its aligned sentence says (`gate_closed_by` names nothing)."""
    return not gate_closed_by(alignment, findings=findings, figures_ok=figures_ok)


def gate_closed_by(alignment: Alignment | None, *, findings: bool, figures_ok: bool) -> list[str]:
    """What keeps the paraphrase gate closed; it opens for a claim similar in meaning to its aligned sentence
    (GATE_SIMILARITY), with every name in it, every content word covered, every figure in the context, and no
    check finding of any kind. (Letting one verb go uncovered opened it for "drama film" against "drama book":
    most English nouns are verbs too.)"""
    if alignment is None:
        return ["no evidence sentence"]
    reasons = [
        reason
        for reason, closed in (
            ("a check finding", findings),
            ("a figure not in the context", not figures_ok),
            ("a name not in the sentence", bool(alignment.uncovered_names)),
            ("a word not covered", bool(alignment.uncovered)),
            ("similarity", alignment.similarity < GATE_SIMILARITY),
        )
        if closed
    ]
    return reasons


def meaning_features(alignment: Alignment | None, *, gate: bool) -> dict[str, float]:
    """The combiner's features from the meaning layer (names are stable: the combiner stores them)."""
    if alignment is None:
        return {"meaning_similarity": 0.0, "meaning_uncovered": 1.0, "paraphrase": 0.0}
    return {
        "meaning_similarity": alignment.similarity,
        "meaning_uncovered": alignment.uncovered_share,
        "paraphrase": float(gate),
    }
