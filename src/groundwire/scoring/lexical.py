"""The lexical baseline: content-word recall of the claim in the premise. Named honestly as a baseline.

It has no notion of meaning, paraphrase or contradiction; it exists so that every learned scorer has a
floor to beat, and so that the library works with no model at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groundwire.foundation.textutil import WORD_RE, content_words, stem
from groundwire.scoring.base import Calibration, PairScores

# Words that carry names and figures weigh more: a missing "Berlin" or "49" matters more than a missing "offer".
_SALIENT_WEIGHT = 2.0
_WINDOW_WORDS = 256


class LexicalScorer:
    model_id = "lexical-baseline"
    max_tokens: int | None = _WINDOW_WORDS
    calibration: Calibration | None = None

    @classmethod
    def from_spec(cls, _arg: str = "") -> LexicalScorer:
        return cls()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(WORD_RE.findall(text)) for text in texts]

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        premise_cache: dict[str, frozenset[str]] = {}
        support = np.zeros(len(pairs), dtype=np.float32)
        for i, (premise, hypothesis) in enumerate(pairs):
            if premise not in premise_cache:
                premise_cache[premise] = frozenset(content_words(premise))
            support[i] = weighted_recall(hypothesis, premise_cache[premise])
        return PairScores(support=support)


def weighted_recall(hypothesis: str, premise_words: frozenset[str]) -> float:
    """Share of the hypothesis' content words found in the premise, names and figures weighted double."""
    salient = {stem(w.lower()) for w in WORD_RE.findall(hypothesis) if w[:1].isupper() or any(c.isdigit() for c in w)}
    words = content_words(hypothesis)
    if not words:
        return 1.0
    total = found = 0.0
    for word in words:
        weight = _SALIENT_WEIGHT if word in salient else 1.0
        total += weight
        found += weight if word in premise_words else 0.0
    return found / total
