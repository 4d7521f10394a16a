"""Answer policies: what to hand the user, given a verified answer.

- "route": accept -> the answer; escalate -> the answer, flagged for review; reject -> the fallback.
- "strict": only an accepted answer is returned; anything else becomes the fallback.
- "disclaimer": score >= band high -> the answer; inside [low, high) -> the answer with a configured caveat;
  below low -> the fallback.
An abstention is always returned as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from groundwire.config import PolicyConfig
from groundwire.core.explain import format_threshold
from groundwire.foundation.types import Report, Route

Action = Literal["accept", "escalate", "reject", "disclaim", "abstain"]
DELIVERED: frozenset[str] = frozenset({"accept", "disclaim", "abstain"})
"""Actions that hand the answer to the user as final (no retry needed)."""


@dataclass(frozen=True, slots=True)
class PolicyOutcome:
    action: Action
    answer: str
    reason: str


PolicyFn = Callable[[Report, PolicyConfig, str], PolicyOutcome]


def _route(report: Report, config: PolicyConfig, fallback: str) -> PolicyOutcome:
    if report.route is Route.ACCEPT:
        return PolicyOutcome("accept", report.answer, f"score {report.score:.2f}: accepted")
    if report.route is Route.ESCALATE:
        return PolicyOutcome("escalate", report.answer, f"score {report.score:.2f}: needs review")
    return PolicyOutcome("reject", fallback, f"score {report.score:.2f}: rejected")


def _strict(report: Report, config: PolicyConfig, fallback: str) -> PolicyOutcome:
    if report.route is Route.ACCEPT:
        return PolicyOutcome("accept", report.answer, f"score {report.score:.2f}: accepted")
    return PolicyOutcome("reject", fallback, f"score {report.score:.2f}: not accepted, strict policy")


def _disclaimer(report: Report, config: PolicyConfig, fallback: str) -> PolicyOutcome:
    low, high = config.disclaimer_band
    low_at, high_at = format_threshold(low), format_threshold(high)
    if report.route is Route.REJECT:
        # A rejected answer (a claim rejected, a fabricated citation...) is never delivered, caveat or not.
        return PolicyOutcome("reject", fallback, f"score {report.score:.2f}: rejected")
    if report.score >= high and not report.findings:
        return PolicyOutcome("accept", report.answer, f"score {report.score:.2f} >= {high_at}")
    if report.score >= low:
        return PolicyOutcome(
            "disclaim",
            f"{report.answer}\n\n{config.disclaimer}",
            f"score {report.score:.2f} in the disclaimer band [{low_at}, {high_at})",
        )
    return PolicyOutcome("reject", fallback, f"score {report.score:.2f} < {low_at}")


POLICIES: dict[str, PolicyFn] = {"route": _route, "strict": _strict, "disclaimer": _disclaimer}


def apply_policy(report: Report, *, config: PolicyConfig, fallback: str) -> PolicyOutcome:
    if report.abstained:
        return PolicyOutcome("abstain", report.answer, "the answer abstains")
    return POLICIES[config.name](report, config, fallback)
