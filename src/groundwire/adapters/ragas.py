"""RAGAS metrics that need no LLM or embeddings, in both of RAGAS 0.4's interfaces.

- `GroundwireFaithfulness()`: the collections interface that `ragas.metrics.collections.Faithfulness` has
  (`await metric.ascore(user_input=..., response=..., retrieved_contexts=...)` -> MetricResult with a reason;
  `score`, `abatch_score`, `batch_score`), the one RAGAS's `@experiment` functions call (docs/adapters.md shows
  one); and still a SingleTurnMetric, so `ragas.evaluate(dataset, metrics=[GroundwireFaithfulness()])` keeps
  working (RAGAS itself marks `evaluate()` deprecated).
- `GroundwireOutcome()`: the pass / fail of the adapters' one rule as a discrete metric ("pass", "fail",
  "review"), the form RAGAS gives pass/fail metrics (collections interface only: `evaluate()` takes numbers).

Both follow docs/adapters.md: `GroundwireFaithfulness`'s value is the share of supported claims by default
(`metric="score"` for the answer score, the weakest claim's), and its name says which (`groundwire_supported_share`
or `groundwire_score`); passing is groundwire's routing; the thresholds are `accept_at` / `reject_at`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from groundwire.adapters.common import AdapterCheck, AdapterOptions, Assessment, Outcome
from groundwire.foundation.extras import optional_import

with optional_import("ragas", needed_by=__name__):
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics.base import MetricType, SingleTurnMetric
    from ragas.metrics.collections.base import BaseMetric
    from ragas.metrics.result import MetricResult
    from ragas.metrics.validators import DiscreteValidator

if TYPE_CHECKING:
    from ragas.run_config import RunConfig


class _Checked:
    """What both metrics share: their settings, and one assessment per (response, contexts, question)."""

    check: AdapterCheck
    name: str

    async def _assess(self, user_input: str | None, response: str | None,
                      retrieved_contexts: list[str] | None) -> Assessment:
        if not response or not retrieved_contexts:
            raise ValueError(f"{self.name} needs a response and retrieved_contexts")
        return await self.check.arun(response, list(retrieved_contexts), question=user_input or None)


class GroundwireFaithfulness(_Checked, SingleTurnMetric, BaseMetric):  # type: ignore[misc]  # as ragas own bases
    def __init__(self, name: str | None = None, **options: Unpack[AdapterOptions]) -> None:
        """`name`: the metric's column; None: the quantity it reports (`groundwire_supported_share`, or
        `groundwire_score` with `metric="score"`)."""
        # Not the dataclass __init__ of either base: their fields are set here, for both interfaces.
        self.check = AdapterCheck(f"{type(self).__name__}()", **options)
        self.name = self.check.metric_name if name is None else name
        self.allowed_values = (0.0, 1.0)
        self._required_columns = {
            MetricType.SINGLE_TURN: {"response", "retrieved_contexts", "user_input:optional"}
        }

    async def ascore(self, user_input: str | None = None, response: str | None = None,
                     retrieved_contexts: list[str] | None = None, **_: Any) -> MetricResult:
        assessment = await self._assess(user_input, response, retrieved_contexts)
        return MetricResult(value=assessment.value, reason=assessment.reason)

    def init(self, run_config: RunConfig) -> None:
        """Nothing to set up for `evaluate()`: no LLM, no embeddings (the verifier loads on first use)."""

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks: Any) -> float:
        assessment = await self._assess(sample.user_input, sample.response, sample.retrieved_contexts)
        return assessment.value


class GroundwireOutcome(_Checked, DiscreteValidator, BaseMetric):  # type: ignore[misc]  # as ragas own bases
    def __init__(self, name: str = "groundwire_outcome", **options: Unpack[AdapterOptions]) -> None:
        """`options` as every adapter's (AdapterOptions); `metric` does not change an outcome."""
        self.name = name
        self.allowed_values = [outcome.value for outcome in Outcome]
        self.check = AdapterCheck(f"{type(self).__name__}()", **options)

    async def ascore(self, user_input: str | None = None, response: str | None = None,
                     retrieved_contexts: list[str] | None = None, **_: Any) -> MetricResult:
        assessment = await self._assess(user_input, response, retrieved_contexts)
        return MetricResult(value=assessment.outcome.value, reason=assessment.reason)
