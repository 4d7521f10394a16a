"""GroundwireEvaluator as a LlamaIndex BaseEvaluator, and GroundedQueryEngine repairing or abstaining."""

from __future__ import annotations

import pytest
from conftest import BAD, GOOD, QUESTION, REFUND

pytest.importorskip("llama_index.core")
from llama_index.core.base.base_query_engine import BaseQueryEngine  # noqa: E402
from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402

from groundwire.adapters.llamaindex import GroundedQueryEngine, GroundwireEvaluator  # noqa: E402


class FixedEngine(BaseQueryEngine):
    """A query engine that 'retrieves' REFUND and answers with a fixed text (no LLM)."""

    def __init__(self, answer: str) -> None:
        super().__init__(callback_manager=None)
        self.answer = answer

    def _get_prompt_modules(self) -> dict:
        return {}

    def _query(self, query_bundle) -> Response:  # noqa: ANN001
        return Response(response=self.answer, source_nodes=[NodeWithScore(node=TextNode(text=REFUND), score=1.0)])

    async def _aquery(self, query_bundle) -> Response:  # noqa: ANN001
        return self._query(query_bundle)


def test_evaluator_returns_an_evaluation_result(lexical) -> None:  # noqa: ANN001
    evaluator = GroundwireEvaluator(verifier=lexical)
    good = evaluator.evaluate(query=QUESTION, contexts=[REFUND], response=GOOD)
    assert good.passing is True and good.score == lexical.verify(GOOD, [REFUND], question=QUESTION).score
    bad = evaluator.evaluate(query=QUESTION, contexts=[REFUND], response=BAD)
    assert bad.passing is False and bad.score < good.score and "90 days" in bad.feedback
    from_response = evaluator.evaluate_response(query=QUESTION, response=FixedEngine(BAD).query(QUESTION))
    assert from_response.score == bad.score
    share = GroundwireEvaluator(threshold=0.5, score="share", verifier=lexical)
    assert share.evaluate(query=QUESTION, contexts=[REFUND], response=BAD).passing is True  # 1 of 2 supported


def test_grounded_query_engine_repairs_and_abstains(lexical) -> None:  # noqa: ANN001
    kept = GroundedQueryEngine(FixedEngine(GOOD), verifier=lexical).query(QUESTION)
    assert kept.response == GOOD and kept.metadata["groundwire"]["repaired"] is None
    repaired = GroundedQueryEngine(FixedEngine(BAD), verifier=lexical).query(QUESTION)
    assert "90 days" not in repaired.response and "Shipping takes 5 business days" in repaired.response
    assert repaired.metadata["groundwire"]["report"]["decision"] != "accept"
    strict = GroundedQueryEngine(FixedEngine(BAD), verifier=lexical, min_surviving_share=0.9,
                                 abstain_message="I could not find that in the documents.")
    abstained = strict.query(QUESTION)
    assert abstained.response == "I could not find that in the documents."
    assert abstained.metadata["groundwire"]["abstained"] is True
