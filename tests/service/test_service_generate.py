"""/v1/generate with the semantic cache, against a SCRIPTED OpenAI-compatible server (tests/llm/scripted_llm.py).

The LLM is the only scripted part: it answers from the passages it is sent. Verification, the cache
(real MiniLM embeddings), scopes and the request log are the real ones.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_common import ALPHA, BETA

pytest.importorskip("fastapi")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMServer

RUNBOOK = [{"doc_id": "runbook", "title": "Cluster runbook", "page": 4,
            "text": "Start the cluster with the command gw start.\n\nStop the cluster with the command gw stop."}]


def answer_from_passages(request: dict) -> str:
    """Scripted reply: the passage sentence about the verb the question asks about, with its cite id."""
    prompt = request["messages"][-1]["content"]
    question = prompt.rsplit("Question:", 1)[1].lower()
    verb = "Stop" if "stop" in question else "Start"
    for line in prompt.splitlines():
        if line.startswith(f"{verb} the cluster"):
            cite = [ln for ln in prompt.splitlines() if ln.startswith("[c_")][0 if verb == "Start" else -1]
            return f"{line.strip()} [{cite[1:cite.index(']')]}]"
    return "NOT_IN_CONTEXT"


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        server.responder = answer_from_passages
        yield server


@pytest.fixture
def gen_client(settings, llm) -> Iterator:
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from groundwire.config import Config, LLMConfig
    from groundwire.service import create_app

    config = Config(llm=LLMConfig(base_url=llm.url, model="scripted", max_retries=0, timeout_s=30))
    with TestClient(create_app(replace(settings, use_llm=True, config=config)),
                    raise_server_exceptions=False) as test_client:
        yield test_client


def generate(client, question: str, headers=ALPHA) -> dict:
    response = client.post("/v1/generate", headers=headers, json={"question": question, "doc_ids": ["runbook"]})
    assert response.status_code == 200, response.text
    return response.json()


def test_generate_verifies_logs_and_caches_per_question_scope_and_doc_set(gen_client, llm) -> None:
    for headers in (ALPHA, BETA):
        assert gen_client.post("/v1/ingest", headers=headers, json={"documents": RUNBOOK}).status_code == 200

    first = generate(gen_client, "how do I start the cluster")
    assert not first["cached"]
    assert first["answer"].startswith("Start the cluster with the command gw start.")
    assert first["report"]["route"] == "accept"
    calls = len(llm.requests)
    assert calls >= 1

    again = generate(gen_client, "How do I start the cluster?")
    assert again["cached"] and again["answer"] == first["answer"]
    assert again["request_id"] != first["request_id"]
    assert len(llm.requests) == calls  # served from the cache: the LLM was not asked

    # A near-identical question with the opposite meaning is not served the cached answer.
    stop = generate(gen_client, "how do I stop the cluster")
    assert not stop["cached"] and stop["answer"].startswith("Stop the cluster")

    # The same question from another scope never gets alpha's cached answer.
    beta = generate(gen_client, "how do I start the cluster", headers=BETA)
    assert not beta["cached"]

    # Ingesting an unrelated document leaves answers built on the runbook servable.
    other = [{"doc_id": "faq", "title": "FAQ", "page": None, "text": "The cafeteria opens at nine."}]
    assert gen_client.post("/v1/ingest", headers=ALPHA, json={"documents": other}).status_code == 200
    assert generate(gen_client, "how do I start the cluster")["cached"]

    # Ingest that changes the document invalidates the entries built on it.
    changed = [{**RUNBOOK[0], "text": RUNBOOK[0]["text"] + "\n\nThe cluster needs three nodes."}]
    ingest = gen_client.post("/v1/ingest", headers=ALPHA, json={"documents": changed}).json()
    assert ingest["cache_invalidated"] == 2
    assert not generate(gen_client, "how do I start the cluster")["cached"]

    entry = gen_client.get(f"/v1/requests/{again['request_id']}", headers=ALPHA).json()
    assert entry["endpoint"] == "generate"
    assert entry["response_text"] == again["answer"]
    assert entry["model_ids"]["llm"] == "scripted"
    assert entry["context"].startswith("[c_") and "Source: Cluster runbook, page 4" in entry["context"]
    assert entry["response"]["cached"] is True
    stats = gen_client.app.state.runtime.cache.stats
    assert stats.hits == 2 and stats.invalidations == 2


def test_an_unreachable_llm_endpoint_is_a_json_502_and_nothing_is_cached(settings) -> None:
    from dataclasses import replace

    from fastapi.testclient import TestClient
    from live_server import free_port

    from groundwire.config import Config, LLMConfig
    from groundwire.service import create_app

    # Nothing listens on this loopback port: every connection is refused at once.
    port = free_port()
    config = Config(llm=LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="gone", max_retries=0,
                                  connect_timeout_s=2, timeout_s=5))
    with TestClient(create_app(replace(settings, use_llm=True, config=config)),
                    raise_server_exceptions=False) as client:
        chunks = [{"id": "S1", "text": "Start the cluster with the command gw start."}]
        response = client.post("/v1/generate", headers=ALPHA, json={"question": "how do I start it", "chunks": chunks})
        assert response.status_code == 502, response.text
        assert response.json()["error"]["code"] == "llm_unavailable"
        # The caller learns the kind of failure, not the address of the service's endpoint (an internal host).
        message = response.json()["error"]["message"]
        assert "could not be reached" in message and str(port) not in message and "127.0.0.1" not in message
        assert client.app.state.runtime.cache.stats.entries == 0


def test_judge_decides_the_escalation_band_and_is_logged(gen_client, llm) -> None:
    import json

    chunks = [{"id": "S1", "text": "The Pro plan costs $10 a month."},
              {"id": "S2", "text": "Support is available by email on weekdays."}]
    answer = "Customers can reach support by email during the week."
    plain = gen_client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": chunks}).json()
    assert [c["route"] for c in plain["report"]["claims"]] == ["escalate"]  # the lexical scorer is unsure
    assert llm.requests == []

    llm.responder = lambda request: json.dumps({"quote": "Support is available by email on weekdays.",
                                                "chunk_id": "S2", "verdict": "SUPPORTED", "reason": "same"})
    judged = gen_client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": chunks, "judge": True})
    assert judged.status_code == 200, judged.text
    claim = judged.json()["report"]["claims"][0]
    assert (claim["verdict"], claim["decided_by"], claim["chunk_id"]) == ("SUPPORTED", "judge", "S2")
    assert judged.json()["report"]["route"] == "accept"
    assert len(llm.requests) == 1 and "Customers can reach support" in llm.requests[0]["messages"][-1]["content"]
    entry = gen_client.get(f"/v1/requests/{judged.json()['request_id']}", headers=ALPHA).json()
    assert entry["claims"][0]["decided_by"] == "judge" and entry["model_ids"]["llm"] == "scripted"


def test_an_ingest_racing_a_generate_never_leaves_a_stale_servable_answer(gen_client, llm) -> None:
    """The generate reads the chunks; an ingest that changes them commits before the answer is cached. The answer
    built from the old text must not be served afterwards (issue 14: it was, under the new version key)."""
    import threading

    assert gen_client.post("/v1/ingest", headers=ALPHA, json={"documents": RUNBOOK}).status_code == 200
    store = gen_client.app.state.runtime.store
    read_done, ingest_done = threading.Event(), threading.Event()
    original = store.passages

    def passages_then_wait(**kwargs):
        found = original(**kwargs)
        if not read_done.is_set():
            read_done.set()
            assert ingest_done.wait(30)  # the ingest commits between this read and everything after it
        return found

    store.passages = passages_then_wait
    racing: dict = {}
    worker = threading.Thread(target=lambda: racing.update(generate(gen_client, "how do I start the cluster")))
    worker.start()
    assert read_done.wait(30)
    changed = [{**RUNBOOK[0], "text": RUNBOOK[0]["text"].replace("gw start", "gw up")}]
    assert gen_client.post("/v1/ingest", headers=ALPHA, json={"documents": changed}).status_code == 200
    ingest_done.set()
    worker.join(60)
    assert "gw start" in racing["answer"]  # built from the text it read, as it should be

    after = generate(gen_client, "How do I start the cluster?")
    assert not after["cached"] and "gw up" in after["answer"]


def test_metrics_count_cache_hits_and_judge_calls(gen_client, llm) -> None:
    import json

    from test_service_observability import scrape, value

    assert gen_client.post("/v1/ingest", headers=ALPHA, json={"documents": RUNBOOK}).status_code == 200
    assert not generate(gen_client, "how do I start the cluster")["cached"]
    assert generate(gen_client, "How do I start the cluster?")["cached"]
    chunks = [{"id": "S1", "text": "Support is available by email on weekdays."}]
    answer = "Customers can reach support by email during the week."
    llm.responder = lambda request: json.dumps({"quote": chunks[0]["text"], "chunk_id": "S1",
                                                "verdict": "SUPPORTED", "reason": "same"})
    assert gen_client.post("/v1/verify", headers=ALPHA,
                           json={"answer": answer, "chunks": chunks, "judge": True}).status_code == 200
    llm.responder = None  # the scripted server then answers HTTP 418, which the client does not retry
    gen_client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": chunks, "judge": True})
    samples = scrape(gen_client)
    assert value(samples, "groundwire_cache_lookups_total", result="miss") == 1
    assert value(samples, "groundwire_cache_lookups_total", result="hit") == 1
    assert value(samples, "groundwire_routes_total", endpoint="generate", route="accept") == 2
    assert value(samples, "groundwire_judge_calls_total") == 2
    assert value(samples, "groundwire_judge_failures_total") == 1
