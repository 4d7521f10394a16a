"""HEAD wherever GET answers: the GET response's status and headers, without its body (RFC 9110 9.3.2).

FastAPI's routes answer only the methods they declare, so a HEAD on a GET route was a 405. This middleware, outside
the routes and the failure log, hands a HEAD request on as a GET and drops the body of the response; its headers,
Content-Length included, are the GET's. One place for every route (the API, the page, /docs, /metrics, /static),
rather than a second method on each route, which /openapi.json would list as an operation of its own.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # a streamed body's parts: dropped; its last message ends the response
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)
