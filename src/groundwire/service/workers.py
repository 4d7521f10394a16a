"""The worker pool for checks: how many verify, repair and generate requests run at once, how many may wait, and
a reserved lane so that a small check is never stuck behind large ones.

A check is CPU work (splitting, the scoring call, aggregation). FastAPI would run every sync endpoint on anyio's
shared pool of 40 threads, so 40 large checks would share two cores, each 20 times slower, and nothing would tell
a caller that the service is full. Instead, checks run on the pool's own `workers` threads; a request that finds
them all busy waits for one, and once `max_waiting` requests are already waiting it is refused at once with 503
`busy` naming the limit (and Retry-After), instead of hanging. A waiting request holds no thread, and a refusal
needs none.

Scopes: a check of one permission scope may take at most `max_waiting_per_scope` of the waiting places (by
default half of them once the keys name two or more scopes), so that one scope's flood cannot take every place and
have every other scope refused; past it, 503 `busy` names that limit. Waiting checks still run in arrival order.

Sizing: one worker per usable core, and at least two. The threads share one verifier: its sentence splitter is per
thread, and onnxruntime's `InferenceSession.run` is thread-safe. More workers than cores would only slice the same
cores thinner.

The reserved lane: `reserved` more threads that only small checks may use, when every main worker is busy and at
least one of them with a check that is not small. Two of the largest checks the limits accept take both main workers
of a two-core machine for seconds; a tiny verify beside them still runs at once on a reserved worker, and finishes
in tens of milliseconds (onnxruntime releases the GIL while it scores, and Python hands the GIL over every 5 ms),
instead of waiting for a whole large check. A check that is not small never runs on a reserved worker; and behind
small checks only, a small one waits its (short) turn, so a load of small checks runs `workers` at once, one per
core, not more. The caller says which checks may be small before they are queued (for
verify and repair: a short body that calls no LLM, `Runtime.looks_small`), and the check confirms it on the worker
where it learns its size, once its context is read and once it is planned (`require_small`): one that turns out not
to be small gives the reserved worker back and is queued again, first in line, for a main worker (or, with
max_waiting requests already waiting, is refused with 503 `busy` as it would have been on arrival), where the little
it did (reading its context, planning a short answer) is done again. Nothing it did shows: no score, no log row.

Hand-off: a worker that finishes a check takes the next waiting one itself; the event loop only queues requests and
delivers results. When every hand-off went through the event loop (anyio's to_thread), a loop kept busy (answering
clients that retry a refused request at once, each of its system calls waiting for the GIL the checks hold) left
the workers idle between checks, and goodput at 64 clients fell to 0.58 of goodput at 16 (bench/service_load.py).
A full pool's refusals are answered before the route parses the body (`refuse_when_full`), so that one costs the
loop the same small amount whatever the body, and they are paced (`RefusalPace`): at most `refusal_rate` a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal, ParamSpec, TypeVar, cast

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from groundwire.core import cancel
from groundwire.core.cancel import Cancelled, CancelToken
from groundwire.foundation.errors import ErrorCode
from groundwire.scoring.forms import usable_cores
from groundwire.service.auth import resolved_caller
from groundwire.service.errors import ServiceError, error_response
from groundwire.service.looplag import LoopLag

P = ParamSpec("P")
T = TypeVar("T")
Lane = Literal["main", "reserved"]
LANES: tuple[Lane, ...] = ("main", "reserved")
BusyLimit = Literal["max_waiting", "max_waiting_per_scope"]
BUSY_LIMITS: tuple[BusyLimit, ...] = ("max_waiting", "max_waiting_per_scope")
"""The limits on waiting places a busy refusal names (and /metrics counts refusals by)."""
BUSY_RETRY_AFTER_S = 1
"""A busy refusal's Retry-After, and the longest a paced refusal waits to be sent."""


def default_workers() -> int:
    """The usable cores (the CPU affinity where the platform has one), and at least two."""
    return max(2, usable_cores())


class NotSmall(Exception):
    """Raised by `require_small` on a reserved worker: the check is not small, and goes to a main worker (or, with
    max_waiting already waiting, gets 503 `busy`)."""


_here = threading.local()


def require_small(small: bool) -> None:
    """Where a check learns its size: on a reserved worker, a check that is not `small` stops here, before it has
    done anything that shows (no score, no log row), and the pool runs it again on a main worker (or refuses it,
    `busy`, when max_waiting already wait). On a main worker it goes on, and from then on counts as a large check
    (small ones may now use the reserved workers beside it). Outside the pool it does nothing."""
    if small:
        return
    lane = getattr(_here, "lane", None)
    if lane == "reserved":
        raise NotSmall
    if lane == "main":
        _here.pool.mark_large(_here.job)


@dataclass(eq=False, slots=True)
class _Job:
    call: Callable[[], object]
    small: bool
    scope: str | None
    """The caller's permission scope, whose checks may hold at most max_waiting_per_scope of the waiting places."""
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[object]
    token: CancelToken
    """Cancelled when the caller goes; its deadline is the route's time budget (service/cancellation.py)."""
    counted_large: bool = False
    """Counted in the pool's large checks running on main workers."""
    started: bool = False
    """A worker has begun it: at its deadline it is answered 504, not 503 `queue_timeout`."""
    reserve_s: float = 0.0
    """Of its time budget, what it needs once begun to answer with what it finished (the eval routes': their
    answer after their evidence checks stop): it is not begun with less than this left."""
    expiry: asyncio.TimerHandle | None = None
    """The event loop's call of WorkerPool._expire for it."""


_Ready = queue.SimpleQueue[_Job | None]


class WorkerPool:
    def __init__(self, workers: int, max_waiting: int, *, reserved: int = 0,
                 max_waiting_per_scope: int | None = None, lag: LoopLag | None = None) -> None:
        if workers < 1 or max_waiting < 0 or reserved < 0 or (max_waiting_per_scope or 0) < 0:
            raise ValueError("workers must be at least 1, and max_waiting, max_waiting_per_scope and reserved at "
                             "least 0")
        self.workers = workers
        self.max_waiting = max_waiting
        self.max_waiting_per_scope = max_waiting if max_waiting_per_scope is None else max_waiting_per_scope
        """So that one scope's flood cannot take every waiting place and have every other scope refused."""
        self.reserved = reserved
        self.lag = lag if lag is not None else LoopLag(cap_s=0.0)
        """The event loop's lag: a check past its time budget is answered its margin() before the deadline, so that
        the answer arrives by it (service/looplag.py). Without one, at the deadline."""
        self._lock = threading.Lock()
        self._free: dict[Lane, int] = {"main": workers, "reserved": reserved}
        self._large = 0
        """Main workers running a check that is not small (or not known to be): only beside one of them may a
        small check use a reserved worker. With small checks only, the pool runs `workers` at once."""
        self._waiting: deque[_Job] = deque()
        self._waiting_by_scope: Counter[str | None] = Counter()
        self.refused: Counter[BusyLimit] = Counter()
        """Busy refusals so far, by the limit each met (max_waiting, max_waiting_per_scope): /metrics reads them."""
        self._refused_lock = threading.Lock()  # refusal() runs both under the pool's lock and outside it
        self._ready: dict[Lane, _Ready] = {lane: queue.SimpleQueue() for lane in LANES}
        self._threads: list[tuple[Lane, threading.Thread]] = []

    @property
    def waiting(self) -> int:
        """Checks queued for a worker."""
        return len(self._waiting)

    def busy(self, lane: Lane = "main") -> int:
        """Workers of `lane` that are running (or about to run) a check."""
        total = self.workers if lane == "main" else self.reserved
        return total - self._free[lane]

    def must_wait(self, *, small: bool) -> bool:
        """Whether no worker is free for a check (`small`: one that may use a reserved worker): it would wait, or
        be refused."""
        with self._lock:
            return self._lane_for_size(small) is None

    def full(self, *, small: bool, scope: str | None = None) -> bool:
        """Whether a check (`small`: one that may use a reserved worker) of `scope` would be refused now."""
        with self._lock:
            return self._lane_for_size(small) is None and self._limit_met(scope) is not None

    async def run(self, scope: str | None, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `function`, a check of `scope`, on a main worker; 503 `busy` when max_waiting requests already wait
        for one, or max_waiting_per_scope of `scope`."""
        return await self._submit(partial(function, *args, **kwargs), small=False, scope=scope)

    async def run_sized(self, scope: str | None, small: bool, function: Callable[P, T], /, *args: P.args,
                        **kwargs: P.kwargs) -> T:
        """`run`, for a check that may be `small`: with every main worker busy it may run on a reserved one (and
        calls `require_small` where it learns whether it really is)."""
        return await self._submit(partial(function, *args, **kwargs), small=small, scope=scope)

    async def run_with_reserve(self, scope: str | None, reserve_s: float, function: Callable[P, T], /, *args: P.args,
                               **kwargs: P.kwargs) -> T:
        """`run`, for work that stops itself `reserve_s` before its deadline and answers with what it finished (the
        eval routes): it is begun only with `reserve_s` left of its time budget; past that, still waiting, it is
        refused 503 `queue_timeout` at once, since it could finish nothing."""
        return await self._submit(partial(function, *args, **kwargs), small=False, scope=scope, reserve_s=reserve_s)

    async def _submit(self, call: Callable[[], T], *, small: bool, scope: str | None, reserve_s: float = 0.0) -> T:
        loop = asyncio.get_running_loop()
        # The request's token (service/cancellation.py), or one that never stops the check outside it.
        token = cancel.current() or CancelToken()
        # The check runs in a copy of the request's context (its tracing span, its token), as anyio's to_thread would.
        job = _Job(partial(contextvars.copy_context().run, call), small, scope, loop, loop.create_future(), token,
                   reserve_s=reserve_s)
        with self._lock:
            self._start()
            refused = self._admit(job)
        if refused is not None:
            raise refused
        # First called at the earliest it may be due (the largest margin), then again when it is (`_expire`).
        self._arm(job, self._due(job, self.lag.cap_s), time.monotonic())
        try:
            return cast(T, await job.future)
        except Cancelled as stopped:
            raise _stopped(stopped) from None
        except asyncio.CancelledError:
            token.cancel()  # running: it stops at its next checkpoint, and its result is dropped
            with self._lock:  # not started yet: it never will be
                if job in self._waiting:
                    self._unqueue(job)
            raise
        finally:
            if job.expiry is not None:
                job.expiry.cancel()

    def _due(self, job: _Job, margin: float) -> float | None:
        """When (time.monotonic()) the job's caller is answered without it: `margin` before its deadline, and before
        that, while it waits, its reserve (`run_with_reserve`); None without a deadline."""
        deadline = job.token.deadline
        return None if deadline is None else deadline - margin - (0.0 if job.started else job.reserve_s)

    def _arm(self, job: _Job, due: float | None, now: float) -> None:
        if due is not None:
            at = max(due, now)
            job.expiry = job.loop.call_later(at - now, self._expire, job, at)

    def _expire(self, job: _Job, called_for: float) -> None:
        """On the event loop, at the job's due time (`_due`), the caller is answered whatever the job is doing, so
        that a route answers within its time budget even while its check is between two checkpoints: one still
        waiting for a worker (or handed one, not yet begun) is refused, 503 queue_timeout; one running is answered
        504 time_budget_exceeded, and stops at its next checkpoint (its worker is busy until then, and its result, if
        any, is dropped). One that has committed its result already (CancelToken.commit: it is writing its log
        row) is waited for. One not due yet (the loop's lag is less than the largest margin, or it has begun since)
        is called again when it is."""
        now = time.monotonic()
        self.lag.add(now - called_for)  # this call's own lateness is a sample of the loop's lag
        if job.future.done():
            return
        if (later := self._due(job, self.lag.margin())) is not None and later > now:
            self._arm(job, later, now)
            return
        if not job.token.abandon():
            return
        with self._lock:
            if job in self._waiting:
                self._unqueue(job)
            started = job.started
        job.future.set_exception(_stopped(Cancelled("deadline")) if started else _queue_timeout())

    def close(self) -> None:
        """Stop the threads once their checks are done; checks still waiting get 503 `not_ready`."""
        with self._lock:
            waiting, self._waiting = list(self._waiting), deque()
            self._waiting_by_scope.clear()
            for lane, _ in self._threads:
                self._ready[lane].put(None)
            self._threads = []
            self._ready = {lane: queue.SimpleQueue() for lane in LANES}  # a later run starts new threads
        for job in waiting:
            _settle(job, None, ServiceError(ErrorCode.NOT_READY, "The service is shutting down; retry in a moment."))

    # --- under the lock ---------------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._threads:
            return
        sizes: tuple[tuple[Lane, int], ...] = (("main", self.workers), ("reserved", self.reserved))
        for lane, count in sizes:
            for number in range(count):
                thread = threading.Thread(target=self._work, args=(lane, self._ready[lane]), daemon=True,
                                          name=f"groundwire-{lane}-{number}")
                thread.start()
                self._threads.append((lane, thread))

    def _lane_for_size(self, small: bool) -> Lane | None:
        if self._free["main"]:
            return "main"
        if small and self._free["reserved"] and self._large:
            return "reserved"
        return None

    def _limit_met(self, scope: str | None) -> BusyLimit | None:
        """The limit that leaves a check of `scope` no waiting place (max_waiting wait, else max_waiting_per_scope of
        its scope), or None where it finds one."""
        if len(self._waiting) >= self.max_waiting:
            return "max_waiting"
        if self._waiting_by_scope[scope] >= self.max_waiting_per_scope:
            return "max_waiting_per_scope"
        return None

    def _admit(self, job: _Job, *, first: bool = False) -> ServiceError | None:
        """Give the job a free worker of a lane its size may use, else queue it (`first`: at the head), else, with
        no waiting place for it, the 503 `busy` to answer it with."""
        lane = self._lane_for_size(job.small)
        if lane is not None:
            self._assign(job, lane)
        elif self._limit_met(job.scope) is not None:
            return self.refusal(small=job.small, scope=job.scope)
        else:
            if first:
                self._waiting.appendleft(job)
            else:
                self._waiting.append(job)
            self._waiting_by_scope[job.scope] += 1
        return None

    def _unqueue(self, job: _Job) -> None:
        self._waiting.remove(job)
        self._waiting_by_scope[job.scope] -= 1
        if not self._waiting_by_scope[job.scope]:
            del self._waiting_by_scope[job.scope]

    def _assign(self, job: _Job, lane: Lane) -> None:
        self._free[lane] -= 1
        if lane == "main" and not job.small:
            job.counted_large = True
            self._large += 1
        self._ready[lane].put(job)

    def _finish(self, job: _Job, lane: Lane) -> None:
        self._free[lane] += 1
        if job.counted_large:
            job.counted_large = False
            self._large -= 1

    def _dispatch(self) -> None:
        """Hand free workers to the waiting checks, in arrival order: a free main worker to the first waiting, a
        free reserved one to the first small one."""
        for job in list(self._waiting):
            if not (self._free["main"] or self._free["reserved"]):
                return
            lane = self._lane_for_size(job.small)
            if lane is not None:
                self._unqueue(job)
                self._assign(job, lane)

    def refusal(self, *, small: bool, scope: str | None = None) -> ServiceError:
        """503 `busy`, naming the limit it met (max_waiting, else max_waiting_per_scope), with Retry-After; counted
        in `refused`. Called once for each refusal sent."""
        lanes = f"All {self.workers} workers"
        if small and self.reserved:
            lanes += f" and the {self.reserved} reserved for small checks"
        # None: the queue moved on since the caller saw it full (refuse_when_full reads it outside the lock).
        limit = self._limit_met(scope) or "max_waiting_per_scope"
        if limit == "max_waiting":
            waiting, maximum, what = len(self._waiting), self.max_waiting, "requests are waiting"
        else:
            waiting, maximum = self._waiting_by_scope[scope], self.max_waiting_per_scope
            what = "requests of your scope are waiting"
        with self._refused_lock:
            self.refused[limit] += 1
        return ServiceError(ErrorCode.BUSY,
                            f"{lanes} are busy and {waiting} {what}; the limit ({limit}) is {maximum}. Retry in a "
                            "moment.",
                            details={"limit": limit, "max": maximum, "got": waiting + 1},
                            headers={"Retry-After": str(BUSY_RETRY_AFTER_S)})

    # --- on a worker thread -----------------------------------------------------------------------------------

    def mark_large(self, job: _Job) -> None:
        """`job`, running on a main worker, turned out not to be small: small checks may now run beside it."""
        with self._lock:
            if not job.counted_large:
                job.counted_large = True
                self._large += 1
                self._dispatch()

    def _work(self, lane: Lane, ready: _Ready) -> None:
        _here.lane, _here.pool = lane, self
        while (job := ready.get()) is not None:
            _here.job = job
            self._execute(job, lane)
            _here.job = None

    def _execute(self, job: _Job, lane: Lane) -> None:
        result: object = None
        error: BaseException | None = None
        try:
            if job.token.reason == "deadline" or not _time_for(job):  # its time ran out as a worker took it
                raise _queue_timeout()
            job.token.check()  # its caller has gone while it waited: the worker is free at once
            job.started = True
            result = job.call()
        except NotSmall as failure:
            if lane == "main":  # cannot happen (require_small does not raise there); never queue it again
                error = failure
            else:
                with self._lock:
                    self._finish(job, lane)
                    job.small, job.started = False, False
                    # First in line: it was let in before those waiting now.
                    error = self._admit(job, first=True)
                    self._dispatch()
                if error is None:
                    return
                _settle(job, None, error)
                return
        except BaseException as failure:
            error = failure
        # The worker is free before the caller hears back: its next request finds it free.
        with self._lock:
            self._finish(job, lane)
            self._dispatch()
        _settle(job, result, error)


def _time_for(job: _Job) -> bool:
    """Whether the job has its reserve left of its time budget, to begin."""
    left = job.token.remaining()
    return left is None or left > job.reserve_s


def _queue_timeout() -> ServiceError:
    return ServiceError(ErrorCode.QUEUE_TIMEOUT, "The request waited for a worker for its whole time budget and did "
                        "not start. Retry in a moment.", headers={"Retry-After": str(BUSY_RETRY_AFTER_S)})


def _stopped(stopped: Cancelled) -> ServiceError:
    """The answer to a check stopped at a checkpoint: its time budget was spent (504), or its caller went (499,
    which no one receives)."""
    if stopped.reason == "deadline":
        return ServiceError(ErrorCode.TIME_BUDGET_EXCEEDED, "The request did not finish within its time budget and was "
                            "stopped; send less work, or ask the operator for a larger --time-budget.")
    return ServiceError(ErrorCode.CLIENT_CLOSED_REQUEST, "The client closed the connection.")


def _settle(job: _Job, result: object, error: BaseException | None) -> None:
    def resolve() -> None:
        if job.future.done():  # the request was cancelled meanwhile
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop is closed: no one is waiting
        job.loop.call_soon_threadsafe(resolve)


class RefusalPace:
    """Refusals under load (503 `busy`, 429 `rate_limited`) sent at most `rate` a second over the whole service, in
    the order they were decided.

    Why: a client that sends a refused request again at once (or gives up on it and sends its next one at once)
    is answered, and sends again, as fast as the event loop can go, and the loop holds the GIL that the checks
    need. A cheaper refusal does not help: it is only sent again sooner (bench/service_load.py, an experiment:
    refusals at half the CPU came up to 1,174 a second instead of 708, and goodput at 64 clients was 0.69-0.93 of
    goodput at 16 from round to round). Paced at 60 a second, such clients cost the loop at most that, and goodput
    at 64 clients was 0.96-0.97 of goodput at 16 (0.92-0.95 at 100 a second). A refusal still waits for no worker:
    its body is read and dropped at once, and it is sent when its turn comes, which below `rate` refusals a second
    is at once. One whose turn would come later than its Retry-After is sent at Retry-After, outside the pace, so
    that no refusal waits longer than it says to wait. rate 0: no pacing. Used on the event loop only, so it needs
    no lock."""

    def __init__(self, rate: float, *, max_wait_s: float = BUSY_RETRY_AFTER_S) -> None:
        if rate < 0 or max_wait_s < 0:
            raise ValueError("the refusal rate and the longest wait must be at least 0")
        self.interval = 1 / rate if rate else 0.0
        self.max_wait_s = max_wait_s
        self._next = -math.inf
        """When the next refusal in the pace may be sent, on the event loop's clock."""

    def wait(self, now: float) -> float:
        """Seconds the refusal decided at `now` waits before it is sent; it takes its turn in the pace."""
        if not self.interval:
            return 0.0
        turn = max(now, self._next)
        if turn - now > self.max_wait_s:  # the pace is more than max_wait_s behind: this one goes outside it
            return self.max_wait_s
        self._next = turn + self.interval
        return turn - now

    async def turn(self) -> None:
        """Wait for this refusal's turn (`wait`), on the running event loop."""
        if wait := self.wait(asyncio.get_running_loop().time()):
            await asyncio.sleep(wait)


async def refuse_when_full(app: ASGIApp, scope: Scope, receive: Receive, send: Send, *, pool: WorkerPool,
                           small: bool, pace: RefusalPace) -> None:
    """503 `busy`, without waiting for a worker, for a check the pool cannot take, before the route parses and
    validates its body; else `app` (the route) runs. Every route declared on the pool does this first
    (routing.on_the_pool); `small`: whether the route's checks may be small.

    Under overload, clients that send a refused request again at once keep the event loop busy with refusals, and
    the loop shares the GIL with the checks. On the route's way to a refusal (dependencies, the JSON body parsed and
    validated) a refusal cost the loop 0.4 ms of CPU with a 3 KB body and about 1 ms with a 400 KB one; deciding from
    the pool alone, once the request is routed, costs 0.2-0.3 ms whatever the body (bench figures in docs/service.md).
    It reads the body (guarded by BodySizeLimit, a middleware outside the routes) so that the connection stays
    usable, and sends the pool's own 503. So with the pool full, a body that is malformed or over a work limit is
    answered `busy` too: the retry gets the 4xx. A request with a missing or wrong key is left to the route, which
    answers 401 (and counts it against the rate limit); a busy refusal here is not counted against the caller's rate
    limit. Metrics, tracing and the security headers, all outside, see it as they see any response; like every busy
    refusal, it writes no log row (failures.py). It is sent when `pace` says (RefusalPace)."""
    caller = await _caller_scope(scope) if pool.must_wait(small=small) else None
    if caller is None or not pool.full(small=small, scope=caller):
        await app(scope, receive, send)
        return
    try:
        more = True
        while more:
            message = await receive()
            more = message["type"] == "http.request" and bool(message.get("more_body", False))
        refused = pool.refusal(small=small, scope=caller)
    except ServiceError as error:  # the body was too large, or too slow (BodySizeLimit): not paced
        refused = error
    else:
        await pace.turn()
    await error_response(refused.code, refused.message, refused.details, headers=refused.headers)(
        scope, receive, send)


async def _caller_scope(scope: Scope) -> str | None:
    """The permission scope of the request's key (`resolved_caller`: resolved once per request); None for a missing
    or wrong key (the route answers 401)."""
    try:
        return (await resolved_caller(Request(scope))).scope
    except ServiceError:
        return None
