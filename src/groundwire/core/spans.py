"""Which words of a claim are unsupported: character spans in the answer, for highlighting and span metrics.

A flagged claim says *that* something is unsupported; these spans say *what*. A span is a run of the
claim's content words and figures that occur nowhere in the context (stopwords neither start nor break a
run). When every word of a flagged claim occurs somewhere (a negation flip, a swapped relation, a figure
moved to another entity), the word-level view has nothing to show and the whole claim is the span.
"""

from __future__ import annotations

from collections.abc import Iterable

from groundwire.core.claims import CITATION_RE
from groundwire.foundation.textutil import STOPWORDS, WORD_RE, normalize, stem, trim_span

Span = tuple[int, int]


def novel_word_spans(answer: str, span: Span, context_words: frozenset[str]) -> tuple[Span, ...]:
    """Runs of words inside answer[span] whose stems are not in `context_words` (answer coordinates)."""
    start, end = span
    # Blank citation markers out, keeping offsets: "[S1]" is not a claim word.
    text = CITATION_RE.sub(lambda m: " " * len(m.group()), answer[start:end])
    runs: list[Span] = []
    current: list[int] | None = None
    for match in WORD_RE.finditer(text):
        word = normalize(match.group())
        if word in STOPWORDS:
            continue
        if stem(word) not in context_words:
            current = [match.start(), match.end()] if current is None else [current[0], match.end()]
        elif current is not None:
            runs.append((current[0], current[1]))
            current = None
    if current is not None:
        runs.append((current[0], current[1]))
    return tuple((start + a, start + b) for a, b in runs)


def unsupported_spans(answer: str, span: Span, context_words: frozenset[str]) -> tuple[Span, ...]:
    """The novel-word runs of a flagged claim, or the whole claim (trimmed) when it has none."""
    return novel_word_spans(answer, span, context_words) or (trim_span(answer, *span),)


def span_overlap_counts(predicted: Iterable[Span], gold: Iterable[Span]) -> tuple[int, int, int]:
    """(characters in both, predicted characters, gold characters), each span set taken as a union."""
    pred_chars = {i for a, b in predicted for i in range(a, b)}
    gold_chars = {i for a, b in gold for i in range(a, b)}
    return len(pred_chars & gold_chars), len(pred_chars), len(gold_chars)
