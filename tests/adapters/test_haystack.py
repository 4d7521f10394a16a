"""GroundwireFaithfulnessEvaluator as a Haystack component: alone, in a Pipeline (run and run_async), and
through Pipeline.dumps() / loads(), offline."""

from __future__ import annotations

import asyncio

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

pytest.importorskip("haystack")
from haystack import Pipeline
from haystack.core.errors import SerializationError

from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator
from groundwire.config import CheckSettings

ALLOWED = ["groundwire.adapters.haystack"]  # Haystack 3 loads only classes from modules the caller trusts


def test_outputs_mirror_faithfulness_evaluator(lexical) -> None:
    evaluator = GroundwireFaithfulnessEvaluator(verifier=lexical)
    out = evaluator.run(questions=[QUESTION, QUESTION, HOURS_QUESTION], contexts=[[REFUND], [REFUND], [HOURS]],
                        predicted_answers=[GOOD, BAD, PLAUSIBLE])
    assert set(out) == {"score", "individual_scores", "results", "outcomes"}
    assert out["individual_scores"] == [1.0, 0.5, 0.0] and out["score"] == pytest.approx(0.5)
    assert out["outcomes"] == ["pass", "fail", "review"]
    assert [r["passed"] for r in out["results"]] == [True, False, False]
    assert out["results"][1]["statement_scores"] == [0, 1] and len(out["results"][1]["statements"]) == 2
    assert "90 days" in out["results"][1]["reason"] and out["results"][2]["reason"].startswith("needs review:")
    with pytest.raises(ValueError, match="same length"):
        evaluator.run(questions=[QUESTION], contexts=[], predicted_answers=[BAD])


def _pipeline(evaluator: GroundwireFaithfulnessEvaluator) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("faithfulness", evaluator)
    return pipeline


INPUTS = {"faithfulness": {"questions": [QUESTION], "contexts": [[REFUND]], "predicted_answers": [BAD]}}


def test_dumps_and_loads_keep_every_init_parameter() -> None:
    evaluator = GroundwireFaithfulnessEvaluator(metric="score", scorer="lexical", task="qa", accept_at=0.7,
                                                reject_at=0.25)
    saved = _pipeline(evaluator).dumps()
    loaded = Pipeline.loads(saved, allowed_modules=ALLOWED)
    assert loaded.get_component("faithfulness").check == evaluator.check
    carried = GroundwireFaithfulnessEvaluator(settings=CheckSettings(scorer="lexical", meaning=False, accept_at=0.7))
    again = Pipeline.loads(_pipeline(carried).dumps(), allowed_modules=ALLOWED).get_component("faithfulness")
    assert again.check == carried.check and again.check.settings == CheckSettings(scorer="lexical", meaning=False,
                                                                                  accept_at=0.7)
    share = _pipeline(GroundwireFaithfulnessEvaluator(metric="supported_share", scorer="lexical"))
    before = share.run(INPUTS)["faithfulness"]
    after = Pipeline.loads(share.dumps(), allowed_modules=ALLOWED).run(INPUTS)["faithfulness"]
    assert before["individual_scores"] == after["individual_scores"] == [0.5]  # issue 22: 0.0 after loading
    assert before["outcomes"] == after["outcomes"] == ["fail"]


def test_a_verifier_object_is_refused_when_saving(lexical) -> None:
    with pytest.raises(SerializationError, match="scorer=, accept_at= and reject_at="):
        _pipeline(GroundwireFaithfulnessEvaluator(verifier=lexical)).dumps()


def test_run_async_in_a_pipeline(lexical, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = GroundwireFaithfulnessEvaluator(verifier=lexical)
    monkeypatch.setattr(evaluator, "run", lambda **_: pytest.fail("the async pipeline called run"))
    assert evaluator.__haystack_supports_async__
    direct = asyncio.run(evaluator.run_async(questions=[QUESTION, HOURS_QUESTION], contexts=[[REFUND], [HOURS]],
                                             predicted_answers=[BAD, PLAUSIBLE]))
    assert direct["outcomes"] == ["fail", "review"] and direct["individual_scores"] == [0.5, 0.0]
    out = asyncio.run(_pipeline(evaluator).run_async(INPUTS))["faithfulness"]
    assert out["individual_scores"] == [0.5] and out["outcomes"] == ["fail"]


def test_the_docstring_names_what_the_installed_haystack_has() -> None:
    # Issue 37: it said `run_async` serves AsyncPipeline, which Haystack 3 folded into Pipeline.
    import haystack

    from groundwire.adapters import haystack as adapter

    doc = " ".join((adapter.__doc__ or "").split())
    assert "`run_async` serves `Pipeline.run_async`" in doc and callable(Pipeline.run_async)
    if not hasattr(haystack, "AsyncPipeline"):  # Haystack 3: named only as what Haystack 2 had
        assert doc.count("AsyncPipeline") == 2 and "on Haystack 2 it serves `AsyncPipeline`" in doc
