"""Work that stops when its caller goes, and a time budget for every route that runs on the worker pool.

Without this a check, an eval-loop call or a generation ran to its end after its client had gone (six /v1/eval/report
calls abandoned after 1 s kept two cores busy for about 190 s), and a call took as long as its work did (285 s for
GET /v1/eval over a 950k-character corpus). `cancel_when_gone`, which every route declared on the pool runs
(routing.on_the_pool), gives each request a `core.cancel.CancelToken` whose deadline is the route's time budget from
the request's arrival (`ServiceSettings.time_budget_s`, `serve --time-budget`); the pool runs the check under it (the
token travels in the request's context to the worker thread), and the check's boundaries (a plan, a batch of embedded windows, a generation
attempt, an LLM call) stop it once the client has disconnected or the budget is spent. A disconnect is seen by
waiting for the next ASGI message once the body is read: uvicorn sends `http.disconnect` when the connection closes.

What the caller gets, at the deadline whatever the check is doing (workers.WorkerPool, issue 58; sent the event
loop's lag before it, looplag.py, so that it arrives by it): a check still waiting for a worker 503 `queue_timeout`
(no log row, as for `busy`); a check running 504 `time_budget_exceeded` (an error row, no result), while the check
stops at its next checkpoint (its long steps check the token: core.cancel); the eval routes stop their evidence checks
a reserve before the deadline and answer with what they finished (`meta.evidence` counts what the time left out), and
are begun only with that reserve left (else 503 `queue_timeout`). The deadline counts from the request's first byte
where the server notes it (ARRIVED). A request whose
client has gone is answered 499 `client_closed_request`, which no client receives, so that /metrics counts it as a
4xx rather than as the 500 a response never sent would be counted as; it writes no log row.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groundwire.core.cancel import CancelToken, cancellable
from groundwire.foundation.errors import ErrorCode
from groundwire.service.errors import error_response

ARRIVED = "groundwire.arrived"
"""The scope's key for when the request's first byte arrived (time.monotonic()), where the server notes it
(headertimeout.py, under `groundwire serve`); the time budget counts from it, else from when the request is routed."""
_BODILESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
"""Methods whose routes read no body: the disconnect watch starts at once."""


async def cancel_when_gone(app: ASGIApp, scope: Scope, receive: Receive, send: Send, *, budget_s: float) -> None:
    """Run `app` for one request of a route on the pool (routing.ServiceRoute) under a CancelToken with a deadline
    `budget_s` after arrival (its first byte: ARRIVED), that the request's work runs under, cancelled (and the route's task with it) when the
    client disconnects before the response has started."""
    arrived = scope.get(ARRIVED)  # under load the loop may route a request a while after it came
    token = CancelToken(arrived + budget_s) if isinstance(arrived, float) else CancelToken.after(budget_s)
    responded = gone = False
    ahead: asyncio.Queue[Message] = asyncio.Queue()
    """Messages the watch has read for the app: a bodiless request's empty body, and the disconnect."""
    ended: Message | None = None
    watcher: asyncio.Task[None] | None = None

    async def watch(*, body_ahead: bool) -> None:
        """Wait for the client to go, once the body is read (`body_ahead`: read its first message for the app)."""
        nonlocal gone, ended
        while True:
            message = await receive()
            ahead.put_nowait(message)
            if message["type"] == "http.disconnect":
                ended = message
                if not responded:  # uvicorn says disconnect after a response too: not a caller that left
                    gone = True
                    token.cancel()
                    work.cancel()
                return
            if body_ahead and message.get("more_body", False):
                return  # a body after all: the app reads it, and the watch starts again after it
            body_ahead = False

    def start_watch(*, body_ahead: bool = False) -> None:
        nonlocal watcher
        watcher = asyncio.ensure_future(watch(body_ahead=body_ahead))

    async def receiving() -> Message:
        if not ahead.empty():
            return ahead.get_nowait()
        if ended is not None:
            return ended
        if watcher is not None and not watcher.done():
            return await ahead.get()
        message = await receive()
        if message["type"] == "http.request" and not message.get("more_body", False):
            start_watch()
        return message

    async def sending(message: Message) -> None:
        nonlocal responded
        responded = responded or message["type"] == "http.response.start"
        await send(message)

    with cancellable(token):  # the task copies the context, token included, and the pool's job copies it again
        work = asyncio.ensure_future(app(scope, receiving, sending))
    if scope.get("method") in _BODILESS:  # routes that read no body: the watch reads the empty one for them
        start_watch(body_ahead=True)
    try:
        await work
    except asyncio.CancelledError:
        if not gone:
            raise
        await error_response(ErrorCode.CLIENT_CLOSED_REQUEST, "The client closed the connection.")(
            scope, receive, send)  # sent to no one (uvicorn drops it): for /metrics
    finally:
        if watcher is not None and not watcher.done():
            watcher.cancel()
