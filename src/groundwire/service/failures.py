"""Failed requests (4xx and 5xx) in the request log: status, route and error, in the caller's scope.

A row of kind "error" has no report; the eval loop leaves such rows out and the history shows the error.
A check (verify, repair) that fails after its input was accepted, for a cause that says nothing against that input
(REVIEWABLE: its time budget ran out, the LLM endpoint failed, an error of the service's own), is logged with its
question, answer, task and context as well, redacted as every row is: its answer was never routed, so it goes to the
review queue, and a reviewer's verdict labels it as any other (`groundwire adapt --from-log` reads it). Any other
failure is logged without its input: the input was refused (invalid, another scope's documents, over the work
limits: text the service did not take), and a key is never stored.
Not logged: a GET or HEAD outside the API (/v1/) that finds nothing (404: a browser's /favicon.ico or
/apple-touch-icon.png, a missing /static file, a scanner's guess), which says nothing about the caller's requests;
a request whose key is missing or wrong (no scope may read it; uvicorn's access log has it), and the
refusals of a loaded service, 429 `rate_limited`, 503 `busy` and 503 `queue_timeout`: they must cost no writes (and no thread), so that
a flood of them cannot add to the load that caused them; and a request whose client went away before its answer
(499 `client_closed_request`, service/cancellation.py), which no one reads.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groundwire.data.store import ERROR_KIND, RequestRecord
from groundwire.foundation.errors import ErrorCode
from groundwire.foundation.types import Chunk
from groundwire.redact import redact, redact_data
from groundwire.service import models
from groundwire.service.auth import resolved_caller
from groundwire.service.errors import ServiceError

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.service.runtime import Runtime

log = logging.getLogger("groundwire.service")
_KEPT_BODY_BYTES = 8_192
"""Enough for the JSON error shape; a longer body is cut (its message is then not read)."""
_NOT_LOGGED = frozenset({ErrorCode.RATE_LIMITED.value, ErrorCode.BUSY.value, ErrorCode.QUEUE_TIMEOUT.value,
                         ErrorCode.CLIENT_CLOSED_REQUEST.value})
REVIEWABLE = frozenset({ErrorCode.TIME_BUDGET_EXCEEDED.value, ErrorCode.LLM_UNAVAILABLE.value,
                        ErrorCode.INTERNAL_ERROR.value})
"""Failures of an accepted check whose input is logged for review: none of them is the input's fault."""
_ACCEPTED = "groundwire_accepted_check"
"""Where `accept` leaves the check's body: the request's state (its ASGI scope's "state"), which this middleware,
outside the route, reads when the request fails."""


@dataclass(frozen=True, slots=True)
class Accepted:
    endpoint: str
    body: models.VerifyRequest
    sent: list[Chunk] | None
    """The chunks the body sent, as the route converted them; None: it names ingested documents."""


def accept(request: Request, endpoint: str, body: models.VerifyRequest, sent: list[Chunk] | None) -> None:
    """Mark the check's body as accepted (parsed and validated; `sent`: its chunks as the route converted them):
    should the request then fail for a REVIEWABLE cause, its input is logged with the error. The check's route calls
    this first."""
    setattr(request.state, _ACCEPTED, Accepted(endpoint, body, sent))


class FailureLog:
    def __init__(self, app: ASGIApp, *, runtime: Runtime) -> None:
        self.app = app
        self.runtime = runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0
        body = bytearray()

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and status >= 400 and len(body) < _KEPT_BODY_BYTES:
                body.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, watching_send)
        except Exception:
            await self._log(scope, 500, {"code": ErrorCode.INTERNAL_ERROR.value, "message": "unhandled error"}, started)
            raise
        if status >= 400 and not _missing_page_asset(scope, status):
            error = _error(bytes(body))
            if error["code"] not in _NOT_LOGGED:
                await self._log(scope, status, error, started)

    async def _log(self, scope: Scope, status: int, error: dict[str, Any], started: float) -> None:
        try:
            caller_scope = (await resolved_caller(Request(scope))).scope  # as the route resolved it, if it ran
        except ServiceError:
            return  # no scope may see it
        accepted = scope.get("state", {}).get(_ACCEPTED) if error["code"] in REVIEWABLE else None
        try:
            await run_in_threadpool(self._write, caller_scope, scope, status, error, started, accepted)
        except Exception:  # the response is already sent: a failed log write must not turn into another error
            log.exception("could not log a failed request")

    def _write(self, caller_scope: str, scope: Scope, status: int, error: dict[str, Any], started: float,
               accepted: Accepted | None) -> None:
        route = f"{scope.get('method', '')} {scope.get('path', '')}"
        record = RequestRecord(
            id=uuid.uuid4().hex, scope=caller_scope, kind=ERROR_KIND, response="", context="",
            latency_ms=(time.perf_counter() - started) * 1000.0, release=self.runtime.settings.release,
            extra={"status": status, "route": route, "error": error},
        )
        if accepted is not None:
            record = self._with_input(record, accepted)
        # Redacted whole, the route too: a key in a path, a question, an answer or a chunk is not stored.
        self.runtime.store.log_request(redact_data(record))

    def _with_input(self, record: RequestRecord, accepted: Accepted) -> RequestRecord:
        """The failed check's question, answer, task and context (its chunks as a response lists them, which
        `data.labelled` reads back), so that a reviewer can label it."""
        body = accepted.body
        try:
            chunks, context = self.runtime.chunks_of(body, accepted.sent, scope=record.scope)
        except ServiceError:  # its documents are gone since: nothing to label it against
            return record
        return replace(record, query=body.question, response=body.answer, context=context, extra={
            **record.extra, "endpoint": accepted.endpoint, **({"task": body.task} if body.task else {}),
            "chunks": [{"id": c.id, "text": c.text, "doc_id": c.doc_id, "page": c.page} for c in chunks]})


API_PREFIX = "/v1/"


def _missing_page_asset(scope: Scope, status: int) -> bool:
    """A 404 for a GET or HEAD outside the API: what a browser asks for beside a page (icons), or a guess."""
    path: str = scope.get("path", "")
    return status == 404 and scope.get("method") in ("GET", "HEAD") and not path.startswith(API_PREFIX)


def _error(body: bytes) -> dict[str, Any]:
    """The code and message of the service's JSON error shape, or what can be said without it."""
    try:
        sent = json.loads(body)["error"]
        return {"code": str(sent["code"]), "message": str(sent["message"])}
    except (ValueError, KeyError, TypeError):  # redacted before it is cut, so that no part of a key is left
        return {"code": "unknown", "message": redact(body.decode("utf-8", "replace"))[:200]}
