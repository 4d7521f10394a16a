"""A check worked out before any model runs: the chunks read (`as_chunks`), the claims, the windows and the
(claim, window) pairs to score, and their count (`Workload`), which a caller reads to refuse work it will not pay for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groundwire.core.claims import Sentence
from groundwire.core.windows import Window
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Chunk, Claim


@dataclass(frozen=True, slots=True)
class Workload:
    """What `Verifier.verify` would score for one answer, counted before any model runs."""

    claims: int
    windows: int
    pairs: int
    """(claim, window) pairs the one batched scoring call would score (before a pruner drops any)."""


@dataclass(frozen=True, slots=True, eq=False)
class Plan:
    """One answer's check, worked out before any model runs: its claims, the windows they are scored against and
    which (claim, window) pairs belong together. `Verifier.plan` makes it, a caller may refuse it by its
    `workload`, and `Verifier.run` executes it, so the answer is split once (one LLM call with an LLM decomposer).
    """

    answer: str
    question: str | None
    context: tuple[Chunk, ...]
    """The chunks as given (after `as_chunks`)."""
    scoring_context: tuple[Chunk, ...]
    """What is scored: the same chunks, JSON records rendered to one statement per line."""
    claims: tuple[Claim, ...]
    windows: tuple[Window, ...]
    allowed: np.ndarray
    """(claims, windows) bool: the pairs the scoring call scores."""
    complete: bool
    """False when the answer has more claims than the caller's `max_claims` (or, split by rules, more than
    SENTENCES_PER_CLAIM x (max_claims + 1) sentences): the plan cannot run, and `claims` holds the first max_claims + 1
    or those found before splitting stopped (a decomposer that stops early), or all of them (one that cannot, such
    as the LLM's)."""
    timings: Mapping[str, float]
    abstained: bool = False
    """The answer is the refusal token: nothing to split or score."""
    sentences: tuple[Sentence, ...] = ()
    """The answer's sentences, split once (those read before splitting stopped, when incomplete): the report's
    skipped sentences and the citation validator read them."""
    later: Plan | None = None
    """The next cascade stage's plan of the same claims, where the caller made it already (the service plans every
    stage to refuse an answer by its limits before anything is scored): `Verifier.run` runs it rather than planning
    that stage again. None: the stage plans itself if the answer reaches it."""

    @property
    def workload(self) -> Workload:
        return Workload(len(self.claims), len(self.windows), int(self.allowed.sum()))


def as_chunks(chunks: Sequence[Chunk | str]) -> list[Chunk]:
    """Accept plain strings (ids S1..Sn) or Chunks; refuse an empty context with a clear message."""
    if isinstance(chunks, (str, bytes)):
        raise InputError(
            "chunks must be a list of passages, not a single string: wrap it as [text]", code=ErrorCode.INVALID_CHUNKS
        )
    result = [c if isinstance(c, Chunk) else Chunk(id=f"S{i}", text=str(c)) for i, c in enumerate(chunks, start=1)]
    result = [c for c in result if c.text.strip()]
    if not result:
        raise InputError("the context is empty: pass at least one non-empty retrieved chunk", code=ErrorCode.NO_CONTEXT)
    ids = [c.id for c in result]
    if len(set(ids)) != len(ids):
        raise InputError(
            f"chunk ids must be unique; duplicated: {sorted({i for i in ids if ids.count(i) > 1})}",
            code=ErrorCode.INVALID_CHUNKS,
        )
    return result
