"""Hostile and careless requests against a live service (issue 20): every one answered in bounded time, none a 5xx.

    .venv/bin/python bench/hostile.py                         # lexical scorer
    .venv/bin/python bench/hostile.py --scorer default        # the bundled model
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/hostile.py   # another tree (its `groundwire serve`)

Starts `groundwire serve` (the tree on PYTHONPATH, a fresh SQLite log in a temporary directory, --body-timeout 5
and --header-timeout 5, half the 10 s that counts as a hang)
on a free port of 127.0.0.1 and measures, in order:
  1. cold start: seconds from launch until /healthz answers 200, then the first and second tiny /v1/verify;
  2. stall: two of the largest requests the default limits accept (max_claims claims, as many chunks as max_pairs
     allows), sent at once by two clients, so that both workers of a two-core machine are taken, and meanwhile a
     tiny request from a third client every 0.2 s: the slowest tiny response while both large ones run (issue 38's
     target: under 1 s), and while only one does;
  3. at least 150 hostile requests, one at a time: each pattern of issue 20 item 2 at five sizes up to the body
     limit, the long claim of item 1 on /v1/verify and /v1/repair, page 0 (item 7), slow headers and slow bodies
     (item 5), malformed JSON, wrong types, oversized fields and bodies, odd Content-Length and encodings, deep
     nesting, odd characters, unknown routes and methods, bad query parameters, long URLs and headers; and (issue
     38) bench/growth.py's context patterns (a 35-digit number, '1234567890 ', '[1][2][3]', ...) as chunks of 50k
     and 200k characters and as the whole 400k context, the same text ingested and verified by doc_ids, a repair of
     one claim that splits into 31 parts, and the eval loop's routes at ?limit=10000 over the log the other requests
     left.
It prints the counts of 2xx, 4xx (and apart, "plain 4xx": a 4xx whose body is not the JSON error shape), 5xx, hangs (no answer in 10 s) and connections closed without an answer, with
the slowest response of each class and the slowest refusal (4xx, or a close) of a request that was not slow on
purpose. Slow-header and slow-body requests are counted apart: they are answered when the server's timeout ends.
Nothing is asserted; the figures depend on the machine and its load. /v1/generate needs an LLM and is not sent.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from growth import CONTEXT_PATTERNS, PATTERNS
from request_cost import largest_accepted

HANG_S = 10.0
SIZES = (5_000, 20_000, 50_000, 80_000, 99_000)
CONTEXT_SIZES = (50_000, 200_000, 400_000)
"""Context sizes: a 50k chunk, the largest one text may be (200k), and the largest context (max_context_chars)."""
SHORT_ANSWER = "The order number is 12345 and the plan costs 19 dollars."
CHUNK = {"id": "S1", "text": "The plan costs 19 dollars. x is y. The routers ship with firmware 2.1."}
TINY = {"answer": "The plan costs 19 dollars.", "chunks": [CHUNK]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Outcome:
    name: str
    status: int | str  # an HTTP status, "hang" or "closed"
    seconds: float
    slow_on_purpose: bool = False

    @property
    def kind(self) -> str:
        if isinstance(self.status, str):
            return PLAIN_4XX if self.status.startswith("plain") else self.status
        return f"{self.status // 100}xx"


PLAIN_4XX = "plain 4xx"
"""A 4xx whose body is not the service's JSON error shape (docs/errors.md): the server must write none (issue 47)."""


def shaped(status: int, content_type: str, body: bytes) -> int | str:
    """`status`, or "plain <status>" for a 4xx that is not a JSON body of the shape {"error": {"code": ...}}."""
    if not 400 <= status < 500:
        return status
    try:
        error = json.loads(body)["error"]
        ok = "application/json" in content_type.lower() and isinstance(error["code"], str)
    except (ValueError, KeyError, TypeError):
        ok = False
    return status if ok else f"plain {status}"


# --- raw HTTP, for what a well-behaved client cannot send -----------------------------------------------------


def raw(port: int, chunks: list[bytes], *, pause_s: float = 0.0) -> tuple[int | str, float]:
    """Send `chunks` (pausing between them), then read until the server answers or closes; (status, seconds)."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_S) as sock:
        try:
            for i, chunk in enumerate(chunks):
                if i and pause_s:
                    time.sleep(pause_s)
                sock.sendall(chunk)
            data = sock.recv(65536)
        except TimeoutError:
            return "hang", time.perf_counter() - started
        except (ConnectionResetError, BrokenPipeError):
            return "closed", time.perf_counter() - started
        if data:
            data += _rest_of_response(sock, data)
    return parsed(data), time.perf_counter() - started


def parsed(data: bytes) -> int | str:
    """The status of the response in `data` (`shaped`), or "closed" when there is none."""
    head, _, content = data.partition(b"\r\n\r\n")
    try:
        status = int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return "closed"
    content_type = next((line.split(b":", 1)[1].decode("latin-1") for line in head.split(b"\r\n")
                         if line.lower().startswith(b"content-type:")), "")
    return shaped(status, content_type, content)


def _rest_of_response(sock: socket.socket, data: bytes) -> bytes:
    """What is left of a response whose first bytes are `data`: up to its Content-Length, or until the server
    closes (or HANG_S passes)."""
    head, _, content = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), None)
    rest = b""
    try:
        while length is None or len(content) + len(rest) < length:
            more = sock.recv(65536)
            if not more:
                break
            rest += more
    except (TimeoutError, ConnectionResetError):
        pass
    return rest


def slow_headers(port: int, *, trickle: bool) -> tuple[int | str, float]:
    """Headers that never finish: sent at once and left open, or trickled a byte every 0.5 s."""
    head = b"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: "
    if not trickle:
        return raw(port, [head])
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_S) as sock:
        sock.settimeout(0.5)
        sock.sendall(head)
        while time.perf_counter() - started < HANG_S:
            try:
                data = sock.recv(65536)
                status = parsed(data + _rest_of_response(sock, data)) if data else "closed"
                return status, time.perf_counter() - started
            except TimeoutError:
                try:
                    sock.sendall(b"a")
                except OSError:
                    return "closed", time.perf_counter() - started
            except (ConnectionResetError, IndexError, ValueError):
                return "closed", time.perf_counter() - started
    return "hang", time.perf_counter() - started


# --- the requests ---------------------------------------------------------------------------------------------


# The pathological inputs are bench/growth.py's, sent at the largest size the body limit allows.


def hostile_requests(port: int) -> list[tuple[str, Callable[[], tuple[int | str, float]], bool]]:
    import httpx

    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=HANG_S)

    def send(method: str, path: str, **kwargs: object) -> Callable[[], tuple[int | str, float]]:
        def go() -> tuple[int | str, float]:
            started = time.perf_counter()
            try:
                response = client.request(method, path, **kwargs)  # type: ignore[arg-type]
                status = response.status_code if method == "HEAD" else shaped(  # an answer to HEAD has no body
                    response.status_code, response.headers.get("content-type", ""), response.content)
                return status, time.perf_counter() - started
            except httpx.TimeoutException:
                return "hang", time.perf_counter() - started
            except (httpx.RemoteProtocolError, httpx.ConnectError, httpx.ReadError, httpx.WriteError):
                return "closed", time.perf_counter() - started

        return go

    def verify(answer: str, chunks: list[dict] | None = None, path: str = "/v1/verify") -> Callable:
        return send("POST", path, json={"answer": answer, "chunks": chunks or [CHUNK]})

    def ingest_then_verify(name: str, texts: list[str]) -> Callable[[], tuple[int | str, float]]:
        """Ingest `texts` as documents, then verify against them by doc_ids: the slower status, and both times."""
        ids = [f"doc {name} {n}" for n in range(len(texts))]
        ingest = send("POST", "/v1/ingest", json={"documents": [
            {"doc_id": doc_id, "text": text} for doc_id, text in zip(ids, texts, strict=True)]})
        check = send("POST", "/v1/verify", json={"answer": SHORT_ANSWER, "doc_ids": ids})

        def go() -> tuple[int | str, float]:
            status, seconds = ingest()
            if status != 200:
                return status, seconds
            checked, more = check()
            return checked, seconds + more

        return go

    def body(content: bytes, content_type: str = "application/json", **headers: str) -> Callable:
        return send("POST", "/v1/verify", content=content, headers={"content-type": content_type, **headers})

    requests: list[tuple[str, Callable[[], tuple[int | str, float]], bool]] = []
    add = lambda name, fn, slow=False: requests.append((name, fn, slow))  # noqa: E731

    # item 1: one long claim
    for words in (300, 1_000, 3_000):
        answer = "The plan costs " + "very " * words + "much money."
        add(f"long claim {words} words /v1/verify", verify(answer))
        add(f"long claim {words} words /v1/repair", verify(answer, path="/v1/repair"))
    # item 2: superlinear patterns, up to the body limit
    for name, make in PATTERNS.items():
        for size in SIZES:
            add(f"{name} {size // 1000}k", verify(make(size)))
    add("issue: newlines * 50000", verify("\n" * 50_000 + "x is y."))
    add("issue: integers 99k", verify(" ".join(map(str, range(18_000)))[:99_000]))
    add("issue: '1. ' * 30000", verify("1. " * 30_000))
    add("answer over max_text_chars", verify("The plan costs 19 dollars. " * 3_704 + "x"))
    # item 7: page 0 and friends
    for page in (0, -1, True, "1", 1.5, 10**20):
        add(f"chunk page {page!r}", verify("The plan costs 19 dollars.", [{**CHUNK, "page": page}]))
        add(f"ingest page {page!r}", send("POST", "/v1/ingest",
                                          json={"documents": [{"doc_id": "d", "text": "x is y.", "page": page}]}))
    # item 5: slow headers and bodies
    add("slow headers, left open", lambda: slow_headers(port, trickle=False), True)
    add("slow headers, trickled", lambda: slow_headers(port, trickle=True), True)
    add("request line never finished", lambda: raw(port, [b"POST /v1/verify HTT"]), True)
    add("connection, nothing sent", lambda: raw(port, []), True)
    add("body shorter than Content-Length", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"]), True)
    add("chunked body stalled", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\n{\r\n"]), True)
    # malformed bodies
    for name, content in {
        "invalid JSON": b"{not json", "JSON array": b"[]", "JSON string": b'"answer"', "JSON null": b"null",
        "empty body": b"", "truncated JSON": json.dumps(TINY).encode()[:-3], "BOM + JSON": b"\xef\xbb\xbf" +
        json.dumps(TINY).encode(), "latin-1 bytes": b'{"answer": "caf\xe9", "chunks": [{"id": "S1", "text": "x"}]}',
        "NaN score": b'{"answer": "x is y.", "chunks": [{"id": "S1", "text": "x is y.", "score": NaN}]}',
        "huge number": b'{"answer": "x is y.", "chunks": [{"id": "S1", "text": "x is y.", "score": 1e999}]}',
        "deep nesting": b'{"answer": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        "deep nesting, unclosed": b"[" * 100_000,
        "lone surrogate": b'{"answer": "\\ud800 is y.", "chunks": [{"id": "S1", "text": "\\udfff"}]}',
        "null bytes": b'{"answer": "x\\u0000 is y.", "chunks": [{"id": "S1\\u0000", "text": "x\\u0000"}]}',
        "duplicate keys": b'{"answer": "x is y.", "answer": 5, "chunks": [{"id": "S1", "text": "x"}]}',
    }.items():
        add(name, body(content))
    add("text/plain body", body(json.dumps(TINY).encode(), "text/plain"))
    add("form body", body(b"answer=x&chunks=y", "application/x-www-form-urlencoded"))
    add("gzip garbage", body(b"\x1f\x8b garbage", "application/json", **{"content-encoding": "gzip"}))
    add("declared body too large", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n"]))
    add("negative Content-Length", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"]))
    add("non-numeric Content-Length", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n"]))
    add("two Content-Lengths", lambda: raw(port, [
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"]))
    add("not HTTP at all", lambda: raw(port, [b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64]))
    add("chunked body too large", send("POST", "/v1/verify", content=iter([b"x" * 500_000] * 3),
                                       headers={"content-type": "application/json"}))
    # wrong shapes and values
    for name, payload in {
        "answer missing": {"chunks": [CHUNK]}, "chunks missing": {"answer": "x is y."},
        "answer a number": {"answer": 5, "chunks": [CHUNK]}, "answer a list": {"answer": ["x"], "chunks": [CHUNK]},
        "answer empty": {"answer": "", "chunks": [CHUNK]}, "answer spaces": {"answer": "   \n\t", "chunks": [CHUNK]},
        "answer refusal token": {"answer": "NOT_IN_CONTEXT", "chunks": [CHUNK]},
        "chunks empty": {"answer": "x is y.", "chunks": []}, "chunks a string": {"answer": "x is y.", "chunks": "x"},
        "chunk text empty": {"answer": "x is y.", "chunks": [{"id": "S1", "text": ""}]},
        "chunk id empty": {"answer": "x is y.", "chunks": [{"id": "", "text": "x is y."}]},
        "chunk id 10k chars": {"answer": "x is y.", "chunks": [{"id": "S" * 10_000, "text": "x is y."}]},
        "duplicate chunk ids": {"answer": "x is y.", "chunks": [CHUNK, CHUNK]},
        "201 chunks": {"answer": "x is y.", "chunks": [{"id": f"S{i}", "text": "x"} for i in range(201)]},
        "context over max_context_chars": {"answer": "x is y.",
                                           "chunks": [{"id": f"S{i}", "text": "y " * 45_000} for i in range(5)]},
        "chunks and doc_ids": {"answer": "x is y.", "chunks": [CHUNK], "doc_ids": ["d"]},
        "unknown doc_ids": {"answer": "x is y.", "doc_ids": ["nope"]},
        "10k unknown doc_ids": {"answer": "x is y.", "doc_ids": [f"d{i}" for i in range(10_000)]},
        "unknown task": {**TINY, "task": "astrology"}, "judge without LLM": {**TINY, "judge": True},
        "question 90k chars": {**TINY, "question": "why " * 22_000},
        "extra fields": {**TINY, "admin": True, "scope": "other"},
        "RTL and emoji": {"answer": "\u202eThe plan costs 19 dollars \U0001f4b8.", "chunks": [CHUNK]},
        "markup in answer": {"answer": "[bold red]The plan[/] costs <script>alert(1)</script> 19.", "chunks": [CHUNK]},
        "JSON record chunk": {"answer": "The price is 19.", "chunks": [{"id": "S1", "text": json.dumps(
            {"a": {"b": {"c": {"d": [{"e": i} for i in range(2_000)]}}}})}]},
        "cited id not retrieved": {"answer": "The plan costs 19 dollars [S999].", "chunks": [CHUNK]},
        "100 claims, 10 chunks": {"answer": " ".join(f"Plan {i} costs {i} dollars." for i in range(100)),
                                  "chunks": [{"id": f"S{i}", "text": f"Plan {i} costs {i} dollars."} for i in range(10)]},
        "101 claims": {"answer": " ".join(f"Plan {i} costs {i} dollars." for i in range(101)), "chunks": [CHUNK]},
    }.items():
        add(name, send("POST", "/v1/verify", json=payload))
        add(f"{name} /v1/repair", send("POST", "/v1/repair", json=payload))
    # feedback, ingest, the log
    add("feedback unknown id", send("POST", "/v1/feedback", json={"request_id": "nope", "thumbs": "up"}))
    add("feedback bad thumbs", send("POST", "/v1/feedback", json={"request_id": "x", "thumbs": "sideways"}))
    add("ingest no documents", send("POST", "/v1/ingest", json={"documents": []}))
    add("ingest empty text", send("POST", "/v1/ingest", json={"documents": [{"doc_id": "d", "text": ""}]}))
    add("ingest 900k text", send("POST", "/v1/ingest", json={"documents": [{"doc_id": "big", "text": "x is y. " * 110_000}]}))
    add("ingest 2000 documents", send("POST", "/v1/ingest", json={"documents": [
        {"doc_id": f"d{i}", "text": "x is y."} for i in range(2_000)]}))
    # issue 38: the same patterns in the context, sent as chunks and as ingested documents
    for name, make in CONTEXT_PATTERNS.items():
        for size in CONTEXT_SIZES:
            pieces = [make(size)[at:at + 200_000] for at in range(0, size, 200_000)]  # 200k: the most one text holds
            chunks = [{"id": f"S{n}", "text": piece} for n, piece in enumerate(pieces, start=1)]
            add(f"chunks {name} {size // 1000}k", verify(SHORT_ANSWER, chunks))
            add(f"chunks {name} {size // 1000}k /v1/repair", verify(SHORT_ANSWER, chunks, path="/v1/repair"))
            add(f"documents {name} {size // 1000}k", ingest_then_verify(f"{name} {size}", pieces))
    # /v1/repair checks each part of a claim it splits against the whole context: one claim of 31 parts
    coordinated = "The pump runs at 3 bar and " + " and ".join(f"costs {i} dollars" for i in range(30)) + "."
    prose = [{"id": "S1", "text": CONTEXT_PATTERNS["ordinary prose"](200_000)}]
    add("repair: a claim of 31 parts, 200k of prose", verify(coordinated, prose, path="/v1/repair"))
    # the eval loop over everything logged so far, at the largest sample the routes accept
    for method, path in (("GET", "/v1/eval?limit=10000"), ("GET", "/v1/eval/report?limit=10000"),
                         ("POST", "/v1/eval/runs?limit=10000")):
        add(f"{method} {path}", send(method, path))
    # routes, methods, query parameters, URLs and headers
    for method, path in (("GET", "/v1/verify"), ("PUT", "/v1/verify"), ("DELETE", "/v1/requests"),
                         ("GET", "/v1/nope"), ("GET", "/static/../../etc/passwd"), ("GET", "/static/%2e%2e/x"),
                         ("GET", "/v1/requests?limit=0"), ("GET", "/v1/requests?limit=abc"),
                         ("GET", "/v1/requests?limit=100000000000000000000"), ("GET", "/v1/requests?limit=-1"),
                         ("GET", "/v1/requests/" + "x" * 5_000), ("GET", "/v1/requests/%00"),
                         ("GET", "/v1/eval?limit=0"), ("GET", "/v1/eval?limit=99999"), ("GET", "/v1/review?limit=x"),
                         ("GET", "/v1/eval/report?limit=-5"), ("OPTIONS", "/v1/verify"), ("HEAD", "/healthz"),
                         ("GET", "/" + "a" * 60_000), ("GET", "/v1/requests?" + "a=1&" * 10_000)):
        add(f"{method} {path[:40]}", send(method, path))
    add("header of 60k", send("GET", "/healthz", headers={"x-big": "a" * 60_000}))
    add("500 headers", send("GET", "/healthz", headers={f"x-h{i}": "v" for i in range(500)}))
    add("bad API key", send("GET", "/v1/requests", headers={"authorization": b"Bearer \xff"}))
    return requests


# --- the phases -----------------------------------------------------------------------------------------------


def start_server(port: int, scorer: str, workdir: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "groundwire", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--db", str(workdir / "log.db"), "--log-level", "warning", "--body-timeout", "5",
               # Half of HANG_S: a slow-on-purpose request answered at the default 10 s raced the hang cutoff.
               "--header-timeout", "5"]
    if scorer != "default":
        command += ["--scorer", scorer]
    log = (workdir / "server.log").open("w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=os.environ)


def cold_start(port: int, server: subprocess.Popen[bytes], launched: float) -> None:
    import httpx

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as client:
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the server exited with status {server.returncode}; see its log")
            try:
                if client.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.perf_counter() - launched > 180:
                raise SystemExit("the server was not ready within 180 s")
            time.sleep(0.05)
        ready = time.perf_counter() - launched
        timings = []
        for _ in range(2):
            started = time.perf_counter()
            client.post("/v1/verify", json=TINY).raise_for_status()
            timings.append(time.perf_counter() - started)
    print(f"cold start: /healthz ready {ready:.2f} s after launch; first tiny /v1/verify {timings[0]:.3f} s, "
          f"second {timings[1]:.3f} s")


def stall(port: int, scorer: str) -> None:
    import httpx

    from groundwire.core.verifier import Verifier
    from groundwire.scoring import get_scorer
    from groundwire.service.settings import ServiceSettings

    limits = ServiceSettings()
    big = largest_accepted(Verifier(get_scorer(None if scorer == "default" else scorer)), limits.max_claims, limits.max_pairs,
                           limits.max_chunks)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as tiny_client:
        alone = []
        for _ in range(5):
            started = time.perf_counter()
            tiny_client.post("/v1/verify", json=TINY).raise_for_status()
            alone.append(time.perf_counter() - started)
        results: list[dict[str, float | int | str]] = [{"status": "no answer", "seconds": 0.0} for _ in range(2)]

        def run_big(result: dict[str, float | int | str]) -> None:
            started = time.perf_counter()
            try:  # a client of its own: the two large requests are sent at once, on two connections
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=900.0) as big_client:
                    result["status"] = big_client.post("/v1/verify", json=big).status_code
            except httpx.HTTPError as error:
                result["status"] = type(error).__name__
            result["seconds"] = time.perf_counter() - started

        threads = [threading.Thread(target=run_big, args=(result,)) for result in results]
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        both: list[float] = []  # tiny requests sent while both large ones were running
        one: list[float] = []  # ... while one of them still was
        while any(thread.is_alive() for thread in threads) and len(both) + len(one) < 1_000:
            running = sum(thread.is_alive() for thread in threads)
            started = time.perf_counter()
            status = tiny_client.post("/v1/verify", json=TINY).status_code
            elapsed = time.perf_counter() - started
            if status != 200:
                print(f"stall: a tiny request got HTTP {status}")
            (both if running == 2 else one).append(elapsed)  # by what ran when it was sent
            time.sleep(0.2)  # another client's pace: a request every 0.2 s, not a loop that competes for the CPU
        for thread in threads:
            thread.join()
    print("stall: two largest accepted requests at once: " + ", ".join(
        f"HTTP {r['status']} in {float(r['seconds']):.2f} s" for r in results)
        + f"; tiny request alone {max(alone):.3f} s at most")
    for label, during in (("both large requests ran", both), ("one still ran", one)):
        print(f"stall: {len(during):>4} tiny requests sent while {label}: slowest {max(during, default=0):.3f} s, "
              f"median {statistics.median(during) if during else 0:.3f} s")


def hostile(port: int) -> None:
    outcomes = []
    started = time.perf_counter()
    for name, go, slow in hostile_requests(port):
        status, seconds = go()
        outcomes.append(Outcome(name, status, seconds, slow))
    print(f"\nhostile: all sent in {time.perf_counter() - started:.0f} s")
    fast = [o for o in outcomes if not o.slow_on_purpose]
    slow = [o for o in outcomes if o.slow_on_purpose]
    print(f"hostile: {len(outcomes)} requests ({len(slow)} slow on purpose)")
    for label, group in (("sent whole", fast), ("slow on purpose", slow)):
        print(f"  {label}:")
        for kind in ("2xx", "4xx", PLAIN_4XX, "5xx", "hang", "closed"):
            members = [o for o in group if o.kind == kind]
            if members or kind in (PLAIN_4XX, "5xx", "hang"):
                worst = max(members, key=lambda o: o.seconds, default=None)
                slowest = f"slowest {worst.seconds:6.2f} s ({worst.name}: {worst.status})" if worst else ""
                print(f"    {kind:<7}{len(members):>4}   {slowest}")
    refused = [o for o in fast if o.kind in ("4xx", PLAIN_4XX, "closed")]
    over = [o for o in refused if o.seconds > 1.0]
    print(f"  refused (4xx or closed), sent whole: {len(refused)}; answered after more than 1 s: {len(over)}"
          + "".join(f"\n    {o.seconds:6.2f} s  {o.status}  {o.name}" for o in over))
    for o in outcomes:
        if o.kind in (PLAIN_4XX, "5xx", "hang"):
            print(f"  {o.kind}: {o.name} ({o.status}, {o.seconds:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default="lexical", help="scorer name ('default': the bundled model)")
    parser.add_argument("--skip", default="", help="comma-separated phases to skip: cold, stall, hostile")
    args = parser.parse_args()
    skip = set(args.skip.split(","))

    import groundwire

    print(f"groundwire from {Path(groundwire.__file__).parent}")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        launched = time.perf_counter()
        server = start_server(port, args.scorer, Path(tmp))
        try:
            cold_start(port, server, launched)  # also waits until the server is ready
            if "stall" not in skip:
                stall(port, args.scorer)
            if "hostile" not in skip:
                hostile(port)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
            if server.returncode not in (0, -15, None):
                print(f"server exited with {server.returncode}; its log:\n" + Path(tmp, "server.log").read_text()[-3000:])


if __name__ == "__main__":
    main()
