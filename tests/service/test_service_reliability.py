"""A real server in a subprocess: concurrent clients, and SIGKILL in the middle of writes."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer
from service_common import ALPHA, KEYS

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def case(i: int) -> dict:
    """Request i: even ones claim the price the chunk states, odd ones a price the chunk does not."""
    price, claimed = 10 + i, 10 + i if i % 2 == 0 else 500 + i
    return {
        "question": f"What does plan {i} cost?",
        "answer": f"Plan number {i} costs ${claimed} a month.",
        "chunks": [{"id": f"P{i}", "text": f"Plan number {i} costs ${price} a month, billed yearly."}],
    }


def test_many_concurrent_clients_each_get_their_own_answer(tmp_path: Path) -> None:
    clients, rounds = 10, 3
    barrier = threading.Barrier(clients)
    results: dict[int, list[tuple[dict, dict]]] = {}
    errors: list[BaseException] = []

    with LiveServer(tmp_path, api_keys=KEYS) as server:
        def run(worker: int) -> None:
            with httpx.Client(base_url=server.url, headers=ALPHA, timeout=120.0) as http:
                barrier.wait(timeout=120)  # every client fires at once
                for round_ in range(rounds):
                    body = case(worker * rounds + round_)
                    response = http.post("/v1/verify", json=body)
                    results.setdefault(worker, []).append((body, response.json()))
                    assert response.status_code == 200, response.text

        threads = [threading.Thread(target=_collect(run, errors), args=(w,)) for w in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors, errors

        request_ids = set()
        for worker in range(clients):
            assert len(results[worker]) == rounds
            for body, out in results[worker]:
                report = out["report"]
                # The response is for this request: same answer, same question, checked against this chunk.
                assert report["answer"] == body["answer"]
                assert report["question"] == body["question"]
                assert [c["id"] for c in out["chunks"]] == [body["chunks"][0]["id"]]
                i = int(body["chunks"][0]["id"][1:])
                expected = "SUPPORTED" if i % 2 == 0 else "CONTRADICTED"
                assert [c["verdict"] for c in report["claims"]] == [expected]
                request_ids.add(out["request_id"])
                # And the log row behind its id holds this request, not a neighbour's.
                entry = httpx.get(f"{server.url}/v1/requests/{out['request_id']}", headers=ALPHA).json()
                assert entry["question"] == body["question"]
                assert entry["response_text"] == body["answer"]
        assert len(request_ids) == clients * rounds

        # Through a real socket too, an oversized body is refused with the JSON error (default limit 1 MB).
        big = httpx.post(f"{server.url}/v1/verify", headers=ALPHA, timeout=60.0,
                         json={"answer": "z" * 2_000_000, "chunks": case(0)["chunks"]})
        assert big.status_code == 413 and big.json()["error"]["code"] == "payload_too_large"
        assert httpx.get(f"{server.url}/healthz").json()["model_loads"] == 1


def test_sigkill_mid_write_loses_no_committed_log_row(tmp_path: Path) -> None:
    writers, kill_after = 6, 40
    acknowledged: list[tuple[str, dict]] = []
    lock = threading.Lock()
    enough = threading.Event()
    server = LiveServer(tmp_path, api_keys=KEYS).start()

    def write(worker: int) -> None:
        with httpx.Client(base_url=server.url, headers=ALPHA, timeout=60.0) as http:
            for n in range(1000):  # bounded; the kill ends it long before
                body = case(worker * 1000 + n)
                try:
                    response = http.post("/v1/verify", json=body)
                except httpx.TransportError:
                    return  # the server is gone: anything in flight was never acknowledged
                assert response.status_code == 200, response.text
                with lock:
                    acknowledged.append((response.json()["request_id"], body))
                    if len(acknowledged) >= kill_after:
                        enough.set()

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(writers)]
    try:
        for thread in threads:
            thread.start()
        assert enough.wait(timeout=300), "the server never acknowledged enough requests"
        server.kill()  # while the other writers still have requests in flight
    finally:
        server.stop()
    for thread in threads:
        thread.join(timeout=120)
    assert server.process is not None and server.process.returncode == -9

    # The database is intact, and every acknowledged request is in it, exactly as it was answered.
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = {row[0]: row[1:] for row in db.execute("SELECT id, query, response, scope FROM requests")}
    assert len(acknowledged) >= kill_after
    print(f"acknowledged {len(acknowledged)}, rows on disk {len(rows)}")
    for request_id, body in acknowledged:
        assert rows[request_id] == (body["question"], body["answer"], "alpha")

    # A restarted service serves the surviving log.
    with LiveServer(tmp_path, api_keys=KEYS) as again:
        listed = httpx.get(f"{again.url}/v1/requests", params={"limit": 1000}, headers=ALPHA).json()["requests"]
        assert {r for r, _ in acknowledged} <= {item["request_id"] for item in listed}


def _collect(fn, errors: list[BaseException]):
    def wrapped(*args: object) -> None:
        try:
            fn(*args)
        except BaseException as error:  # a thread's failure must reach the test, not vanish
            errors.append(error)
    return wrapped
