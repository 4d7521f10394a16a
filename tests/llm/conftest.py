from __future__ import annotations

from collections.abc import Iterator

import pytest
from scripted_llm import ScriptedLLMServer

from groundwire.config import LLMConfig
from groundwire.llm.client import LLMClient


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLMServer]:
    """A scripted (not a model) OpenAI-compatible server on 127.0.0.1, started for this test."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def client(scripted_llm: ScriptedLLMServer) -> Iterator[LLMClient]:
    """A client with short timeouts and no real backoff, so retry tests stay fast."""
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="scripted", timeout_s=2.0, max_retries=2, backoff_s=0.01, max_backoff_s=0.05)) as llm_client:
        yield llm_client
