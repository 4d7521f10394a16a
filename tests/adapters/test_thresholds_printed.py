"""The adapters print the bundled model's accept_at as stored, 0.8314 (issue 37): in every outcome's reason (the
one rule's `reason`, which DeepEval, RAGAS, LlamaIndex, Haystack and LangChain all show), in DeepEval's evaluate()
table and its assert_test failure. The adapters use the shared bundled verifier here, as a user's default would."""

from __future__ import annotations

import asyncio
import re

import pytest

from conftest import BAD, GOOD, QUESTION, REFUND
from groundwire.adapters.common import AdapterCheck, Outcome

PASSES = "Refunds are accepted within 30 days of purchase."  # the bundled model accepts it (0.87)
STORED = "accept_at 0.8314"


@pytest.mark.parametrize(("answer", "outcome"), [(PASSES, Outcome.PASS), (GOOD, Outcome.REVIEW), (BAD, Outcome.FAIL)])
def test_every_outcomes_reason_names_accept_at_as_stored(answer: str, outcome: Outcome) -> None:
    assessment = AdapterCheck().run(answer, [REFUND], QUESTION)
    assert assessment.outcome is outcome and assessment.accept_at == 0.8314
    head = assessment.reason.splitlines()[0]
    assert re.findall(r"accept_at ([\d.]+\d)", head) == ["0.8314"]
    if outcome is not Outcome.PASS:
        assert re.findall(r"reject_at ([\d.]+\d)", head) == ["0.0"]


def test_deepeval_table_and_assert_test(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("deepeval")
    from deepeval import assert_test, evaluate
    from deepeval.test_case import LLMTestCase

    from groundwire.adapters.deepeval import GroundwireFaithfulness

    monkeypatch.setenv("COLUMNS", "400")  # one table row per line: the reason is not wrapped
    case = LLMTestCase(input=QUESTION, actual_output=BAD, retrieval_context=[REFUND])
    evaluate(test_cases=[case], metrics=[GroundwireFaithfulness()])
    table = capsys.readouterr().out
    # The Threshold column is DeepEval's own ({:.2f}); the reason beside it gives the value routing used.
    [row] = [line for line in table.splitlines() if "Groundwire Supported Share" in line and "FAIL" in line]
    assert STORED in row
    with pytest.raises(AssertionError) as failure:
        assert_test(case, [GroundwireFaithfulness(async_mode=False)])
    assert "threshold: 0.8314" in str(failure.value) and STORED in str(failure.value)


def test_the_other_adapters_show_the_same_reason() -> None:
    reasons: dict[str, str] = {}
    pytest.importorskip("ragas")
    from groundwire.adapters.ragas import GroundwireFaithfulness

    reasons["ragas"] = asyncio.run(GroundwireFaithfulness().ascore(user_input=QUESTION, response=BAD,
                                                                   retrieved_contexts=[REFUND])).reason
    pytest.importorskip("llama_index.core")
    from groundwire.adapters.llamaindex import GroundwireEvaluator

    reasons["llamaindex"] = GroundwireEvaluator().evaluate(QUESTION, BAD, contexts=[REFUND]).feedback
    pytest.importorskip("haystack")
    from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

    out = GroundwireFaithfulnessEvaluator().run(questions=[QUESTION], contexts=[[REFUND]], predicted_answers=[BAD])
    reasons["haystack"] = out["results"][0]["reason"]
    pytest.importorskip("langchain_core")
    from groundwire.adapters.langchain import GroundwireRunnable

    reasons["langchain"] = GroundwireRunnable(context=[REFUND]).invoke(BAD).reason
    for name, reason in reasons.items():
        assert STORED in reason.splitlines()[0], name
