"""The worker pool for checks: how many verify, repair and generate requests run at once, and how many may wait.

A check is CPU work (splitting, the scoring call, aggregation). FastAPI would run every sync endpoint on anyio's
shared pool of 40 threads, so 40 large checks would share two cores, each 20 times slower, and nothing would tell
a caller that the service is full. Instead, checks run on `workers` threads; a request that finds them all busy
waits for one, and once `max_waiting` requests are already waiting it is refused at once with 503 `busy` naming
the limit (and Retry-After), instead of hanging.

Sizing: one worker per usable core, and at least two, so that a small request can run beside a large one rather
than behind it. The threads share one verifier: its sentence splitter is per thread, and onnxruntime's
`InferenceSession.run` is thread-safe. More workers than cores would only slice the same cores thinner.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread

from groundwire.core.errors import ErrorCode
from groundwire.service.errors import ServiceError

P = ParamSpec("P")
T = TypeVar("T")


def default_workers() -> int:
    """The usable cores (the CPU affinity where the platform has one), and at least two."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return max(2, cores)


class WorkerPool:
    def __init__(self, workers: int, max_waiting: int) -> None:
        if workers < 1 or max_waiting < 0:
            raise ValueError("workers must be at least 1 and max_waiting at least 0")
        self.workers = workers
        self.max_waiting = max_waiting
        self.waiting = 0
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `function` on a worker thread; 503 `busy` when max_waiting requests already wait for one."""
        if self._limiter is None:  # made on first use, inside the event loop that serves the requests
            self._limiter = anyio.CapacityLimiter(self.workers)
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            if self.waiting >= self.max_waiting:
                raise ServiceError(ErrorCode.BUSY,
                                   f"All {self.workers} workers are busy and {self.waiting} requests are waiting; "
                                   f"the limit (max_waiting) is {self.max_waiting}. Retry in a moment.",
                                   details={"limit": "max_waiting", "max": self.max_waiting, "got": self.waiting + 1},
                                   headers={"Retry-After": "1"}) from None
            self.waiting += 1
            try:
                await self._limiter.acquire()
            finally:
                self.waiting -= 1
        try:
            return await anyio.to_thread.run_sync(partial(function, *args, **kwargs))
        finally:
            self._limiter.release()
