"""Limits on a request's headers, which uvicorn does not have: a deadline, and a size.

uvicorn's `timeout_keep_alive` runs only between requests and is reset by every byte received, and it is not armed
on a connection that has sent nothing yet; ASGI middleware runs only once the headers are parsed. So a client that
opens a connection and never finishes its headers (slowloris) holds it for as long as it likes. This protocol, a
subclass of uvicorn's h11 protocol passed to uvicorn as `http=`, closes such a connection `timeout_s` after it was
opened (or after the previous response on it completed), with a 408 in the service's JSON error shape. Once the
headers are in, the deadline is off: the body has its own (`BodySizeLimit`), and a slow response is never cut.

h11 bounds a request's head only while it is incomplete (`h11_max_incomplete_event_size`): a head that arrives
whole in one read, 100 KB or more, is parsed and handed to the app. This protocol measures the head before h11
parses it, whole or not, and answers one over `max_bytes` with 431 in the same JSON shape. A request h11 cannot
parse gets 400 `malformed_request` in that shape too, not uvicorn's plain text.

It also notes when each request's first byte arrived (the scope's ARRIVED), which the time budget counts from.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from groundwire.foundation.errors import ErrorCode
from groundwire.service.cancellation import ARRIVED
from groundwire.service.errors import error_body
from groundwire.service.http_status import HTTP_STATUS

_HEAD_END = re.compile(rb"\n\r?\n")
"""The blank line that ends a request's head (h11 takes a bare LF as a line end too)."""
_LINGER_S = 2.0
"""How long a refused connection is drained before it is closed, if the client does not close it first."""


def header_limits_protocol(timeout_s: float, max_bytes: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a `timeout_s` deadline on each request's headers and a `max_bytes` bound on the
    request line and headers together."""
    if timeout_s <= 0 or max_bytes <= 0:
        raise ValueError("the header timeout and the header size limit must be positive")

    class HeaderLimitsProtocol(H11Protocol):
        _header_deadline: asyncio.TimerHandle | None = None
        _refused = False
        _arrived: float | None = None
        """When the first byte of the request being read arrived (time.monotonic())."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._refused:  # what a refused client still sends is read and dropped (see _refuse_head)
                return
            if self._arrived is None and self.conn.their_state is h11.IDLE:
                self._arrived = time.monotonic()
            super().data_received(data)
            if not self._awaiting_headers():
                self._disarm()

        def handle_events(self) -> None:
            # Runs on new data and after each response (a pipelined request may already be buffered), before h11
            # parses: a head over the limit never reaches h11 or the app.
            if self.conn.their_state is h11.IDLE and _head_too_large(self.conn.trailing_data[0], max_bytes):
                self._refuse_head()
                return
            before = getattr(self, "scope", None)
            super().handle_events()
            if getattr(self, "scope", None) is not before and self._arrived is not None:
                # A request was handed to the app: its time budget counts from its first byte (cancellation.py),
                # not from when the loop, under load, got round to routing it.
                self.scope[ARRIVED] = self._arrived  # type: ignore[literal-required]
                self._arrived = None

        def send_400_response(self, msg: str) -> None:
            # h11 could not parse the request (a garbage request line, a bad Content-Length or Transfer-Encoding,
            # invalid chunking): uvicorn's own answer is plain text; this one is the service's JSON error shape.
            # Written whole, outside h11 (whose state is now ERROR), unless a response has already begun.
            self._disarm()
            if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                self.transport.write(_refusal(ErrorCode.MALFORMED_REQUEST,
                                              "The request is not valid HTTP/1.1 and cannot be read; the connection "
                                              "is closed.", None))
            self.transport.close()

        def on_response_complete(self) -> None:
            # A pipelined request already read arrived no later than now.
            self._arrived = time.monotonic() if self.conn.trailing_data[0] else None
            super().on_response_complete()
            if self._awaiting_headers():  # the next request on this connection gets its own deadline
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _awaiting_headers(self) -> bool:
            return self.conn.their_state is h11.IDLE and not self.transport.is_closing() and not self._refused

        def _arm(self) -> None:
            self._disarm()
            self._header_deadline = self.loop.call_later(timeout_s, self._headers_timed_out)

        def _disarm(self) -> None:
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _headers_timed_out(self) -> None:
            self._header_deadline = None
            if not self._awaiting_headers():
                return
            if self.conn.our_state is h11.IDLE:  # nothing sent on this request yet: say why before closing
                self.transport.write(_refusal(ErrorCode.HEADER_TIMEOUT,
                                              f"The request headers did not arrive within {timeout_s:g} s.",
                                              {"header_timeout_s": timeout_s}))
            self.transport.close()

        def _refuse_head(self) -> None:
            self._disarm()
            self._refused = True
            self.transport.write(_refusal(ErrorCode.HEADERS_TOO_LARGE,
                                          f"The request line and headers are larger than the limit of {max_bytes} "
                                          "bytes.", {"max_header_bytes": max_bytes}))
            if not self.transport.can_write_eof():
                self.transport.close()
                return
            # Closing with the client's bytes unread would reset the connection, and the client could lose the 431
            # before reading it (RFC 9112, 9.6): half-close, drop what still comes, close once the client does
            # (uvicorn's eof_received) or after _LINGER_S.
            self.transport.write_eof()
            self.loop.call_later(_LINGER_S, self.transport.close)

    return HeaderLimitsProtocol


def _head_too_large(buffered: bytes, max_bytes: int) -> bool:
    """Whether the request head at the start of `buffered` (h11's unparsed bytes) is over `max_bytes`: more than
    that is buffered and the head does not end within it."""
    return len(buffered) > max_bytes and _HEAD_END.search(buffered, 0, max_bytes) is None


def _refusal(code: ErrorCode, message: str, details: dict[str, Any] | None) -> bytes:
    """A whole HTTP response with the service's JSON error, sent before h11 has a request to answer."""
    body = json.dumps(error_body(code, message, details)).encode()
    status = HTTP_STATUS[code]
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode()
    return head + body
