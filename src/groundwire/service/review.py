"""The review queue rule: which logged requests a person should look at.

A request is queued when its answer score is below the threshold, when its question or
answer matches one of the configured high-risk patterns (case-insensitive regexes), when
an answer-level validator fired (a fabricated citation scores no claim down, but a person
should see it), or when it failed after its answer was accepted (service/failures.py: its
answer was never routed, so a person decides). It leaves the queue once someone gives
feedback on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)


def review_reasons(*, score: float | None, texts: Sequence[str | None], threshold: float,
                   patterns: tuple[str, ...], findings: Sequence[str] = (), failure: str | None = None) -> list[str]:
    reasons: list[str] = [f"failed after its answer was accepted: {failure}"] if failure else []
    if score is not None and score < threshold:
        reasons.append(f"score {score:.2f} below {threshold:.2f}")
    for pattern in _compiled(patterns):
        if any(text and pattern.search(text) for text in texts):
            reasons.append(f"matches high-risk pattern /{pattern.pattern}/")
    reasons.extend(f"validator: {finding}" for finding in dict.fromkeys(findings))
    return reasons
