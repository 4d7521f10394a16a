"""Pair pruning: skip (claim, window) pairs that cannot be a claim's max.

The pair matrix grows as claims x windows. A pruner looks at both sides cheaply and keeps, per claim,
the few windows that could hold its evidence; the verifier scores only those pairs (a pruned pair counts
as support 0 and never becomes the claim's citation). No pruner (``None``) means the exact matrix.

Every pruner keeps, per claim, its ``top_k`` best windows plus any window within ``margin`` of the best,
and keeps the whole row when it cannot tell windows apart (a claim with no content words), so pruning
only ever removes pairs that look clearly worse than ones kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["PRUNERS", "Embed", "EmbeddingPruner", "LexicalPruner", "Pruner", "get_pruner", "keep_top"]


@runtime_checkable
class Pruner(Protocol):
    def keep(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        """Boolean mask of shape (len(claims), len(windows)): True = score this pair."""
        ...


def keep_top(similarity: np.ndarray, *, top_k: int, margin: float) -> np.ndarray:
    """Per row: the top_k columns, plus every column within `margin` of the row's best.

    A row whose values are all equal (nothing to tell the windows apart) is kept whole.
    """
    if similarity.ndim != 2:
        raise ValueError(f"similarity must be 2-D, got shape {similarity.shape}")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    n_rows, n_cols = similarity.shape
    if n_cols <= top_k:
        return np.ones((n_rows, n_cols), dtype=bool)
    best = similarity.max(axis=1, keepdims=True)
    mask: np.ndarray = similarity >= best - margin
    # argpartition gives the top_k column indices per row without a full sort.
    top = np.argpartition(-similarity, top_k - 1, axis=1)[:, :top_k]
    np.put_along_axis(mask, top, True, axis=1)
    flat = similarity.max(axis=1) == similarity.min(axis=1)
    mask[flat] = True
    return mask


# A small English stop list: words that match everywhere and so say nothing about where evidence is.
_STOP = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her his how i if in
    into is it its me my no not of on or our she so than that the their them then there these they this to
    was we were what when where which who will with would you your also about after before more most other
    some such only over very just""".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)


def content_tokens(text: str, *, stem: int = 6) -> set[str]:
    """Lower-cased word tokens minus stop words, cut to `stem` characters (a crude, language-free stemmer)."""
    return {tok[:stem] for tok in _WORD.findall(text.lower()) if tok not in _STOP}


@dataclass(frozen=True, slots=True)
class LexicalPruner:
    """IDF-weighted share of the claim's content words found in the window. No model, microseconds a pair.

    IDF is computed over the windows of the one answer being checked, so a word that occurs in every
    window (the topic) weighs little and a rare one (a name, a number) weighs a lot.
    """

    top_k: int = 3
    margin: float = 0.15
    stem: int = 6

    def similarity(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        window_sets = [content_tokens(w, stem=self.stem) for w in windows]
        df = Counter(tok for ws in window_sets for tok in ws)
        n = len(windows)
        sim = np.zeros((len(claims), n), dtype=np.float32)
        for i, claim in enumerate(claims):
            tokens = content_tokens(claim, stem=self.stem)
            weights = {tok: math.log(1.0 + n / (1.0 + df.get(tok, 0))) for tok in tokens}
            total = sum(weights.values())
            if total == 0.0:
                continue  # an all-zero row is kept whole by keep_top
            for j, ws in enumerate(window_sets):
                sim[i, j] = sum(w for tok, w in weights.items() if tok in ws) / total
        return sim

    def keep(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        return keep_top(self.similarity(claims, windows), top_k=self.top_k, margin=self.margin)


Embed = Callable[[Sequence[str]], np.ndarray]
"""Texts in, one unit vector per text out (float32, shape (len(texts), dim))."""


@dataclass(slots=True)
class EmbeddingPruner:
    """Cosine similarity of sentence embeddings (all-MiniLM-L6-v2 when built by groundwire.pipeline), united with
    the lexical pruner's choice.

    The embedding catches paraphrases the lexical pruner misses; the lexical side keeps exact words,
    numbers and names, and evidence past the embedder's 256-token reach in a long window. The cost is one
    small encoder pass per claim and per window (claims + windows, not claims x windows), which pays off
    with a cross-encoder scorer and not with the lexical one. `embed` is handed in (pipeline passes
    groundwire.scoring.embedder.embed_texts, the process-wide embedder loaded on first use): core knows no model.
    """

    top_k: int = 3
    margin: float = 0.1
    lexical: LexicalPruner | None = field(default_factory=LexicalPruner)
    embed: Embed = field(kw_only=True)

    def keep(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        if len(windows) <= self.top_k:
            return np.ones((len(claims), len(windows)), dtype=bool)
        sim = self.embed(list(claims)) @ self.embed(list(windows)).T
        mask = keep_top(sim, top_k=self.top_k, margin=self.margin)
        if self.lexical is not None:
            mask |= self.lexical.keep(claims, windows)
        return mask


PRUNERS: dict[str, Callable[..., Pruner] | None] = {
    "none": None,
    "lexical": LexicalPruner,
    "embedding": EmbeddingPruner,
}


def get_pruner(name: str, **options: Any) -> Pruner | None:
    """The pruner registered under `name` ("none" = exact matrix), built with `options`."""
    if name not in PRUNERS:
        raise ValueError(f"unknown pruner {name!r}; choose one of {sorted(PRUNERS)}")
    factory = PRUNERS[name]
    return None if factory is None else factory(**options)
