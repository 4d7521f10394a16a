"""Cooperative cancellation: long work that stops at its next boundary once its caller has gone or its time is up.

A caller (the service, for each request) makes a `CancelToken` with a deadline, runs the work inside
`cancellable(token)`, and cancels the token when its client disconnects. The work calls `checkpoint()` at its
boundaries (before a plan is scored, between window batches of an embedding, before a generation attempt or an LLM
retry), which raises `Cancelled` once the token is cancelled or past its deadline, and does nothing outside
`cancellable` (the CLI and the library run as before). The token is found through a context variable, so that the
functions between the caller and a boundary need no extra parameter; a thread pool that runs the work in a copy of
the caller's context (contextvars.copy_context) carries it to the worker thread.

`Cancelled` is a BaseException, as asyncio.CancelledError is, so that code that keeps going past one item's failure
(`except Exception`) does not keep going past a cancellation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

Reason = Literal["disconnected", "deadline"]


class Cancelled(BaseException):
    """The work was stopped at a boundary: its caller went away ("disconnected") or its time was up ("deadline")."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(f"cancelled: {reason}")
        self.reason: Reason = reason


class CancelToken:
    """A flag another thread may set (`cancel`) and an optional deadline on time.monotonic()'s clock. A token made
    `within` another is cancelled with it and expires no later than it."""

    deadline: float | None

    def __init__(self, deadline: float | None = None, *, parent: CancelToken | None = None) -> None:
        if parent is not None and parent.deadline is not None:
            deadline = parent.deadline if deadline is None else min(deadline, parent.deadline)
        self.deadline = deadline
        self._parent = parent
        self._cancelled = threading.Event()

    @classmethod
    def after(cls, seconds: float | None) -> CancelToken:
        """A token whose deadline is `seconds` from now (None: no deadline)."""
        return cls(None if seconds is None else time.monotonic() + seconds)

    def within(self, seconds: float) -> CancelToken:
        """A child token that also expires `seconds` before this one does."""
        return CancelToken(None if self.deadline is None else self.deadline - seconds, parent=self)

    def cancel(self) -> None:
        """The caller went away: the work stops at its next checkpoint."""
        self._cancelled.set()

    @property
    def reason(self) -> Reason | None:
        """Why the work should stop now, or None."""
        if self._cancelled.is_set() or (self._parent is not None and self._parent.reason == "disconnected"):
            return "disconnected"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "deadline"
        return None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (at least 0), or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def check(self) -> None:
        """Raise Cancelled when the work should stop."""
        if (reason := self.reason) is not None:
            raise Cancelled(reason)


_current: ContextVar[CancelToken | None] = ContextVar("groundwire_cancel_token", default=None)


def current() -> CancelToken | None:
    """The token the running work is under, or None."""
    return _current.get()


def checkpoint() -> None:
    """A boundary of long work: raise Cancelled when the work's token says to stop (nothing without a token)."""
    token = _current.get()
    if token is not None:
        token.check()


def remaining() -> float | None:
    """Seconds left to the running work (`CancelToken.remaining`), or None without a token or a deadline."""
    token = _current.get()
    return None if token is None else token.remaining()


@contextmanager
def cancellable(token: CancelToken) -> Iterator[CancelToken]:
    """Run the block's work under `token`: its checkpoints raise Cancelled once the token says to stop."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)
