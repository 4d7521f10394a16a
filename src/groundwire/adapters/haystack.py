"""Haystack: `GroundwireFaithfulnessEvaluator`, a @component with FaithfulnessEvaluator's inputs
(questions, contexts, predicted_answers) and outputs: `score` (the mean), `individual_scores`, and `results`
(per answer: statements, statement_scores, score, plus groundwire's outcome, passed and reason); `outcomes`
lists each answer's "pass", "fail" or "review" (docs/adapters.md has the rule). No LLM is called.

`run_async` serves `Pipeline.run_async` (Haystack 3 folded AsyncPipeline into Pipeline; on Haystack 2 it serves
`AsyncPipeline`); `to_dict` / `from_dict` keep every init parameter, so `Pipeline.dumps()` and
`loads()` give back the same evaluator. A `verifier` object cannot be saved: give `settings` (or `scorer`,
`accept_at` and `reject_at`) instead for a pipeline you serialise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Unpack

from groundwire.adapters.common import AdapterCheck, AdapterOptions, Assessment
from groundwire.foundation.extras import optional_import
from groundwire.foundation.types import Verdict

with optional_import("haystack", needed_by=__name__):
    from haystack import component, default_from_dict, default_to_dict
    from haystack.core.errors import SerializationError


@component
class GroundwireFaithfulnessEvaluator:
    def __init__(self, **options: Unpack[AdapterOptions]) -> None:
        """`options` as every adapter's (AdapterOptions)."""
        self.check = AdapterCheck("GroundwireFaithfulnessEvaluator()", **options)

    def to_dict(self) -> dict[str, Any]:
        if self.check.verifier is not None:
            raise SerializationError("GroundwireFaithfulnessEvaluator cannot save a Verifier object; build it with "
                                     "settings= (or scorer=, accept_at= and reject_at=) to serialise the pipeline")
        return default_to_dict(self, **self.check.saved())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroundwireFaithfulnessEvaluator:
        evaluator: GroundwireFaithfulnessEvaluator = default_from_dict(cls, data)
        return evaluator

    @component.output_types(individual_scores=list[float], score=float, results=list[dict[str, Any]],
                            outcomes=list[str])
    def run(self, questions: list[str], contexts: list[list[str]], predicted_answers: list[str]) -> dict[str, Any]:
        rows = _rows(questions, contexts, predicted_answers)
        return _outputs([self.check.run(answer, context, question) for question, context, answer in rows])

    @component.output_types(individual_scores=list[float], score=float, results=list[dict[str, Any]],
                            outcomes=list[str])
    async def run_async(self, questions: list[str], contexts: list[list[str]],
                        predicted_answers: list[str]) -> dict[str, Any]:
        rows = _rows(questions, contexts, predicted_answers)
        # The checks run in worker threads (averify), so the answers of one call overlap.
        return _outputs(await asyncio.gather(*(self.check.arun(answer, context, question)
                                               for question, context, answer in rows)))


def _rows(questions: list[str], contexts: list[list[str]],
          predicted_answers: list[str]) -> list[tuple[str, list[str], str]]:
    if not len(questions) == len(contexts) == len(predicted_answers):
        raise ValueError("questions, contexts and predicted_answers must have the same length")
    return [(question, list(context), answer)
            for question, context, answer in zip(questions, contexts, predicted_answers, strict=True)]


def _outputs(assessments: Sequence[Assessment]) -> dict[str, Any]:
    results = [{
        "statements": [result.claim.text for result in assessment.report.claims],
        "statement_scores": [int(result.verdict is Verdict.SUPPORTED) for result in assessment.report.claims],
        "score": assessment.value,
        "outcome": assessment.outcome.value,
        "passed": assessment.passed,
        "route": assessment.report.route.value,
        "reason": assessment.reason,
    } for assessment in assessments]
    individual = [assessment.value for assessment in assessments]
    mean = sum(individual) / len(individual) if individual else 0.0
    return {"individual_scores": individual, "score": mean, "results": results,
            "outcomes": [assessment.outcome.value for assessment in assessments]}
