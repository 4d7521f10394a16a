"""A deadline for a request's headers, which uvicorn does not have.

uvicorn's `timeout_keep_alive` runs only between requests and is reset by every byte received, and it is not armed
on a connection that has sent nothing yet; ASGI middleware runs only once the headers are parsed. So a client that
opens a connection and never finishes its headers (slowloris) holds it for as long as it likes. This protocol, a
subclass of uvicorn's h11 protocol passed to uvicorn as `http=`, closes such a connection `timeout_s` after it was
opened (or after the previous response on it completed), with a 408 in the service's JSON error shape. Once the
headers are in, the deadline is off: the body has its own (`BodySizeLimit`), and a slow response is never cut.
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from groundwire.core.errors import ErrorCode
from groundwire.service.errors import error_body


def header_timeout_protocol(timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a `timeout_s` deadline on each request's headers."""
    if timeout_s <= 0:
        raise ValueError("the header timeout must be positive")

    class HeaderTimeoutProtocol(H11Protocol):
        _header_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._awaiting_headers():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._awaiting_headers():  # the next request on this connection gets its own deadline
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _awaiting_headers(self) -> bool:
            return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

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
                self.transport.write(_timed_out_response(timeout_s))
            self.transport.close()

    return HeaderTimeoutProtocol


def _timed_out_response(timeout_s: float) -> bytes:
    body = json.dumps(error_body(ErrorCode.HEADER_TIMEOUT, f"The request headers did not arrive within {timeout_s:g} s.",
                                 {"header_timeout_s": timeout_s})).encode()
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode()
    return head + body
