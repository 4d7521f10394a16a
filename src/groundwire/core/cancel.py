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

A caller that answers at the deadline whatever the work is doing (the service's 504) `abandon`s the token then; the
work, before its result shows anywhere (a log row), `commit`s: whichever comes first wins, so that a caller never
answers 504 for work whose result was kept, nor waits for work it has given up on.

Long steps between boundaries (scoring a batch of pairs, reading the figures of a large context, building its index,
cutting it into windows) call `checkpoint` inside their loops, so that work stops within a small part of a second of
its deadline; `batches` sizes the scorer's calls to what is left of the budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, TypeVar, cast

Reason = Literal["disconnected", "deadline"]
T = TypeVar("T")
FIRST_BATCH = 32
"""The first of `batches`' batches, whose time gives the cost of one item."""
LONGEST_BATCH_S = 0.25
"""The longest a batch of `batches` is sized to take: a caller that goes away is seen within about this."""


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
        self._lock = threading.Lock()
        self._abandoned = False
        self._committed = False

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
        if self._cancelled.is_set():
            return "disconnected"
        if self._parent is not None and (reason := self._parent.reason) is not None:
            return reason
        if self._abandoned or (self.deadline is not None and time.monotonic() >= self.deadline):
            return "deadline"
        return None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (at least 0), or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def check(self) -> None:
        """Raise Cancelled when the work should stop."""
        if (reason := self.reason) is not None:
            raise Cancelled(reason)

    def commit(self) -> None:
        """The work's last boundary, before its result shows anywhere: raise Cancelled when it should stop; else
        its result stands, and `abandon` no longer gives it up (the caller waits for it)."""
        with self._lock:
            self.check()
            self._committed = True

    def abandon(self) -> bool:
        """At the deadline, the caller answers without the work (True): from now on the work stops at its next
        checkpoint or commit. False: the work has committed its result already, and the caller waits for it."""
        with self._lock:
            if self._committed:
                return False
            self._abandoned = True
            return True


_current: ContextVar[CancelToken | None] = ContextVar("groundwire_cancel_token", default=None)


def current() -> CancelToken | None:
    """The token the running work is under, or None."""
    return _current.get()


def checkpoint() -> None:
    """A boundary of long work: raise Cancelled when the work's token says to stop (nothing without a token)."""
    token = _current.get()
    if token is not None:
        token.check()


def commit() -> None:
    """The running work's `CancelToken.commit` (nothing without a token): called before its result shows anywhere."""
    token = _current.get()
    if token is not None:
        token.commit()


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


def batches(
    total: int, *, first: int = FIRST_BATCH, most: int | None = None, longest_s: float = LONGEST_BATCH_S
) -> Iterator[slice]:
    """Slices of range(total) for work done a batch at a time (a scorer's pairs, embedded texts), each sized to fit
    what is left of the running work's time budget, with a checkpoint before each: the first `first` items, then as
    many as the last batch took per item for half of what is left, for `longest_s` at most, and `most` items at
    most. Work past its deadline therefore stops within about one item of it, however much was asked. Without a
    token: batches of `most` (None: one batch)."""
    token = _current.get()
    if token is None:
        step = most or total
        yield from (slice(start, min(total, start + step)) for start in range(0, total, max(step, 1)))
        return
    start, size = 0, min(first, most or first)
    while start < total:
        token.check()
        end = min(total, start + size)
        began = time.perf_counter()
        yield slice(start, end)
        per_item = (time.perf_counter() - began) / (end - start)
        start = end
        left = token.remaining()
        room = longest_s if left is None else min(longest_s, left / 2)
        size = max(1, int(room / per_item)) if per_item > 0 else total - start
        size = min(size, most or size)


def awaited(load: Callable[[], T]) -> T:
    """`load()` (a model's load, shared by the process: it returns the same object once loaded), for work that
    stops at its time budget: under a token it runs on a thread of its own, and the work waits for it at
    checkpoints, so that a load longer than the budget costs the caller its budget and no more; the load goes on,
    and the next caller finds it done or under way. Without a token: `load()`."""
    token = _current.get()
    if token is None:
        return load()
    with _loads_lock:
        loading = _loads.get(load)
        if loading is None or (loading.done() and loading.exception() is not None):
            loading = _loads[load] = Future()
            threading.Thread(target=_load_into, args=(load, loading), daemon=True, name="groundwire-load").start()
    while not wait([loading], timeout=AWAIT_STEP_S).done:
        token.check()
    return cast(T, loading.result())


AWAIT_STEP_S = 0.02
"""How often work waiting for a load (`awaited`) looks at its token."""
_loads: dict[Callable[[], object], Future[object]] = {}
_loads_lock = threading.Lock()


def _load_into(load: Callable[[], object], loading: Future[object]) -> None:
    try:
        loading.set_result(load())
    except BaseException as failure:  # the caller that waits for it raises it
        loading.set_exception(failure)
