"""How late the event loop runs what is due: the margin the worker pool answers a request's time budget by.

At a request's deadline the pool answers it whatever its check is doing (workers.WorkerPool), but that answer is a
callback on the event loop, and past it the response waits for the loop again to be written. Beside four heavy
checks on two loaded cores the loop ran its callbacks up to 0.5 s late (bench/budget.py's GET /healthz), and a 504
sent at the deadline arrived 0.34 s after it. So the pool answers `margin()` before the deadline: twice the loop's
recent lag (once for the answer's own callback, once for writing it), at most `cap_s` (`margin_cap`: a quarter of the budget, and 0.5 s); on an idle service, a few
milliseconds. `LoopLag` samples the lag every `every_s` on the running loop, from the app's start to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

SAMPLE_EVERY_S = 0.05
RECENT_SAMPLES = 20
"""The lag is the largest of the last 20 samples: the last second."""
MAX_MARGIN_S = 0.5


def margin_cap(budget_s: float) -> float:
    """The largest margin for a time budget of `budget_s`: a quarter of it, and 0.5 s, so that a lagging loop
    leaves a check at least three quarters of its budget."""
    return min(MAX_MARGIN_S, budget_s / 4)


class LoopLag:
    def __init__(self, cap_s: float, *, every_s: float = SAMPLE_EVERY_S) -> None:
        if cap_s < 0 or every_s <= 0:
            raise ValueError("the margin's cap must be at least 0 and the sampling interval positive")
        self.cap_s = cap_s
        self.every_s = every_s
        self._samples: deque[float] = deque(maxlen=RECENT_SAMPLES)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Sample the running loop's lag until `stop`."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._sample())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def add(self, seconds: float) -> None:
        """One sample: how late the loop ran something due (the sampler's own wake-up, or the pool's answer)."""
        self._samples.append(max(0.0, seconds))

    def recent(self) -> float:
        """The largest lag of the recent samples (0 before any)."""
        return max(self._samples, default=0.0)

    def margin(self) -> float:
        """How long before a deadline its answer is sent: twice the recent lag, at most `cap_s`."""
        return min(self.cap_s, 2 * self.recent())

    async def _sample(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.every_s
            await asyncio.sleep(self.every_s)
            self.add(loop.time() - due)
