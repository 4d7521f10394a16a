"""A TruLens feedback provider: groundwire's check as TruLens metric (feedback function) implementations.

    from groundwire.adapters.trulens import GroundwireProvider   # without the extra: names it
    from trulens.core import Metric, Selector

    groundwire = GroundwireProvider()
    f_grounded = Metric(implementation=groundwire.groundedness, name="Groundwire groundedness",
                        selectors={"source": Selector.select_context(collect_list=True),
                                   "statement": Selector.select_record_output()})

Like TruLens' own `groundedness_measure_with_cot_reasons(source, statement)`, each method takes the retrieved
context (`source`: one string or the list of chunks; select it with collect_list=True, or TruLens scores each
chunk alone and averages) and the answer (`statement`), optionally the `question`, and returns (score, metadata)
with the reason under "reason", where TruLens shows it. It calls no LLM.

The adapters' one rule (common.py, docs/adapters.md): `groundedness` scores the share of supported claims
(metric="score": the answer score); `passed` scores 1.0 when routing accepts the answer and 0.0 otherwise, a
review (escalated) answer included. Both put the outcome ("pass", "fail" or "review") and `passed` in the
metadata, and the reason starts with the outcome. TruLens has no pass flag: put `passed` in your TruLens
leaderboard, or read the metadata.

The provider is a pydantic model, as TruLens' providers are, so TruLens can save a metric that uses it and load it
again (deferred evaluation): its settings are plain fields. A `verifier=` object is not saved; a provider
loaded again uses `scorer=` and the thresholds. This module imports no TruLens code: a metric names the
provider's methods, and TruLens calls them. Without TruLens installed, importing it raises MissingExtraError
naming the extra (`pip install 'groundwire[trulens]'`), as every adapter does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict

from groundwire.adapters.common import AdapterSettings, Assessment, context_texts
from groundwire.foundation.extras import require_extra

# A provider is only of use to TruLens: without it, say which extra to install, as the other adapters' imports do.
require_extra("trulens", "trulens", needed_by=__name__)


class GroundwireProvider(AdapterSettings):
    """groundwire's check for TruLens metrics; `metric`, `scorer`, `task`, `accept_at` and `reject_at` as every
    adapter takes them, or a `verifier=` (not saved with the metric)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def groundedness(self, source: str | Sequence[str], statement: str,
                     question: str | None = None) -> tuple[float, dict[str, Any]]:
        """The share of the statement's claims the source supports (metric="score": the answer score), and why."""
        assessment = self.assess(source, statement, question)
        return assessment.value, _metadata(assessment)

    def passed(self, source: str | Sequence[str], statement: str,
               question: str | None = None) -> tuple[float, dict[str, Any]]:
        """1.0 when groundwire's routing accepts the statement, 0.0 when it rejects or escalates it (review)."""
        assessment = self.assess(source, statement, question)
        return float(assessment.passed), _metadata(assessment)

    def assess(self, source: str | Sequence[str], statement: str, question: str | None = None) -> Assessment:
        """The full Assessment (report, outcome, reason) behind both metrics."""
        contexts = context_texts(source)
        if not contexts:
            raise ValueError("GroundwireProvider needs the retrieved context (source): select it with "
                             "Selector.select_context(collect_list=True)")
        return self.adapter_check().run(statement, contexts, question or None)


def _metadata(assessment: Assessment) -> dict[str, Any]:
    report = assessment.report
    return {"reason": assessment.reason, "outcome": assessment.outcome.value, "passed": assessment.passed,
            "route": report.route.value, "score": report.score,
            "supported_share": report.supported_share, "accept_at": assessment.accept_at,
            "reject_at": assessment.reject_at}
