"""GroundwireFaithfulness as a DeepEval metric: measure, assert_test and evaluate, offline."""

from __future__ import annotations

import pytest
from conftest import BAD, GOOD, QUESTION, REFUND

deepeval = pytest.importorskip("deepeval")
from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

from groundwire.adapters.deepeval import GroundwireFaithfulness  # noqa: E402


def _case(answer: str) -> LLMTestCase:
    return LLMTestCase(input=QUESTION, actual_output=answer, retrieval_context=[REFUND])


def test_measure_scores_and_lists_unsupported_claims(lexical) -> None:  # noqa: ANN001
    metric = GroundwireFaithfulness(threshold=0.5, verifier=lexical)
    good = metric.measure(_case(GOOD))
    assert good == lexical.verify(GOOD, [REFUND], question=QUESTION).score and metric.is_successful()
    bad = metric.measure(_case(BAD))
    assert bad < 0.5 and not metric.is_successful()
    assert "90 days" in metric.reason and "1 of 2 claims" in metric.reason
    assert "Shipping" not in metric.reason  # the supported claim is not listed
    share = GroundwireFaithfulness(score="share", verifier=lexical)
    assert share.measure(_case(BAD)) == 0.5


def test_assert_test_passes_and_fails(lexical) -> None:  # noqa: ANN001
    assert_test(_case(GOOD), [GroundwireFaithfulness(threshold=0.5, verifier=lexical, async_mode=False)])
    with pytest.raises(AssertionError, match="Groundwire Faithfulness"):
        assert_test(_case(BAD), [GroundwireFaithfulness(threshold=0.5, verifier=lexical, async_mode=False)])


def test_evaluate_runs_async_without_an_llm(lexical) -> None:  # noqa: ANN001
    result = evaluate(test_cases=[_case(GOOD), _case(BAD)], metrics=[GroundwireFaithfulness(verifier=lexical)])
    outcomes = {t.actual_output: t for t in result.test_results}
    assert outcomes[GOOD].success and not outcomes[BAD].success
    (metric_data,) = outcomes[BAD].metrics_data
    assert metric_data.name == "Groundwire Faithfulness" and "90 days" in metric_data.reason
