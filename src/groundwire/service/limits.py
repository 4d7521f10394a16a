"""Request size limits: the body's bytes, enforced before it is parsed, and the work it asks for.

A declared Content-Length over the limit is refused at once; a chunked body is counted
as it streams and refused the moment it crosses the limit. Either way: 413 with the
service's JSON error shape. A body with a Content-Encoding (gzip, ...) is refused with 415: the service does not
decode one. `enforce_work_limits` then bounds what a parsed request costs (chunks, answer and context characters), with a
413 that names the limit, before any model runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groundwire.core.claims import SENTENCES_PER_CLAIM
from groundwire.foundation.errors import ErrorCode
from groundwire.service.errors import ServiceError, error_body, error_response

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.core.plan import Plan
    from groundwire.service.settings import ServiceSettings


def too_large(max_bytes: int) -> ServiceError:
    return ServiceError(ErrorCode.PAYLOAD_TOO_LARGE,
                        f"The request body is larger than the limit of {max_bytes} bytes.",
                        details={"max_bytes": max_bytes})


def body_timed_out(timeout_s: float) -> ServiceError:
    return ServiceError(ErrorCode.BODY_TIMEOUT, f"The request body did not arrive within {timeout_s:g} s.",
                        details={"body_timeout_s": timeout_s}, headers={"Connection": "close"})


class BodySizeLimit:
    """The body's size limit, and its time limit: a client that sends less than its Content-Length (or stalls a
    chunked body) gets 408 and the connection is closed once `timeout_s` has passed since the body was first
    awaited; uvicorn's own timeouts only cover idle keep-alive connections."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, timeout_s: float = 30.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return

        seen = 0
        deadline: float | None = None
        complete = False

        async def guarded_receive() -> Message:
            nonlocal seen, deadline, complete
            if complete:  # after the body, receive() only waits for a disconnect: no deadline
                return await receive()
            now = anyio.current_time()
            deadline = now + self.timeout_s if deadline is None else deadline
            try:
                with anyio.fail_after(max(deadline - now, 0.0)):
                    message = await receive()
            except TimeoutError:
                # Raised inside the app's body read; the app's error handlers render it as 408.
                raise body_timed_out(self.timeout_s) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if seen > self.max_bytes:
                    raise too_large(self.max_bytes)
            return message

        await self.app(scope, guarded_receive, send)

    async def _refuse(self, send: Send) -> None:
        exc = too_large(self.max_bytes)
        body = json.dumps(error_body(exc.code, exc.message, exc.details)).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]})
        await send({"type": "http.response.body", "body": body})


class RefuseContentEncoding:
    """415 `unsupported_content_encoding` for a request with a Content-Encoding other than identity.

    Starlette reads a body as it arrives and does not decode it, so a body marked gzip was parsed as plain JSON:
    one that is not gzip at all was accepted, one that is failed as malformed JSON. The service reads uncompressed
    bodies only, and says so (RFC 7694: Accept-Encoding on the 415). The body is not read: the connection closes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        codings = _content_codings(scope) if scope["type"] == "http" else []
        if not codings:
            await self.app(scope, receive, send)
            return
        response = error_response(
            ErrorCode.UNSUPPORTED_CONTENT_ENCODING,
            "The request body has a Content-Encoding the service does not decode; send it uncompressed, without "
            "Content-Encoding.",
            {"content_encoding": codings, "accepted": [_IDENTITY]},
            headers={"Accept-Encoding": _IDENTITY, "Connection": "close"})
        await response(scope, receive, send)


_IDENTITY = "identity"


def _content_codings(scope: Scope) -> list[str]:
    """The codings a request's Content-Encoding headers name, less identity (which is no coding)."""
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    values = (value.decode("latin-1") for name, value in headers if name == b"content-encoding")
    codings = (coding.strip().lower() for value in values for coding in value.split(","))
    return [coding for coding in codings if coding and coding != _IDENTITY]


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            text: Any = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


class HasText(Protocol):
    """A chunk as the limits read it: its text (a request's ChunkIn or a Chunk)."""

    @property
    def text(self) -> str: ...


def enforce_work_limits(settings: ServiceSettings, chunks: Sequence[HasText], answer: str | None) -> None:
    """413 naming the limit when a request asks for more work than the service allows per request.

    The cost of a check grows with claims x windows: the answer's length bounds the claims, the context's
    length bounds the windows. `enforce_plan_limits` then counts both exactly. Cheap (lengths only): the service runs it
    on a request's own chunks before queueing it for a worker, so that such a 413 comes at once."""
    _within_limits(settings, (
        ("max_chunks", len(chunks), "chunks"),
        ("max_text_chars", len(answer or ""), "characters of answer"),
        ("max_context_chars", text_chars(chunks), "characters of context"),
    ))


def text_chars(chunks: Sequence[HasText]) -> int:
    return sum(len(chunk.text) for chunk in chunks)


def enforce_plan_limits(settings: ServiceSettings, plan: Plan) -> None:
    """413 naming the limit when the answer has more claims, or claims x windows more pairs, than allowed: read
    from the request's plan (split and windowed, nothing scored), the plan `verify` then executes. Splitting
    stops at max_claims + 1 claims, so refusing a long answer costs little more than splitting its start.
    With a cascade, each later stage's plan is checked as well (`Runtime.plan`)."""
    work = plan.workload
    if not plan.complete:
        raise ServiceError(ErrorCode.TOO_MUCH_WORK,
                           f"The request has more than {settings.max_claims} claims, or more than "
                           f"{SENTENCES_PER_CLAIM} sentences per claim allowed ({work.claims} claims counted before "
                           f"splitting stopped); the limit (max_claims) is {settings.max_claims}.",
                           details={"limit": "max_claims", "max": settings.max_claims, "got": work.claims})
    _within_limits(settings, (
        ("max_claims", work.claims, "claims"),
        ("max_pairs", work.pairs, "(claim, window) pairs to score"),
    ))


class WorkBudget:
    """(claim, window) pairs that the checks a request makes beyond its own (repair's: each part of a claim it splits
    and each edit is checked against the whole context) may still score together: the check that would go past
    `allowed` gets 413 `too_much_work` before it is scored (`Runtime.plan`). `limit` names the setting, `why` says
    what the checks are."""

    def __init__(self, *, allowed: int, limit: str, why: str) -> None:
        self.allowed = allowed
        self.spent = 0
        self._limit = limit
        self._why = why

    def spend(self, pairs: int) -> None:
        if self.spent + pairs > self.allowed:
            raise ServiceError(ErrorCode.TOO_MUCH_WORK,
                               f"{self._why} would score more than {self.allowed} (claim, window) pairs; the limit "
                               f"is {self._limit}. Send less context, or fewer claims at once.",
                               details={"limit": self._limit, "max": self.allowed, "got": self.spent + pairs})
        self.spent += pairs


def _within_limits(settings: ServiceSettings, measured: Sequence[tuple[str, int, str]]) -> None:
    for name, got, what in measured:
        limit = getattr(settings, name)
        if got > limit:
            raise ServiceError(ErrorCode.TOO_MUCH_WORK, f"The request has {got} {what}; the limit ({name}) is {limit}.",
                               details={"limit": name, "max": limit, "got": got})


SECURITY_HEADERS = (
    # The page and its scripts come from this service only; no frame may embed it (clickjacking).
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                 b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """CSP (with frame-ancestors), X-Content-Type-Options and friends on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                # A page that sets its own policy (/docs allows its one inline script by hash) keeps it.
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)
