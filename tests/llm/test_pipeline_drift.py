"""`serve` and `batch` build their verifier from groundwire.toml's [verify] like `check` does (groundwire.pipeline):
require_citations flags an uncited sentence, and decomposer = "llm" splits claims with the [llm] endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
from scripted_llm import Reply, ScriptedLLMServer

sys.path.insert(0, str(Path(__file__).parents[1] / "service"))
from live_server import LiveServer

CONTEXT = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
ANSWER = "Refunds are accepted within 30 days of purchase [S1]. Shipping takes 5 business days."
LLM_CLAIMS = ["Refunds are accepted within 30 days of a purchase.", "Shipping takes 5 business days."]  # not the rules' split
TOML = '[verify]\nscorer = "lexical"\nrequire_citations = true\ndecomposer = "llm"\n[llm]\nmax_retries = 0\ntimeout_s = 5\n'


def _claims_reply(request: dict) -> Reply:  # the scripted LLM: every decomposition gets the same claims
    return Reply(json.dumps({"claims": LLM_CLAIMS}))


def _decomposed(scripted: ScriptedLLMServer) -> bool:
    return any("Split an answer" in r["messages"][0]["content"] for r in scripted.requests)


def _assert_pipeline_applied(report: dict, scripted: ScriptedLLMServer) -> None:
    assert [f["check"] for f in report["findings"]] == ["uncited_sentence"]  # require_citations = true
    assert [c["claim"]["text"] for c in report["claims"]] == LLM_CLAIMS  # decomposer = "llm"
    assert _decomposed(scripted)


def test_serve_honours_verify_settings(tmp_path: Path, scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.responder = _claims_reply
    (tmp_path / "groundwire.toml").write_text(TOML + f'base_url = "{scripted_llm.url}"\nmodel = "scripted"\n')
    with LiveServer(tmp_path, api_keys={}, extra_args=("--llm",)) as server:
        response = httpx.post(f"{server.url}/v1/verify", json={"answer": ANSWER, "chunks": [
            {"id": "S1", "text": CONTEXT}]}, timeout=60)
    assert response.status_code == 200, response.text
    _assert_pipeline_applied(response.json()["report"], scripted_llm)


def test_serve_refuses_the_llm_decomposer_without_an_llm(tmp_path: Path) -> None:
    (tmp_path / "groundwire.toml").write_text(TOML)
    with pytest.raises(RuntimeError, match="needs an LLM"):
        LiveServer(tmp_path, api_keys={}).start()


def test_batch_honours_verify_settings(tmp_path: Path, scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.responder = _claims_reply
    config = tmp_path / "settings.toml"
    config.write_text(TOML + f'base_url = "{scripted_llm.url}"\nmodel = "scripted"\n')
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps({"id": "r1", "context": [CONTEXT], "answer": ANSWER}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "groundwire", "batch", "--input", str(logs), "--output", str(tmp_path / "out"),
         "--config", str(config), "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert [row["id"] for row in rows] == ["r1"]
    _assert_pipeline_applied(json.loads(rows[0]["report"]), scripted_llm)
