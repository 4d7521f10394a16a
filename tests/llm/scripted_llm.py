"""A SCRIPTED OpenAI-compatible chat-completions server for tests. It is not a model.

Each test starts one on 127.0.0.1 with a free port, queues the replies it wants (in order), and then
reads back the requests it received. When the queue is empty, an optional `responder` callable builds
the reply from the request (useful when the order of calls is not fixed). With neither, the server
answers HTTP 418 "no reply scripted", which the client does not retry, so a missing script fails fast.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    logprobs: list[tuple[str, float]] | None = None
    """(token, logprob) pairs returned in the OpenAI logprobs shape."""
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    """Send this body verbatim instead of a chat-completion object."""
    model: str | None = None


Responder = Callable[[dict[str, Any]], "Reply | str"]


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.responder: Responder | None = None
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply | str) -> ScriptedLLMServer:
        with self._lock:
            self.replies.extend(_as_reply(reply) for reply in replies)
        return self

    def wait_for_requests(self, n: int, *, timeout_s: float = 10.0) -> int:
        """How many requests arrived, once `n` have or after `timeout_s`. A client that timed out has sent its
        request, but on a loaded machine the handler thread may not have read it yet."""
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.requests) >= n, timeout=timeout_s)
            return len(self.requests)

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return _as_reply(self.responder(request))
        return Reply(status=418, raw_body='{"error": "scripted server: no reply scripted"}')

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's naming
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                request["_path"] = self.path
                request["_authorization"] = self.headers.get("authorization")
                reply = server._next(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.raw_body if reply.raw_body is not None else json.dumps(_completion(reply, request))
                data = body.encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                # The client may have timed out and gone; that is what some tests want.
                if not self.wfile.closed:
                    self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def handle(self) -> None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    super().handle()

        return Handler


def _as_reply(reply: Reply | str) -> Reply:
    return Reply(content=reply) if isinstance(reply, str) else reply


def _completion(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.content},
        "finish_reason": "stop",
    }
    if reply.logprobs is not None:
        choice["logprobs"] = {
            "content": [{"token": token, "logprob": logprob, "top_logprobs": []} for token, logprob in reply.logprobs]
        }
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {
        "id": f"scripted-{len(reply.content)}",
        "object": "chat.completion",
        "model": reply.model or request.get("model", "scripted"),
        "choices": [choice],
        # Word counts stand in for token counts: the server is scripted, not a tokenizer.
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": len(reply.content.split()),
            "total_tokens": prompt_words + len(reply.content.split()),
        },
    }
