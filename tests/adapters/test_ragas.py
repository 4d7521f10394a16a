"""GroundwireFaithfulness and GroundwireOutcome as RAGAS 0.4 metrics: the collections interface
(ascore / score / abatch_score, as ragas.metrics.collections.Faithfulness has it) and ragas.evaluate over an
EvaluationDataset, offline."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

ragas = pytest.importorskip("ragas")
from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.metrics.collections import BaseMetric  # noqa: E402

from groundwire.adapters.ragas import GroundwireFaithfulness, GroundwireOutcome  # noqa: E402


def _dataset() -> EvaluationDataset:
    return EvaluationDataset.from_list([
        {"user_input": QUESTION, "retrieved_contexts": [REFUND], "response": GOOD},
        {"user_input": QUESTION, "retrieved_contexts": [REFUND], "response": BAD},
    ])


def test_collections_interface_like_ragas_faithfulness(lexical) -> None:
    metric = GroundwireFaithfulness(verifier=lexical)
    assert isinstance(metric, BaseMetric)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # none from our metric
        result = asyncio.run(metric.ascore(user_input=QUESTION, response=BAD, retrieved_contexts=[REFUND]))
        batch = asyncio.run(metric.abatch_score([
            {"user_input": QUESTION, "response": GOOD, "retrieved_contexts": [REFUND]},
            {"user_input": HOURS_QUESTION, "response": PLAUSIBLE, "retrieved_contexts": [HOURS]}]))
        synchronous = metric.score(user_input=QUESTION, response=BAD, retrieved_contexts=[REFUND])
    assert result.value == 0.5 and synchronous.value == 0.5  # 1 of 2 claims supported, RAGAS's own definition
    assert result.reason.startswith("fail:") and "90 days" in result.reason
    assert [r.value for r in batch] == [1.0, 0.0] and batch[1].reason.startswith("needs review:")
    weakest = GroundwireFaithfulness(metric="score", verifier=lexical).score(response=BAD, retrieved_contexts=[REFUND])
    assert weakest.value == lexical.verify(BAD, [REFUND]).score
    with pytest.raises(ValueError, match="needs a response and retrieved_contexts"):
        metric.score(user_input=QUESTION, response=BAD, retrieved_contexts=[])


def test_outcome_is_a_discrete_pass_fail_review_metric(lexical) -> None:
    metric = GroundwireOutcome(verifier=lexical)
    inputs = [{"user_input": QUESTION, "response": GOOD, "retrieved_contexts": [REFUND]},
              {"user_input": QUESTION, "response": BAD, "retrieved_contexts": [REFUND]},
              {"user_input": HOURS_QUESTION, "response": PLAUSIBLE, "retrieved_contexts": [HOURS]}]
    results = metric.batch_score(inputs)
    assert [r.value for r in results] == ["pass", "fail", "review"]
    assert all(metric.validate_result_value(r.value) is None for r in results)
    assert metric.validate_result_value("maybe") is not None


def test_evaluate_over_an_evaluation_dataset(lexical) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate(_dataset(), metrics=[GroundwireFaithfulness(verifier=lexical),
                                               GroundwireFaithfulness(metric="score", verifier=lexical)],
                          show_progress=False, raise_exceptions=True)
    deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert all("evaluate() is deprecated" in message for message in deprecations), deprecations
    # RAGAS warns that evaluate() itself is deprecated (the collections interface above is its successor)
    frame = result.to_pandas()
    expected = [lexical.verify(answer, [REFUND], question=QUESTION) for answer in (GOOD, BAD)]
    assert frame["groundwire_supported_share"].tolist() == [1.0, 0.5]  # what RAGAS's own faithfulness counts
    assert frame["groundwire_score"].tolist() == [r.score for r in expected]  # each named after its quantity


def test_single_turn_score(lexical) -> None:
    metric = GroundwireFaithfulness(metric="score", verifier=lexical)
    sample = SingleTurnSample(user_input=QUESTION, retrieved_contexts=[REFUND], response=BAD)
    assert metric.single_turn_score(sample) == lexical.verify(BAD, [REFUND], question=QUESTION).score
