"""GroundwireEvaluator as a LlamaIndex BaseEvaluator, and GroundedQueryEngine repairing or abstaining."""

from __future__ import annotations

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

pytest.importorskip("llama_index.core")
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from groundwire.adapters.llamaindex import GroundedQueryEngine, GroundwireEvaluator


class FixedEngine(BaseQueryEngine):
    """A query engine that 'retrieves' REFUND and answers with a fixed text (no LLM)."""

    def __init__(self, answer: str, context: str = REFUND) -> None:
        super().__init__(callback_manager=None)
        self.answer = answer
        self.context = context

    def _get_prompt_modules(self) -> dict:
        return {}

    def _query(self, query_bundle) -> Response:
        return Response(response=self.answer, source_nodes=[NodeWithScore(node=TextNode(text=self.context), score=1.0)])

    async def _aquery(self, query_bundle) -> Response:
        return self._query(query_bundle)


def test_evaluator_returns_an_evaluation_result(lexical) -> None:
    evaluator = GroundwireEvaluator(verifier=lexical)
    good = evaluator.evaluate(query=QUESTION, contexts=[REFUND], response=GOOD)
    assert good.passing is True and good.score == 1.0 and good.outcome == "pass"
    bad = evaluator.evaluate(query=QUESTION, contexts=[REFUND], response=BAD)
    assert bad.passing is False and bad.outcome == "fail" and bad.score == 0.5 and "90 days" in bad.feedback
    from_response = evaluator.evaluate_response(query=QUESTION, response=FixedEngine(BAD).query(QUESTION))
    assert from_response.score == bad.score
    weakest = GroundwireEvaluator(metric="score", verifier=lexical).evaluate(query=QUESTION, contexts=[REFUND],
                                                                         response=BAD)
    assert weakest.score == lexical.verify(BAD, [REFUND], question=QUESTION).score


def test_escalated_answer_is_review_not_passing(lexical) -> None:
    result = GroundwireEvaluator(verifier=lexical).evaluate(query=HOURS_QUESTION, contexts=[HOURS],
                                                            response=PLAUSIBLE)
    assert result.passing is False and result.outcome == "review" and result.feedback.startswith("needs review:")
    with pytest.raises(TypeError, match="takes no threshold"):
        GroundwireEvaluator(threshold=0.5)  # type: ignore[arg-type]


def test_grounded_query_engine_repairs_and_abstains(lexical) -> None:
    kept = GroundedQueryEngine(FixedEngine(GOOD), verifier=lexical).query(QUESTION)
    assert kept.response == GOOD and kept.metadata["groundwire"]["repaired"] is None
    repaired = GroundedQueryEngine(FixedEngine(BAD), verifier=lexical).query(QUESTION)
    assert "90 days" not in repaired.response and "Shipping takes 5 business days" in repaired.response
    assert repaired.metadata["groundwire"]["report"]["route"] != "accept"
    strict = GroundedQueryEngine(FixedEngine(BAD), verifier=lexical, min_surviving_share=0.9,
                                 abstain_message="I could not find that in the documents.")
    abstained = strict.query(QUESTION)
    assert abstained.response == "I could not find that in the documents."
    assert abstained.metadata["groundwire"]["abstained"] is True


def test_repair_cites_nothing_the_nodes_did_not_name(lexical) -> None:
    # The nodes carry no labels: repair used to write the surviving claim as "... [S1]." (groundwire's own
    # chunk id), and to replace the writer's "[1]" by "[S1]".
    repaired = GroundedQueryEngine(FixedEngine(BAD), verifier=lexical).query(QUESTION)
    assert repaired.response == "Shipping takes 5 business days."
    cited = "Refunds are accepted within 90 days of purchase [1]. Shipping takes 5 business days [1]."
    kept = GroundedQueryEngine(FixedEngine(cited), verifier=lexical).query(QUESTION)
    assert kept.response == "Shipping takes 5 business days [1]."  # the writer's own marker, kept whole
    assert kept.metadata["groundwire"]["outcome"] == "fail"


PLAN = "The plan costs $49 per month and includes email support."
COMPOUND = "The plan costs $49 and includes priority phone support."  # the price supported, phone support not


@pytest.mark.parametrize("scorer", ["lexical", None])  # None: the bundled model
def test_ground_response_keeps_the_supported_part_of_a_compound_claim(scorer: str | None) -> None:
    # Issue 37: the one claim was dropped whole, and the answer became NOT_IN_CONTEXT.
    from groundwire.adapters.llamaindex import ground_response

    response = FixedEngine(COMPOUND, context=PLAN).query(QUESTION)
    grounded = ground_response(response, QUESTION, scorer=scorer)
    assert grounded.response == "The plan costs $49."  # no [S1]: the nodes named no chunk
    assert "phone support" not in grounded.response and grounded.metadata["groundwire"]["abstained"] is False
    (action,) = grounded.metadata["groundwire"]["repaired"]["actions"]
    assert [part["action"] for part in action["parts"]] == ["keep", "drop"]
    engine = GroundedQueryEngine(FixedEngine(COMPOUND, context=PLAN), scorer=scorer).query(QUESTION)
    assert "$49" in engine.response and "phone support" not in engine.response
