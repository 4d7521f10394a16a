"""A service whose [verify] route = "decide" decides every request; a request's judge=true is refused (422)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")

CHUNKS = [{"id": "S1", "text": "The plan costs $10 a month and includes roaming in the EU."}]
HALF = "The plan costs $10 a month and includes free international roaming for every customer."


@pytest.fixture
def decided_client(settings) -> Iterator:
    from fastapi.testclient import TestClient

    from groundwire.config import CheckSettings, Config, LLMConfig
    from groundwire.service import create_app

    # An LLM endpoint is configured (the judge would be available) but never called: nothing listens there.
    config = Config(llm=LLMConfig(base_url="http://127.0.0.1:9/v1", model="none", max_retries=0, timeout_s=1))
    decided = replace(settings, use_llm=True, config=config, check=CheckSettings(scorer="lexical", route="decide"))
    with TestClient(create_app(decided), raise_server_exceptions=False) as test_client:
        yield test_client


def test_a_decided_service_decides_and_refuses_the_judge(decided_client) -> None:
    response = decided_client.post("/v1/verify", headers=ALPHA, json={"answer": HALF, "chunks": CHUNKS})
    assert response.status_code == 200, response.text
    report = response.json()["report"]
    assert report["route"] in ("accept", "reject") and report["meta"]["thresholds"]["decide_at"] == 0.5
    assert all(claim["verdict"] != "UNRESOLVED" for claim in report["claims"])
    judged = decided_client.post("/v1/verify", headers=ALPHA, json={"answer": HALF, "chunks": CHUNKS, "judge": True})
    assert judged.status_code == 422, judged.text
    assert "exclude each other" in judged.text and "invalid_option" in judged.text
