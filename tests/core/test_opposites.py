"""The opposites check (core.checks.opposites): a claim that restates its evidence with one word replaced by its
opposite is a signal: never accepted, escalated for a closer look."""

from __future__ import annotations

import pytest

from groundwire.core.checks import CLAIM_CHECKS, CheckEffect
from groundwire.core.checks.negation import negation_finding
from groundwire.core.checks.opposites import opposite_finding
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Route, Verdict
from groundwire.scoring import get_scorer

FLIPPED = [
    ("The museum is open on Mondays.", "The museum closes its doors to visitors every Monday.", "open", "closes"),
    ("Sales rose 5% in 2020.", "Sales fell 5% in 2020.", "rose", "fell"),
    ("Pets are allowed in the rooms.", "Pets are forbidden in the rooms.", "allowed", "forbidden"),
    ("The fee includes breakfast.", "The fee excludes breakfast.", "includes", "excludes"),
    ("The procedure is legal in Ohio.", "The procedure is illegal in Ohio.", "legal", "illegal"),
    # Both negated: "not open" against "not closed" is still the opposite.
    ("The museum is not open on Mondays.", "The museum is not closed on Mondays.", "open", "closed"),
    # The same words in another order; a converse with its arguments where they were.
    ("The museum is open on Mondays.", "On Mondays the museum is closed.", "open", "closed"),
    ("Alice bought the car from Bob.", "Alice sold the car to Bob.", "bought", "sold"),
]


@pytest.mark.parametrize(("claim", "evidence", "word", "other"), FLIPPED)
def test_a_word_replaced_by_its_opposite_is_found(claim: str, evidence: str, word: str, other: str) -> None:
    finding = opposite_finding(claim, evidence)
    assert finding is not None and finding.check == "opposite"
    assert finding.detail == f"the claim says '{word}' where the evidence says '{other}'"
    assert finding.verdict is None  # a signal


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # The negation flips it back: "not open" says "closed".
        ("The museum is not open on Mondays.", "The museum is closed on Mondays."),
        ("The museum is open on Mondays.", "The museum is not closed on Mondays."),
        # A paraphrase.
        ("Adult tickets are 12 euros.", "Tickets cost 12 euros for adults."),
        # Only the pair in common: no restatement.
        ("The door was open.", "The shop closed early because of the storm."),
        ("Sales rose.", "Temperatures fell sharply overnight in the north."),
        # The opposite stands elsewhere in the sentence, about something else.
        ("The company is raising its dividend and reducing its debt.",
         "As net debt is expected to fall, the company's focus is on the increase in its dividend."),
        # Both words of the pair in both sentences; a name that only looks like a word.
        ("Prices rose in May and fell in June.", "Prices fell in June after they rose in May."),
        ("Rose Byrne starred in the film.", "The film fell flat, though Rose Byrne starred in it."),
        # The other text says the word in another form or with a synonym.
        ("Another table left before getting their food.", "Another table left before receiving their food."),
        # A converse, its arguments swapped around it, says the same (a dev claim case, paraphrase-07).
        ("Students can borrow laptops from the library.", "The library lends laptops to students for two weeks."),
        ("Bob bought the car from Alice.", "Alice sold the car to Bob."),
        # No evidence sentence.
        ("Sales rose 5% in 2020.", None),
    ],
)
def test_no_opposite_where_the_sentences_do_not_swap_one(claim: str, evidence: str | None) -> None:
    assert opposite_finding(claim, evidence) is None


def test_the_check_runs_after_negation_with_the_evidence_as_a_signal() -> None:
    names = [check.name for check in CLAIM_CHECKS]
    assert names.index("opposites") == names.index("negation") + 1
    check = CLAIM_CHECKS[names.index("opposites")]
    assert check.needs_evidence and check.effect is CheckEffect.SIGNAL


@pytest.mark.parametrize(("claim", "evidence", "word", "other"), FLIPPED[:5])
def test_verify_escalates_the_claim_and_names_the_opposite(claim: str, evidence: str, word: str, other: str) -> None:
    result = Verifier(get_scorer("lexical")).verify(claim, [evidence]).claims[0]
    assert [f.check for f in result.checks] == ["opposite"]
    assert result.route is Route.ESCALATE and result.verdict is not Verdict.SUPPORTED
    assert f"'{word}'" in result.checks[0].detail and f"'{other}'" in result.checks[0].detail


def test_verify_leaves_a_restatement_with_the_negation_flipped_back_alone() -> None:
    result = Verifier(get_scorer("lexical")).verify("The museum is not open on Mondays.", ["The museum is closed on Mondays."])
    assert [f.check for f in result.claims[0].checks] == []


# The negation check reads its opposites from the same lexicon: "not open" says "closed" where "closed" stands in
# the place of "open", and "not allowed" says "banned" (to ban is to forbid, a way of not allowing).
@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The pool is not open on Mondays.", "The pool is closed on Mondays for members."),
        ("Pets are not permitted in the rooms.", "Pets are prohibited in the rooms."),
        ("Dogs are not allowed in the library.", "Dogs are banned from the library."),
        ("Smoking is not allowed on the terrace.", "Smoking is outlawed on the terrace."),
    ],
)
def test_negation_is_no_flip_where_the_other_text_says_the_opposite(claim: str, evidence: str) -> None:
    assert negation_finding(claim, evidence) is None


def test_negation_is_a_flip_where_the_opposite_stands_elsewhere_or_is_a_converse() -> None:
    evidence = "The pool is only on Mondays for members; the gym is closed."
    finding = negation_finding("The pool is not open on Mondays.", evidence)
    assert finding is not None and finding.detail == "only the claim is negated"
    claim, evidence = "Students cannot borrow laptops from the library.", "The library lends laptops to students."
    finding = negation_finding(claim, evidence)
    assert finding is not None and finding.detail == "only the claim is negated"
