"""Suite-wide settings.

Property tests explore new random examples on a developer's machine; on CI (`.ci/run` sets
HYPOTHESIS_PROFILE=ci) they replay a fixed set, so a landing never fails on an example nobody has seen. A
failure found locally is fixed, and hypothesis's database replays it until it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest
from hypothesis import settings

from groundwire.core.claims import RuleDecomposer
from groundwire.foundation.types import Claim

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@dataclass
class CountingDecomposer:
    """A decomposer without early stopping (like the LLM one) that counts its calls."""

    inner: RuleDecomposer = field(default_factory=RuleDecomposer)
    calls: int = 0

    def decompose(self, answer: str, *, question: str | None = None) -> list[Claim]:
        self.calls += 1
        return self.inner.decompose(answer, question=question)


@pytest.fixture
def counting_decomposer() -> CountingDecomposer:
    return CountingDecomposer()
