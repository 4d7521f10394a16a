"""GroundwireFaithfulness as a RAGAS metric in ragas.evaluate over an EvaluationDataset, offline."""

from __future__ import annotations

import pytest
from conftest import BAD, GOOD, QUESTION, REFUND

ragas = pytest.importorskip("ragas")
from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402

from groundwire.adapters.ragas import GroundwireFaithfulness  # noqa: E402


def _dataset() -> EvaluationDataset:
    return EvaluationDataset.from_list([
        {"user_input": QUESTION, "retrieved_contexts": [REFUND], "response": GOOD},
        {"user_input": QUESTION, "retrieved_contexts": [REFUND], "response": BAD},
    ])


def test_evaluate_over_an_evaluation_dataset(lexical) -> None:  # noqa: ANN001
    result = evaluate(_dataset(), metrics=[GroundwireFaithfulness(verifier=lexical),
                                           GroundwireFaithfulness(name="groundwire_share", score="share",
                                                                  verifier=lexical)],
                      show_progress=False, raise_exceptions=True)
    frame = result.to_pandas()
    expected = [lexical.verify(answer, [REFUND], question=QUESTION) for answer in (GOOD, BAD)]
    assert frame["groundwire_faithfulness"].tolist() == [r.score for r in expected]
    assert frame["groundwire_share"].tolist() == [1.0, 0.5]  # what RAGAS's own faithfulness counts
    assert frame["groundwire_faithfulness"][1] < 0.5 <= frame["groundwire_faithfulness"][0]


def test_single_turn_score(lexical) -> None:  # noqa: ANN001
    metric = GroundwireFaithfulness(verifier=lexical)
    sample = SingleTurnSample(user_input=QUESTION, retrieved_contexts=[REFUND], response=BAD)
    assert metric.single_turn_score(sample) == lexical.verify(BAD, [REFUND], question=QUESTION).score
