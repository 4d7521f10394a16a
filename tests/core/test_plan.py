"""Issue 18 item 2 and issue 20 item 2: one planning step (claims, windows, pairs) that the limits read and
`Verifier.run` executes, and sentence splitting that stays linear on hostile inputs."""

from __future__ import annotations

import pytest

from groundwire.core.claims import RuleDecomposer, StoppingDecomposer, sentences
from groundwire.core.verifier import Verifier
from groundwire.pipeline import CheckItem, check
from groundwire.scoring import get_scorer

ANSWER = "The plan costs $19 per month. Refunds take 14 days. Shipping is free in the EU, and it takes 3 days."
CHUNKS = ["The plan costs $19 per month and shipping is free in the EU.", "Refunds take 14 days to arrive."]




def _without_timings(report_dict: dict) -> dict:
    return {key: value for key, value in report_dict.items() if key != "timings"}


def test_run_of_a_plan_is_verify() -> None:
    verifier = Verifier(get_scorer("lexical"))
    plan = verifier.plan(ANSWER, CHUNKS)
    assert plan.complete and plan.workload == verifier.workload(ANSWER, CHUNKS)
    assert plan.workload.claims == 4 and plan.workload.pairs == int(plan.allowed.sum()) > 0
    ran = verifier.run(plan, task="qa").to_dict()
    verified = verifier.verify(ANSWER, CHUNKS, task="qa").to_dict()
    assert _without_timings(ran) == _without_timings(verified)
    assert set(ran["timings"]) == {"decompose", "checks", "windows", "score", "aggregate", "total"}


def test_check_with_a_plan_splits_the_answer_once(counting_decomposer) -> None:
    decomposer = counting_decomposer
    verifier = Verifier(get_scorer("lexical"), decomposer=decomposer)
    assert not isinstance(decomposer, StoppingDecomposer)
    item = CheckItem(ANSWER, [])
    plan = verifier.plan(ANSWER, CHUNKS, max_claims=100)
    report = check(verifier, CheckItem(ANSWER, plan.context), plan=plan)
    assert decomposer.calls == 1 and len(report.claims) == 4
    with pytest.raises(ValueError, match="another answer"):
        check(verifier, CheckItem("Another answer entirely.", plan.context), plan=plan)
    assert item.answer == ANSWER


def test_a_plan_stops_splitting_past_max_claims_and_cannot_run(counting_decomposer) -> None:
    verifier = Verifier(get_scorer("lexical"))
    answer = " ".join(f"Plan {i} costs ${i} per month." for i in range(500))
    everything = RuleDecomposer().decompose(answer)
    plan = verifier.plan(answer, CHUNKS, max_claims=10)
    assert not plan.complete and list(plan.claims) == everything[:11] and plan.windows == ()
    with pytest.raises(ValueError, match="claim limit"):
        verifier.run(plan)
    # Within the limit the plan is whole, and the split is the one decompose() gives.
    whole = verifier.plan(answer, CHUNKS, max_claims=500)
    assert whole.complete and list(whole.claims) == everything
    # A decomposer that cannot stop early splits everything: the plan counts every claim, and cannot run either.
    counted = Verifier(get_scorer("lexical"), decomposer=counting_decomposer).plan(answer, CHUNKS, max_claims=10)
    assert not counted.complete and counted.workload.claims == 500


@pytest.mark.parametrize("limit", [0, 1, 3, 7])
def test_a_split_with_a_limit_is_a_prefix_of_decompose(limit: int) -> None:
    answer = "Hi! The plan costs $19. Refunds take 14 days; shipping is free.\n- Express ships in 2 days.\nThanks!"
    split = RuleDecomposer().split(answer, limit=limit)
    everything = RuleDecomposer().decompose(answer)
    assert split.claims == everything[: limit + 1] and split.complete == (len(everything) <= limit)


def test_sentences_with_no_claim_count_against_the_limit_too() -> None:
    # Issue 38: 50,000 lines of "x" have no claim, so a limit on claims alone never stopped their splitting.
    answer = "x\n" * 50_000
    split = RuleDecomposer().split(answer, limit=10)
    assert not split.complete and split.claims == []
    plan = Verifier(get_scorer("lexical")).plan(answer, CHUNKS, max_claims=10)
    assert not plan.complete
    with pytest.raises(ValueError, match="claim limit"):
        Verifier(get_scorer("lexical")).run(plan)
    # Filler within the bound is read whole: a greeting or two does not make a plan incomplete.
    polite = "Hi!\nThanks for asking.\nThe plan costs $19.\nHope this helps!"
    split = RuleDecomposer().split(polite, limit=1)
    assert split.complete and split.claims == RuleDecomposer().decompose(polite) and split.sentences == sentences(polite)


def test_a_sentence_longer_than_the_window_is_cut_at_spaces_and_covers_the_line() -> None:
    answer = "The plan costs " + "very " * 3_000 + "much money."  # 15,026 characters, no boundary until the end
    found = sentences(answer)
    assert len(found) > 1 and all(len(s.text) <= 4_000 for s in found)  # one pysbd window at most
    assert "".join(answer[s.span[0] : s.span[1]] for s in found).replace(" ", "") == answer.replace(" ", "")
    assert all(answer[s.span[0] - 1] == " " for s in found[1:])  # cut at a space, never inside a word


@pytest.mark.parametrize(
    ("answer", "count"),
    [("1. " * 4_000, 4_000), ("It is 5. " * 1_000, 1_000), ("- The plan costs 19 dollars.\n" * 300, 300)],
)
def test_repetitive_answers_split_as_their_parts_do(answer: str, count: int) -> None:
    claims = RuleDecomposer().decompose(answer)
    # pysbd joins the odd pair where a window's edge falls ("1. 1." as a list item): a few fewer, never more.
    assert count - 10 <= len(claims) <= count
    assert len({claim.text for claim in claims}) == 1
    assert all(answer[c.span[0] : c.span[1]].rstrip(".") in c.text for c in claims)
