"""Issue 47, item 4: every 4xx the server writes itself is the service's JSON error shape, also the 400s of its h11
protocol for requests that are not valid HTTP/1.1 (uvicorn's own answer to those is plain text). Raw sockets, on a
real `groundwire serve` on loopback."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator

import httpx
import pytest
from live_server import LiveServer
from service_common import ALPHA, KEYS

pytest.importorskip("fastapi")

AUTH = b"Authorization: Bearer key-alpha\r\n"
MALFORMED = {
    "garbage request line": b"\x16\x03\x01 hello there\r\n\r\n",
    "no HTTP version": b"GET /healthz\r\nHost: x\r\n\r\n",
    "header without a colon": b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
    "non-numeric Content-Length": b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n{}",
    "two Content-Lengths": b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "negative Content-Length": b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "unsupported Transfer-Encoding": b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
    "invalid chunk size": (b"POST /v1/verify HTTP/1.1\r\nHost: x\r\n" + AUTH
                           + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
    "chunk longer than its size": (b"POST /v1/verify HTTP/1.1\r\nHost: x\r\n" + AUTH
                                   + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   + b"2\r\n{}}}}}\r\n0\r\n\r\n"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("malformed"), api_keys=KEYS) as live:
        yield live


def _exchange(port: int, request: bytes) -> bytes:
    """Send `request` whole and read until the server closes the connection."""
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
    return data


@pytest.mark.parametrize("what", list(MALFORMED))
def test_a_request_that_is_not_valid_http_gets_a_json_400_and_a_closed_connection(server: LiveServer,
                                                                                   what: str) -> None:
    answer = _exchange(server.port, MALFORMED[what])  # returns only once the server closes: it does
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), (what, answer[:300])
    assert b"content-type: application/json" in head.lower(), (what, head)
    error = json.loads(body)["error"]
    assert error["code"] == "malformed_request" and error["status"] == 400, (what, error)
    assert "connection: close" in head.decode().lower(), (what, head)


def test_the_server_goes_on_serving_after_malformed_requests(server: LiveServer) -> None:
    for request in MALFORMED.values():
        _exchange(server.port, request)
    assert httpx.get(f"{server.url}/v1/requests", headers=ALPHA).status_code == 200
    # A well-formed request on a raw socket still gets its ordinary answer (a JSON 404 here).
    answer = _exchange(server.port, b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404 ") and json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] \
        == "not_found", answer[:300]
