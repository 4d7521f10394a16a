"""A DeepEval metric: `GroundwireFaithfulness(threshold=0.5)`, usable with `assert_test` and `evaluate`.

It reads `actual_output`, `retrieval_context` (and `input` as the question) from an LLMTestCase. It calls no LLM;
`reason` lists the claims the context does not support.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

from groundwire.adapters.common import AnswerScore, answer_score, reason
from groundwire.core.averify import averify
from groundwire.core.types import Report

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier


class GroundwireFaithfulness(BaseMetric):
    def __init__(
        self,
        threshold: float = 0.5,
        *,
        score: AnswerScore = "min",
        verifier: Verifier | None = None,
        scorer: str | None = None,
        task: str | None = None,
        strict_mode: bool = False,
        async_mode: bool = True,
    ) -> None:
        self.threshold = 1.0 if strict_mode else threshold
        self.strict_mode = strict_mode
        self.async_mode = async_mode
        self.include_reason = True
        self.evaluation_model = "groundwire (offline, no LLM)"
        self.evaluation_cost = 0.0
        self.score_kind: AnswerScore = score
        self.task = task
        self._verifier = verifier
        self._scorer = scorer
        self.report: Report | None = None

    def measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        from groundwire.core.verifier import given_or_shared

        contexts, question = self._inputs(test_case)
        report = given_or_shared(self._verifier, self._scorer).verify(
            test_case.actual_output, contexts, question=question, task=self.task)
        return self._record(report)

    async def a_measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        contexts, question = self._inputs(test_case)
        report = await averify(test_case.actual_output, contexts, question=question, task=self.task,
                               verifier=self._verifier, scorer=self._scorer)
        return self._record(report)

    def is_successful(self) -> bool:
        self.success = self.error is None and self.score is not None and self.score >= self.threshold
        return self.success

    @property
    def __name__(self) -> str:  # DeepEval shows a metric by this name
        return "Groundwire Faithfulness"

    @staticmethod
    def _inputs(test_case: LLMTestCase) -> tuple[list[str], str | None]:
        if not test_case.actual_output:
            raise ValueError("GroundwireFaithfulness needs the test case's actual_output")
        contexts = list(test_case.retrieval_context or test_case.context or [])
        if not contexts:
            raise ValueError("GroundwireFaithfulness needs the test case's retrieval_context (or context)")
        return contexts, test_case.input or None

    def _record(self, report: Report) -> float:
        self.report = report
        self.score = answer_score(report, self.score_kind)
        self.reason = reason(report)
        self.is_successful()
        return self.score
