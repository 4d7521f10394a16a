"""GroundwireFaithfulness as a DeepEval metric: measure, assert_test and evaluate, offline."""

from __future__ import annotations

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

deepeval = pytest.importorskip("deepeval")
from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.metrics.utils.metrics import copy_metrics  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

from groundwire.adapters.common import Outcome  # noqa: E402
from groundwire.adapters.deepeval import GroundwireFaithfulness  # noqa: E402


def _case(answer: str, context: str = REFUND, question: str = QUESTION) -> LLMTestCase:
    return LLMTestCase(input=question, actual_output=answer, retrieval_context=[context])


def test_measure_scores_and_lists_unsupported_claims(lexical) -> None:
    metric = GroundwireFaithfulness(verifier=lexical)
    assert metric.measure(_case(GOOD)) == 1.0 and metric.is_successful() and metric.outcome is Outcome.PASS
    assert metric.measure(_case(BAD)) == 0.5 and not metric.is_successful()  # 1 of 2 claims supported
    assert metric.outcome is Outcome.FAIL and metric.threshold == lexical.accept_at
    assert "90 days" in metric.reason and "1 of 2 claims" in metric.reason
    assert "Shipping" not in metric.reason  # the supported claim is not listed
    weakest = GroundwireFaithfulness(metric="score", verifier=lexical)
    assert weakest.measure(_case(BAD)) == lexical.verify(BAD, [REFUND], question=QUESTION).score


def test_escalated_answer_is_review_and_not_a_success(lexical) -> None:
    metric = GroundwireFaithfulness(metric="score", verifier=lexical)
    assert metric.measure(_case(PLAUSIBLE, HOURS, HOURS_QUESTION)) > 0.5  # the score alone would have passed it
    assert metric.outcome is Outcome.REVIEW and metric.is_successful() is False
    assert metric.reason.startswith("needs review:")
    with pytest.raises(AssertionError, match="needs review"):
        assert_test(_case(PLAUSIBLE, HOURS, HOURS_QUESTION), [GroundwireFaithfulness(verifier=lexical,
                                                                                     async_mode=False)])


def test_retrieved_context_data_is_read(lexical) -> None:
    from deepeval.test_case.llm_test_case import RetrievedContextData

    case = LLMTestCase(input=QUESTION, actual_output=BAD,
                       retrieval_context=[RetrievedContextData(context=REFUND, source="policy.md")])
    metric = GroundwireFaithfulness(verifier=lexical)
    assert metric.measure(case) == 0.5 and metric.outcome is Outcome.FAIL


def test_strict_mode_scores_one_for_a_pass_and_zero_otherwise(lexical) -> None:
    metric = GroundwireFaithfulness(verifier=lexical, strict_mode=True)
    assert metric.measure(_case(GOOD)) == 1.0 and metric.measure(_case(BAD)) == 0.0


def test_threshold_is_refused_with_the_reason() -> None:
    with pytest.raises(TypeError, match="takes no threshold.*accept_at="):
        GroundwireFaithfulness(threshold=0.5)  # type: ignore[arg-type]


def test_assert_test_passes_and_fails(lexical) -> None:
    assert_test(_case(GOOD), [GroundwireFaithfulness(verifier=lexical, async_mode=False)])
    with pytest.raises(AssertionError, match="Groundwire Supported Share"):
        assert_test(_case(BAD), [GroundwireFaithfulness(verifier=lexical, async_mode=False)])


def test_deepeval_copies_keep_every_setting(lexical) -> None:
    metric = GroundwireFaithfulness(metric="score", verifier=lexical, task="qa", strict_mode=False, async_mode=False)
    metric.measure(_case(BAD))  # a measured metric too: its score and threshold are not passed back as settings
    (copy,) = copy_metrics([metric])
    assert copy.check == metric.check and copy.async_mode is False and copy.score is None


def test_evaluate_runs_async_without_an_llm(lexical) -> None:
    cases = [_case(GOOD), _case(BAD), _case(PLAUSIBLE, HOURS, HOURS_QUESTION)]
    result = evaluate(test_cases=cases, metrics=[GroundwireFaithfulness(metric="score", verifier=lexical)])
    outcomes = {t.actual_output: t for t in result.test_results}
    assert outcomes[GOOD].success and not outcomes[BAD].success and not outcomes[PLAUSIBLE].success
    (metric_data,) = outcomes[BAD].metrics_data
    assert metric_data.name == "Groundwire Score" and "90 days" in metric_data.reason
    # the copies DeepEval measures keep metric="score" and the lexical verifier
    assert metric_data.score == lexical.verify(BAD, [REFUND], question=QUESTION).score
    assert outcomes[PLAUSIBLE].metrics_data[0].reason.startswith("needs review:")
