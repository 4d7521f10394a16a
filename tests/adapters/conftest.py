"""The adapters run against the real frameworks, offline: telemetry off, and no framework LLM can be reached.

The variables are set before any framework is imported (this conftest loads before the test modules), and
OPENAI_API_KEY is a value no provider accepts, so a default LLM could not be used even if one were called;
the `no_network` fixture makes any connection outside this machine fail the test.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

OFFLINE_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    "DEEPEVAL_GRPC_LOGGING": "0",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "POSTHOG_DISABLED": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "OPENAI_API_KEY": "sk-groundwire-tests-invalid",
}
os.environ.update(OFFLINE_ENV)

REFUND = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
QUESTION = "How long is the refund window?"
GOOD = "You can get a refund within 30 days of purchase."
BAD = "Refunds are accepted within 90 days of purchase. Shipping takes 5 business days."
HOURS = "Our support team is available Monday to Friday, 9am to 5pm. Refunds are accepted within 30 days of purchase."
HOURS_QUESTION = "When is support open?"
PLAUSIBLE = "Support is open on weekdays from 9am to 5pm CET."  # issue 22's answer: unsupported, escalated

# Issue 57's three answers, on every surface (tests/adapters/test_same_meaning.py; TruLens and Guardrails in their
# own files): faithful A, a fabricated figure B, an unsupported addition C, against HOURS (bench/adapters_outcomes.py).
SAME_QUESTION = "When is support open, and how long is the refund window?"
SAME_ANSWERS = {
    "A": "Support is available Monday to Friday, 9am to 5pm.",
    "B": "Refunds are accepted within 90 days of purchase.",
    "C": "Support is open on weekdays from 9am to 5pm CET.",
}
SAME_ROUTES = {"A": "accept", "B": "reject", "C": "escalate"}
"""The lexical scorer's routes: one of each, so that the same route on every surface is tested for all three."""


def checked(answer: str) -> tuple[float, str]:
    """`verify()`'s answer score and route for one of SAME_ANSWERS (lexical): what every surface must say."""
    from groundwire import verify

    report = verify(answer, [HOURS], question=SAME_QUESTION, scorer="lexical")
    return report.score, report.route.value


class NetworkUsed(AssertionError):
    pass


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Frameworks write caches into the working directory (deepeval's .deepeval/): keep them out of the repo."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Fail on any connection that leaves the machine (a framework's LLM, telemetry or update check)."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if self.family == socket.AF_UNIX or host in ("127.0.0.1", "::1", "localhost"):
            return real_connect(self, address)
        attempts.append(address)
        raise NetworkUsed(f"network connection attempted to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket, "getaddrinfo", _no_dns(socket.getaddrinfo, attempts))
    yield attempts
    assert not attempts, f"the adapter tried to reach the network: {attempts}"


def _no_dns(real, attempts):
    def lookup(host, *args, **kwargs):
        if host in (None, "127.0.0.1", "::1", "localhost"):
            return real(host, *args, **kwargs)
        attempts.append(host)
        raise NetworkUsed(f"DNS lookup of {host!r}")

    return lookup


@pytest.fixture(scope="session")
def lexical():
    from groundwire import Verifier
    from groundwire.scoring import get_scorer

    return Verifier(get_scorer("lexical"))
