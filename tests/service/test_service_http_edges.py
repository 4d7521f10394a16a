"""The HTTP edges an outside probe found (issue 58 item 3): a body on a route that takes none, HEAD wherever GET
answers, and the page's icon, whose requests are not rows of the request log."""

from __future__ import annotations

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")


def _logged_routes(client) -> list[str]:
    rows = client.get("/v1/requests", headers=ALPHA).json()["requests"]
    return [row.get("http_route", row.get("endpoint", "")) for row in rows]


@pytest.mark.parametrize("body", [
    b'{"limit": 5}', b'{"x": 1}', b"[]", b"null", b"0", b'""', b"garbage", b"{", b"\xff\xfe", b" ",
    b'{"scope": "beta"}',
])
def test_recording_an_eval_run_refuses_a_body(client, body: bytes) -> None:
    response = client.post("/v1/eval/runs", content=body, headers={**ALPHA, "Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "POST /v1/eval/runs takes no body" in error["message"] and "`limit`" in error["message"]


@pytest.mark.parametrize("body", [None, b"", b"{}", b"{ }\n"])
def test_recording_an_eval_run_takes_no_body_or_an_empty_object(client, body: bytes | None) -> None:
    response = client.post("/v1/eval/runs?limit=5", content=body, headers=ALPHA)
    assert response.status_code == 200, response.text
    assert "metrics" in response.json()


def test_a_key_is_checked_before_the_body(client) -> None:
    response = client.post("/v1/eval/runs", content=b"garbage")
    assert response.status_code == 401, response.text


GET_PATHS = ["/", "/healthz", "/favicon.ico", "/static/app.js", "/openapi.json", "/docs", "/metrics",
             "/v1/requests", "/v1/review", "/v1/eval?limit=5", "/v1/eval/report?limit=5"]


@pytest.mark.parametrize("path", GET_PATHS)
def test_head_answers_wherever_get_does_with_its_headers_and_no_body(client, path: str) -> None:
    got = client.get(path, headers=ALPHA)
    head = client.head(path, headers=ALPHA)
    assert got.status_code == 200, got.text
    assert head.status_code == 200, head.text
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    if path not in ("/metrics", "/v1/eval?limit=5", "/v1/eval/report?limit=5", "/v1/requests", "/v1/review"):
        # a page or a file: the same bytes each time, so the same length (the others change between two calls)
        assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["content-security-policy"] == got.headers["content-security-policy"]


def test_head_keeps_the_errors_of_get(client) -> None:
    assert client.head("/v1/requests").status_code == 401  # no key
    missing = client.head("/v1/requests/nope", headers=ALPHA)
    assert missing.status_code == 404 and missing.content == b""
    post_only = client.head("/v1/verify", headers=ALPHA)
    assert post_only.status_code == 405 and post_only.headers["allow"] == "POST"
    assert "GET /v1/requests/nope" in _logged_routes(client)  # logged as the GET it answered


def test_the_page_has_an_icon(client) -> None:
    page = client.get("/").text
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    for path in ("/favicon.ico", "/static/favicon.svg"):
        icon = client.get(path)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.content.startswith(b"<svg")


@pytest.mark.parametrize("keys", ["keys", "open access"])
def test_page_assets_are_not_rows_of_the_request_log(settings, keys: str) -> None:
    """A browser opening the page asks for icons the service may not have; those 404s (and any GET or HEAD outside
    /v1/ that finds nothing) write no row, while a 404 of the API still does. Without keys (open access, as a local
    service runs) every request is the default scope's, so a browser's would be logged."""
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from groundwire.service import create_app

    headers = ALPHA if keys == "keys" else {}
    app = create_app(settings if keys == "keys" else replace(settings, api_keys={}))
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in ("/favicon.ico", "/apple-touch-icon.png", "/apple-touch-icon-precomposed.png", "/robots.txt",
                     "/static/missing.js", "/wp-admin/"):
            for method in ("GET", "HEAD"):
                response = client.request(method, path, headers=headers)
                assert response.status_code in (200, 404), (path, response.status_code)
        assert client.post("/favicon.ico", headers=headers).status_code == 405
        assert client.get("/v1/no-such-route", headers=headers).status_code == 404
        rows = client.get("/v1/requests", headers=headers).json()["requests"]
        assert [row.get("http_route") for row in rows] == ["GET /v1/no-such-route", "POST /favicon.ico"]


def test_head_over_a_socket_keeps_the_connection_usable(tmp_path) -> None:
    """uvicorn sends no body to a HEAD, and the next request on the same connection is answered as usual."""
    import httpx
    from live_server import LiveServer

    with LiveServer(tmp_path, api_keys={"key-alpha": "alpha"}) as live, httpx.Client(base_url=live.url) as http:
        for path in ("/", "/favicon.ico", "/v1/requests", "/healthz"):
            head = http.head(path, headers=ALPHA)
            assert head.status_code == 200 and head.content == b"", path
            assert http.get(path, headers=ALPHA).status_code == 200, path
