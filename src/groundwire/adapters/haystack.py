"""Haystack: `GroundwireFaithfulnessEvaluator`, a @component with FaithfulnessEvaluator's inputs
(questions, contexts, predicted_answers) and outputs: `score` (the mean), `individual_scores`, and `results`
(per answer: statements, statement_scores, score, plus groundwire's decision and reason). No LLM is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haystack import component

from groundwire.adapters.common import AnswerScore, answer_score, reason
from groundwire.core.types import Verdict

if TYPE_CHECKING:
    from groundwire.core.verifier import Verifier


@component
class GroundwireFaithfulnessEvaluator:
    def __init__(self, *, score: AnswerScore = "min", verifier: Verifier | None = None, scorer: str | None = None,
                 task: str | None = None) -> None:
        self.score_kind: AnswerScore = score
        self.verifier = verifier
        self.scorer = scorer
        self.task = task

    @component.output_types(individual_scores=list[float], score=float, results=list[dict[str, Any]])
    def run(self, questions: list[str], contexts: list[list[str]], predicted_answers: list[str]) -> dict[str, Any]:
        from groundwire.core.verifier import given_or_shared

        if not len(questions) == len(contexts) == len(predicted_answers):
            raise ValueError("questions, contexts and predicted_answers must have the same length")
        verifier = given_or_shared(self.verifier, self.scorer)
        results = []
        for question, context, answer in zip(questions, contexts, predicted_answers, strict=True):
            report = verifier.verify(answer, list(context), question=question, task=self.task)
            results.append({
                "statements": [result.claim.text for result in report.claims],
                "statement_scores": [int(result.verdict is Verdict.SUPPORTED) for result in report.claims],
                "score": answer_score(report, self.score_kind),
                "decision": report.decision.value,
                "reason": reason(report),
            })
        individual = [result["score"] for result in results]
        mean = sum(individual) / len(individual) if individual else 0.0
        return {"individual_scores": individual, "score": mean, "results": results}
