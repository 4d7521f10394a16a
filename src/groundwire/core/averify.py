"""`averify`: verify() for async servers. The check is CPU-bound (tokenizer, onnxruntime), so it runs in a
worker thread and the event loop keeps serving other requests; onnxruntime releases the GIL while it scores,
so several checks in flight overlap."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio.to_thread

from groundwire.core.types import Chunk, Report

if TYPE_CHECKING:
    from anyio import CapacityLimiter

    from groundwire.core.verifier import Verifier


async def averify(
    answer: str,
    chunks: Sequence[Chunk | str],
    *,
    question: str | None = None,
    task: str | None = None,
    require_citations: bool = False,
    verifier: Verifier | None = None,
    scorer: str | None = None,
    limiter: CapacityLimiter | None = None,
) -> Report:
    """Await one check. Pass a loaded `verifier` to reuse it, or a `scorer` name (the process-wide verifier
    for that name, as verify() uses); `limiter` caps how many checks run at once (anyio's default is 40)."""
    from groundwire.core.verifier import given_or_shared

    call = functools.partial(
        given_or_shared(verifier, scorer).verify,
        answer,
        chunks,
        question=question,
        task=task,
        require_citations=require_citations,
    )
    return await anyio.to_thread.run_sync(call, limiter=limiter)
