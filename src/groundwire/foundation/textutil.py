"""Small, dependency-free text helpers shared by claims, checks, windows and the lexical scorer."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache

from groundwire.foundation.errors import ErrorCode, InputError

WORD_RE = re.compile(r"[^\W_]+(?:[-'.][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto over under about as is are was
    were be been being am do does did doing have has had having it its it's this that these those there here
    which who whom whose what when where why how than so such very can could should would may might must will
    shall not no nor only own same too also just i me my we our ours you your yours he him his she her hers they
    them their theirs one ones some any all each both few more most other s t don't isn't aren't wasn't weren't
    up down out off again further once while during before after above below between through until against
    because per via de la le et""".split()
)

NEGATION_WORDS = frozenset(
    "not no never none nobody nothing neither nor without cannot can't won't isn't aren't wasn't weren't "
    "doesn't don't didn't hasn't haven't hadn't shouldn't wouldn't couldn't mustn't".split()
)

# Fast sentence boundaries for chunk windowing: pysbd is accurate but too slow on megabyte contexts,
# and a window boundary that lands mid-abbreviation costs nothing because windows overlap.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def normalize(text: str) -> str:
    """Unicode NFKC, straight quotes, lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return text.lower()


def words(text: str) -> list[str]:
    return WORD_RE.findall(normalize(text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to match "supports"/"supported"/"supporting" without a stemmer package."""
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def content_words(text: str) -> list[str]:
    """Stemmed, lower-cased words that carry content (stopwords removed)."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def word_share(words: AbstractSet[str], within: AbstractSet[str]) -> float:
    """The share of `words` found in `within` (0 for no words): how far one text restates another."""
    return len(words & within) / len(words) if words else 0.0


def has_negation(text: str) -> bool:
    lowered = normalize(text)
    return any(w in NEGATION_WORDS for w in WORD_RE.findall(lowered)) or "n't" in lowered


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of sentences or lines, whitespace trimmed, for windowing long chunks."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        spans.extend(_trimmed(text, start, match.start()))
        start = match.end()
    spans.extend(_trimmed(text, start, len(text)))
    return spans


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span with surrounding whitespace removed (empty when it held only whitespace)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _trimmed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    start, end = trim_span(text, start, end)
    return [(start, end)] if end > start else []


def latin_share(text: str) -> float:
    """Share of letters that are ASCII Latin: a cheap signal that the text is probably not English."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 1.0
    return sum(ch.isascii() for ch in letters) / len(letters)


_EN_FUNCTION_WORDS = frozenset("the a an is are was were of to in and that it for on with as by this be".split())


def looks_english(text: str) -> bool:
    """True unless the text is clearly not English (few Latin letters, or Latin text without English function words)."""
    if latin_share(text) < 0.8:
        return False
    tokens = WORD_RE.findall(text.lower())
    if len(tokens) < 8:
        return True
    return sum(t in _EN_FUNCTION_WORDS for t in tokens) / len(tokens) >= 0.06


def language_warnings(answer: str, context: Sequence[str]) -> tuple[str, ...]:
    """A report's warning when the answer or the context (its first five chunks' beginnings) is not English."""
    sample = " ".join(text[:2000] for text in context[:5])
    if looks_english(answer) and looks_english(sample):
        return ()
    return (
        "the answer or context does not look like English: groundwire's checks and bundled model are "
        "English-only, so scores for other languages are unreliable",
    )


def split_text(text: str, *, max_chars: int = 1200) -> list[str]:
    """Paragraph-packed chunks of at most about `max_chars`; a longer paragraph is split at sentence ends.

    Nothing is dropped: the chunks, joined, hold every non-whitespace character of the text.
    """
    if max_chars < 50:
        raise InputError("max_chars must be at least 50", code=ErrorCode.INVALID_SETTINGS)
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            pieces.append(paragraph)
            continue
        pieces.extend(paragraph[start:end] for start, end in sentence_spans(paragraph))
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 2 + len(piece) <= max_chars:
            chunks[-1] = f"{chunks[-1]}\n\n{piece}"
        else:
            chunks.append(piece)
    return chunks
