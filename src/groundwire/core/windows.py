"""Long chunks -> overlapping sentence windows that fit the scorer's input, so nothing is cut silently.

A chunk that fits is one window. A longer chunk is packed greedily into windows of whole sentences, each
window repeating the previous window's last sentence so that a fact split across a boundary is still seen
whole once. A single sentence longer than the budget is split on whitespace into overlapping pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from groundwire.core.cancel import checkpoint
from groundwire.foundation.textutil import sentence_spans
from groundwire.foundation.types import Chunk, Claim

# Sub-word counts of separate pieces drift a little from the count of their concatenation.
_SAFETY_TOKENS = 4
_SAFETY_SHARE = 0.03


@dataclass(frozen=True, slots=True)
class Window:
    chunk_index: int
    start: int
    end: int
    text: str


def premise_budget(max_tokens: int | None, hypothesis_tokens: int) -> int | None:
    """Tokens left for the premise once the hypothesis and three special tokens are in."""
    if max_tokens is None:
        return None
    room = max_tokens - hypothesis_tokens - 3
    return int(room - _SAFETY_TOKENS - room * _SAFETY_SHARE)


def make_windows(
    chunks: Sequence[Chunk],
    *,
    budget: int | None,
    count_tokens: Callable[[Sequence[str]], list[int]],
) -> list[Window]:
    """Windows for every chunk, in chunk order; each window's text is chunk.text[start:end]."""
    if budget is None:
        return [Window(i, 0, len(c.text), c.text) for i, c in enumerate(chunks)]
    if budget < 8:
        raise ValueError(f"premise budget of {budget} tokens is too small to window a chunk")
    whole_counts = count_tokens([c.text for c in chunks])
    windows: list[Window] = []
    for index, (chunk, whole) in enumerate(zip(chunks, whole_counts, strict=True)):
        checkpoint()  # a large context's windows stop at the time budget (core.cancel)
        if whole <= budget:
            windows.append(Window(index, 0, len(chunk.text), chunk.text))
        else:
            windows.extend(_chunk_windows(index, chunk.text, budget, count_tokens))
    return windows


def _chunk_windows(
    index: int, text: str, budget: int, count_tokens: Callable[[Sequence[str]], list[int]]
) -> list[Window]:
    spans = sentence_spans(text)
    counts = count_tokens([text[s:e] for s, e in spans])
    pieces: list[tuple[int, int, int]] = []
    for (start, end), tokens in zip(spans, counts, strict=True):
        checkpoint()
        if tokens <= budget:
            pieces.append((start, end, tokens))
        else:
            pieces.extend(_split_long_sentence(text, start, end, tokens, budget, count_tokens))
    windows: list[Window] = []
    first = 0
    while first < len(pieces):
        last, used = first, pieces[first][2]
        while last + 1 < len(pieces) and used + pieces[last + 1][2] + 1 <= budget:
            last += 1
            used += pieces[last][2] + 1
        start, end = pieces[first][0], pieces[last][1]
        windows.append(Window(index, start, end, text[start:end]))
        if last + 1 >= len(pieces):
            break
        # Overlap by one piece, unless the window is a single piece (then move on to avoid looping).
        first = last if last > first else last + 1
    return windows


def _split_long_sentence(
    text: str, start: int, end: int, tokens: int, budget: int, count_tokens: Callable[[Sequence[str]], list[int]]
) -> list[tuple[int, int, int]]:
    """Whitespace pieces of about half the budget, overlapping by a quarter, re-counted exactly."""
    words: list[tuple[int, int]] = []
    cursor = start
    for word in text[start:end].split():
        word_start = text.index(word, cursor)
        words.append((word_start, word_start + len(word)))
        cursor = word_start + len(word)
    tokens_per_word = max(tokens / max(len(words), 1), 1.0)
    size = max(int(budget / 2 / tokens_per_word), 1)
    step = max(size * 3 // 4, 1)
    spans = [(words[i][0], words[min(i + size, len(words)) - 1][1]) for i in range(0, len(words), step)]
    counts = count_tokens([text[s:e] for s, e in spans])
    pieces: list[tuple[int, int, int]] = []
    for (s, e), n in zip(spans, counts, strict=True):
        pieces.extend([(s, e, n)] if n <= budget else _split_characters(text, s, e, n, budget, count_tokens))
    return pieces


def _split_characters(
    text: str, start: int, end: int, tokens: int, budget: int, count_tokens: Callable[[Sequence[str]], list[int]]
) -> list[tuple[int, int, int]]:
    """Last resort for a "word" longer than the window (a hash, base64, a URL): cut it by characters."""
    size = max(int((end - start) * budget / (2 * tokens)), 1)
    spans = [(s, min(s + size, end)) for s in range(start, end, size)]
    counts = count_tokens([text[s:e] for s, e in spans])
    return [(s, e, min(n, budget)) for (s, e), n in zip(spans, counts, strict=True)]


STANDARD_CLAIM_TOKENS = 96
"""Premise windows are sized for claims up to this many tokens; longer claims get windows of their own."""


def claim_windows(
    claims: Sequence[Claim],
    context: Sequence[Chunk],
    max_tokens: int | None,
    count_tokens: Callable[[Sequence[str]], list[int]],
) -> tuple[list[Window], np.ndarray]:
    """Windows for every claim, for a scorer that reads `max_tokens` (None: no limit), and which (claim, window)
    pairs belong together.

    A claim's windows depend only on its own length bucket, never on the other claims, so adding a
    claim cannot change another claim's score. A claim longer than half the model window is unscorable.
    """
    if max_tokens is None:
        whole = make_windows(context, budget=None, count_tokens=count_tokens)
        return whole, np.ones((len(claims), len(whole)), dtype=bool)
    standard = min(max_tokens // 2, STANDARD_CLAIM_TOKENS)
    buckets: dict[int, list[int]] = {}
    for index, tokens in enumerate(count_tokens([claim.text for claim in claims])):
        if tokens <= max_tokens // 2:
            bucket = standard if tokens <= standard else min(-(-tokens // 32) * 32, max_tokens // 2)
            buckets.setdefault(bucket, []).append(index)
    windows: list[Window] = []
    spans: dict[int, tuple[int, int]] = {}
    for bucket in sorted(buckets):
        bucket_windows = make_windows(context, budget=premise_budget(max_tokens, bucket), count_tokens=count_tokens)
        spans[bucket] = (len(windows), len(windows) + len(bucket_windows))
        windows.extend(bucket_windows)
    allowed = np.zeros((len(claims), len(windows)), dtype=bool)
    for bucket, members in buckets.items():
        allowed[np.asarray(members)[:, None], np.arange(*spans[bucket])[None, :]] = True
    return windows, allowed
