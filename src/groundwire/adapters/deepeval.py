"""A DeepEval metric: `GroundwireFaithfulness()`, usable with `assert_test` and `evaluate`.

It reads `actual_output`, `retrieval_context` (and `input` as the question) from an LLMTestCase and calls no
LLM. It follows the adapters' one rule (docs/adapters.md): DeepEval's `score` is the share of supported claims by
default (`metric="score"`: the answer score, the weakest claim's), and the metric is named after it;
success is groundwire's routing: an accepted answer passes, a rejected one fails, and an escalated one is not a
success either: DeepEval counts a success of None as a pass, so review shows as a failure whose reason starts
"needs review", and `metric.outcome` is `Outcome.REVIEW`. `metric.threshold` shows the `accept_at` used.

DeepEval copies a metric for each test case by passing the instance's attributes named like `__init__`'s
parameters back to it; so the settings live in `check` (a parameter too), and DeepEval's own `score` and
`threshold` are properties, never instance attributes it would pass back as settings.
"""

from __future__ import annotations

from typing import Unpack

from groundwire.adapters.common import AdapterCheck, AdapterOptions, Assessment, Outcome, refuse_threshold
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import Report

with optional_import("deepeval", needed_by=__name__):
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase


class GroundwireFaithfulness(BaseMetric):  # type: ignore[no-untyped-call]  # deepeval's __init_subclass__
    def __init__(
        self,
        threshold: None = None,
        *,
        strict_mode: bool = False,
        async_mode: bool = True,
        check: AdapterCheck | None = None,
        **options: Unpack[AdapterOptions],
    ) -> None:
        """`options` as every adapter's (AdapterOptions), or `check`, made of them already (DeepEval's copy of a
        metric passes it back)."""
        refuse_threshold("GroundwireFaithfulness()", threshold)
        if check is not None and options:
            raise ValueError(f"pass either check or its options ({', '.join(options)}), not both")
        self.check = check or AdapterCheck("GroundwireFaithfulness()", **options)
        self._measured: float | None = None
        settings = self.check.settings
        self._accept_at: float | None = settings.accept_at if settings is not None else None
        self.strict_mode = strict_mode  # DeepEval's strict mode: the score is 1.0 for a pass, else 0.0
        self.async_mode = async_mode
        self.include_reason = True
        self.evaluation_model = "groundwire (offline, no LLM)"
        self.evaluation_cost = 0.0
        self.outcome: Outcome | None = None
        self.report: Report | None = None

    @property
    def score(self) -> float | None:
        return self._measured

    @score.setter
    def score(self, value: float | None) -> None:
        self._measured = value

    @property
    def threshold(self) -> float:  # type: ignore[override]
        """The accept_at routing uses (DeepEval requires a threshold before it measures: asking for it loads
        the verifier, which measuring would do next)."""
        if self._accept_at is None:
            self._accept_at = self.check.resolve().verifier.thresholds_for(self.check.task)[0]
        return self._accept_at

    def measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        return self._record(self.check.run(*self._inputs(test_case)))

    async def a_measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        return self._record(await self.check.arun(*self._inputs(test_case)))

    def is_successful(self) -> bool:
        self.success = self.error is None and self.outcome is Outcome.PASS
        return self.success

    @property
    def __name__(self) -> str:  # DeepEval shows a metric by this name: the quantity it reports
        return {"supported_share": "Groundwire Supported Share", "score": "Groundwire Score"}[self.check.metric]

    @staticmethod
    def _inputs(test_case: LLMTestCase) -> tuple[str, list[str], str | None]:
        if not test_case.actual_output:
            raise ValueError("GroundwireFaithfulness needs the test case's actual_output")
        # deepeval 4 also takes RetrievedContextData (context + source) in retrieval_context
        contexts = [item if isinstance(item, str) else item.context
                    for item in test_case.retrieval_context or test_case.context or []]
        if not contexts:
            raise ValueError("GroundwireFaithfulness needs the test case's retrieval_context (or context)")
        return test_case.actual_output, contexts, test_case.input or None

    def _record(self, assessment: Assessment) -> float:
        self.report = assessment.report
        self.outcome = assessment.outcome
        self._accept_at = assessment.accept_at
        self._measured = float(assessment.passed) if self.strict_mode else assessment.value
        self.reason = assessment.reason
        self.is_successful()
        return self._measured
