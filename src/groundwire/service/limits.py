"""Request size limit, enforced before the body is parsed.

A declared Content-Length over the limit is refused at once; a chunked body is counted
as it streams and refused the moment it crosses the limit. Either way: 413 with the
service's JSON error shape.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groundwire.service.errors import ServiceError, error_body


def too_large(max_bytes: int) -> ServiceError:
    return ServiceError(413, "payload_too_large",
                        f"The request body is larger than the limit of {max_bytes} bytes.",
                        details={"max_bytes": max_bytes})


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return

        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Raised inside the app's body read; the app's error handlers render it as 413.
                    raise too_large(self.max_bytes)
            return message

        await self.app(scope, counting_receive, send)

    async def _refuse(self, send: Send) -> None:
        exc = too_large(self.max_bytes)
        body = json.dumps(error_body(exc.status, exc.code, exc.message, exc.details)).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            text: Any = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None
