"""GroundwireFaithfulnessEvaluator as a Haystack component, alone and in a Pipeline, offline."""

from __future__ import annotations

import pytest
from conftest import BAD, GOOD, QUESTION, REFUND

pytest.importorskip("haystack")
from haystack import Pipeline  # noqa: E402

from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator  # noqa: E402


def test_outputs_mirror_faithfulness_evaluator(lexical) -> None:  # noqa: ANN001
    evaluator = GroundwireFaithfulnessEvaluator(verifier=lexical)
    out = evaluator.run(questions=[QUESTION, QUESTION], contexts=[[REFUND], [REFUND]], predicted_answers=[GOOD, BAD])
    assert set(out) == {"score", "individual_scores", "results"}
    expected = [lexical.verify(a, [REFUND], question=QUESTION).score for a in (GOOD, BAD)]
    assert out["individual_scores"] == expected and out["score"] == pytest.approx(sum(expected) / 2)
    assert out["results"][1]["statement_scores"] == [0, 1] and len(out["results"][1]["statements"]) == 2
    assert "90 days" in out["results"][1]["reason"]


def test_runs_in_a_pipeline_with_share_scores(lexical) -> None:  # noqa: ANN001
    pipeline = Pipeline()
    pipeline.add_component("faithfulness", GroundwireFaithfulnessEvaluator(score="share", verifier=lexical))
    out = pipeline.run({"faithfulness": {"questions": [QUESTION], "contexts": [[REFUND]], "predicted_answers": [BAD]}})
    assert out["faithfulness"]["individual_scores"] == [0.5]
    with pytest.raises(ValueError, match="same length"):
        GroundwireFaithfulnessEvaluator(verifier=lexical).run(questions=[QUESTION], contexts=[], predicted_answers=[BAD])
