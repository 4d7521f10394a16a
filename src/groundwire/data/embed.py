"""Long texts indexed for embedding search: cut into model-sized windows, embedded by the shared sentence embedder
(scoring.embedder), and compared window by window. The semantic cache and provenance.add_citations read it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from groundwire.core.cancel import batches
from groundwire.foundation.textutil import split_text
from groundwire.scoring.embedder import Embedder

WINDOW_CHARS = 300
"""One to a few sentences: far inside the model's 256 word pieces, and short enough that a sentence-sized query
is compared with text of its own size instead of being diluted by a long chunk."""
WINDOW_BATCH = 32
"""Windows embedded between two cancellation checkpoints (core.cancel) at most: the embedder's own batch, about 10k
characters, a tenth of a second or so of one core (bench/abandoned.py: 256 windows took 14 s on a machine loaded 7
times over its cores), so that a service request whose caller has gone, or whose time is up, stops soon after.
Under a time budget the batches are sized to what is left of it (core.cancel.batches), from FIRST_WINDOWS."""
FIRST_WINDOWS = 8
"""The first batch under a time budget, whose time gives the cost of a window: 32 took 1.1 s on 2 cores loaded 3
times over."""


@dataclass(frozen=True, slots=True)
class WindowIndex:
    """Texts cut into model-sized windows and embedded, so a long text is compared in full, not by its start."""

    vectors: np.ndarray
    """(windows, dim) unit vectors."""
    starts: np.ndarray
    """Index of each text's first window; a text's windows are contiguous."""

    @property
    def size(self) -> int:
        return len(self.starts)


def index_texts(embedder: Embedder, texts: Sequence[str], *, window_chars: int = WINDOW_CHARS) -> WindowIndex:
    windows: list[str] = []
    starts: list[int] = []
    for text in texts:
        starts.append(len(windows))
        windows.extend(split_text(text, max_chars=window_chars) or [text])
    vectors = np.zeros((len(windows), embedder.dim), dtype=np.float32)
    for part in batches(len(windows), first=FIRST_WINDOWS, most=WINDOW_BATCH):
        vectors[part] = embedder.embed(windows[part])
    return WindowIndex(vectors, np.array(starts, dtype=np.int64))


def best_similarity(index: WindowIndex, queries: np.ndarray) -> np.ndarray:
    """(queries, texts) cosine of each query with each text's best-matching window."""
    if index.size == 0:
        return np.zeros((len(queries), 0), dtype=np.float32)
    return np.maximum.reduceat(queries @ index.vectors.T, index.starts, axis=1)
