"""The adapters' one rule (docs/adapters.md), the same in all five frameworks: the metric value is the share of
supported claims by default, passing follows routing (accept passes, reject fails, escalate is review and never
a pass), and the thresholds are the verifier's accept_at / reject_at."""

from __future__ import annotations

import asyncio

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND
from groundwire import Verifier
from groundwire.adapters.common import AdapterCheck, Outcome, assess
from groundwire.foundation.types import Route

CASES = [(GOOD, REFUND, QUESTION, Outcome.PASS), (BAD, REFUND, QUESTION, Outcome.FAIL),
         (PLAUSIBLE, HOURS, HOURS_QUESTION, Outcome.REVIEW)]


def _deepeval(verifier: Verifier, answer: str, context: str, question: str) -> tuple[Outcome, bool, float, str]:
    from deepeval.test_case import LLMTestCase

    from groundwire.adapters.deepeval import GroundwireFaithfulness

    metric = GroundwireFaithfulness(verifier=verifier)
    metric.measure(LLMTestCase(input=question, actual_output=answer, retrieval_context=[context]))
    return metric.outcome, metric.is_successful(), metric.score, metric.reason


def _ragas(verifier: Verifier, answer: str, context: str, question: str) -> tuple[Outcome, bool, float, str]:
    from groundwire.adapters.ragas import GroundwireFaithfulness, GroundwireOutcome

    inputs = {"user_input": question, "response": answer, "retrieved_contexts": [context]}
    outcome = GroundwireOutcome(verifier=verifier).score(**inputs)
    score = GroundwireFaithfulness(verifier=verifier).score(**inputs)
    return Outcome(outcome.value), outcome.value == "pass", score.value, score.reason


def _llamaindex(verifier: Verifier, answer: str, context: str, question: str) -> tuple[Outcome, bool, float, str]:
    from groundwire.adapters.llamaindex import GroundwireEvaluator

    result = GroundwireEvaluator(verifier=verifier).evaluate(query=question, contexts=[context], response=answer)
    return Outcome(result.outcome), result.passing, result.score, result.feedback


def _langchain(verifier: Verifier, answer: str, context: str, question: str) -> tuple[Outcome, bool, float, str]:
    from langchain_core.documents import Document

    from groundwire.adapters.langchain import GroundwireRunnable

    grounded = GroundwireRunnable(context=[Document(page_content=context)], verifier=verifier).invoke(answer)
    return grounded.outcome, grounded.passed, grounded.value, grounded.reason


def _haystack(verifier: Verifier, answer: str, context: str, question: str) -> tuple[Outcome, bool, float, str]:
    from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

    out = GroundwireFaithfulnessEvaluator(verifier=verifier).run(questions=[question], contexts=[[context]],
                                                                 predicted_answers=[answer])
    (result,) = out["results"]
    return Outcome(out["outcomes"][0]), result["passed"], result["score"], result["reason"]


ADAPTERS = {"deepeval": (_deepeval, "deepeval"), "ragas": (_ragas, "ragas"),
            "llamaindex": (_llamaindex, "llama_index.core"), "langchain": (_langchain, "langchain_core"),
            "haystack": (_haystack, "haystack")}


@pytest.mark.parametrize("framework", sorted(ADAPTERS))
@pytest.mark.parametrize(("answer", "context", "question", "expected"), CASES, ids=["faithful", "fabricated",
                                                                                   "plausible"])
def test_every_adapter_reports_the_routing_outcome_and_the_supported_share(
        lexical, framework: str, answer: str, context: str, question: str, expected: Outcome) -> None:
    run, module = ADAPTERS[framework]
    pytest.importorskip(module)
    report = lexical.verify(answer, [context], question=question)
    outcome, passed, score, reason = run(lexical, answer, context, question)
    assert outcome is expected and {Route.ACCEPT: Outcome.PASS, Route.REJECT: Outcome.FAIL,
                                    Route.ESCALATE: Outcome.REVIEW}[report.route] is expected
    assert passed is (expected is Outcome.PASS)  # review is never a pass
    assert score == report.supported_share
    assert reason.startswith({Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}[expected])


def test_issue_22_answer_is_review_not_a_pass_while_its_min_score_clears_a_half(lexical) -> None:
    report = lexical.verify(PLAUSIBLE, [HOURS], question=HOURS_QUESTION)
    assessment = assess(report, "score", (lexical.accept_at, lexical.reject_at))
    assert report.score > 0.5 and assessment.value == assessment.score == report.score  # DeepEval used to pass it at threshold 0.5
    assert assessment.outcome is Outcome.REVIEW and not assessment.passed
    assert '"Support is open on weekdays from 9am to 5pm CET.": UNRESOLVED' in assessment.reason


def test_thresholds_are_accept_at_and_reject_at(lexical) -> None:
    relaxed = AdapterCheck(scorer="lexical", accept_at=0.5).run(PLAUSIBLE, [HOURS], HOURS_QUESTION)
    assert relaxed.outcome is Outcome.PASS and relaxed.accept_at == 0.5 and relaxed.value == 1.0
    # The plausible answer's lexical score is 0.71 (canonical figures: "9am to 5pm" is in the context).
    strict = AdapterCheck(scorer="lexical", reject_at=0.79).run(PLAUSIBLE, [HOURS], HOURS_QUESTION)
    assert strict.outcome is Outcome.FAIL and strict.reject_at == 0.79 and strict.report.score < 0.79
    same = asyncio.run(AdapterCheck(verifier=lexical).arun(PLAUSIBLE, [HOURS], HOURS_QUESTION))
    assert same.outcome is Outcome.REVIEW and (same.accept_at, same.reject_at) == (lexical.accept_at,
                                                                                   lexical.reject_at)


def test_bad_settings_are_refused(lexical) -> None:
    with pytest.raises(ValueError, match="'supported_share' or 'score'"):
        AdapterCheck(metric="mean")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes no score=: use metric= \(score=\"share\" is metric=\"supported_share\""):
        AdapterCheck("AdapterCheck()", score="min")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="either a verifier .* or accept_at"):
        AdapterCheck(verifier=lexical, accept_at=0.5)


def test_an_abstention_passes_and_a_claimless_answer_goes_to_review(lexical) -> None:
    for answer in ("NOT_IN_CONTEXT", "The context does not say how refunds are paid."):
        assessment = AdapterCheck(verifier=lexical).run(answer, [REFUND])
        assert assessment.outcome is Outcome.PASS and assessment.value == 1.0
    chat = AdapterCheck(verifier=lexical).run("Hello!", [REFUND])  # asserts nothing, declines nothing (issue 56)
    assert chat.outcome is Outcome.REVIEW and chat.value == 1.0
