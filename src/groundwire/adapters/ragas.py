"""A RAGAS metric: `GroundwireFaithfulness()` in `ragas.evaluate(dataset, metrics=[...])` over an
EvaluationDataset. It reads `response`, `retrieved_contexts` and `user_input`, and needs no LLM or embeddings.

The default score is groundwire's answer score (the weakest claim); `score="share"` gives the share of
supported claims, which is how RAGAS defines its own faithfulness, for a like-for-like comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricType, SingleTurnMetric

from groundwire.adapters.common import AnswerScore, answer_score
from groundwire.core.averify import averify

if TYPE_CHECKING:
    from ragas.run_config import RunConfig

    from groundwire.core.verifier import Verifier


@dataclass
class GroundwireFaithfulness(SingleTurnMetric):
    name: str = "groundwire_faithfulness"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "retrieved_contexts", "user_input:optional"}}
    )
    score: AnswerScore = "min"  # type: ignore[assignment]  # ragas's deprecated score() method; see the docstring
    verifier: Verifier | None = None
    scorer: str | None = None
    task: str | None = None

    def init(self, run_config: RunConfig) -> None:
        """Nothing to set up: no LLM, no embeddings (the verifier loads on first use)."""

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks: Any) -> float:
        if not sample.response or not sample.retrieved_contexts:
            raise ValueError("groundwire_faithfulness needs a response and retrieved_contexts")
        report = await averify(sample.response, list(sample.retrieved_contexts), question=sample.user_input,
                               task=self.task, verifier=self.verifier, scorer=self.scorer)
        return answer_score(report, self.score)
