"""The certainty check (core.checks.certainty): a hedged context does not support a claim stated as certain."""

from __future__ import annotations

import pytest

from groundwire.core.checks import CLAIM_CHECKS, CheckEffect
from groundwire.core.checks.certainty import certainty_findings
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Verdict
from groundwire.scoring import get_scorer

HEDGED = "A small study suggests the supplement may improve sleep in some older adults."


@pytest.mark.parametrize(
    ("claim", "hedge", "certainty"),
    [
        ("The supplement improves sleep in all older adults.", "some", "all"),
        ("The supplement definitely improves sleep.", "suggests", "definitely"),
        ("Studies have proven the supplement improves sleep.", "suggests", "proven"),
        ("The supplement cures insomnia in older adults.", "suggests", "cures"),
    ],
)
def test_a_hedge_made_certain_is_not_found(claim: str, hedge: str, certainty: str) -> None:
    findings = certainty_findings(claim, HEDGED)
    assert [(f.check, f.verdict) for f in findings] == [("certainty_added", Verdict.NOT_FOUND)]
    assert f"hedges ({hedge!r})" in findings[0].detail and f"certain ({certainty!r})" in findings[0].detail


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The supplement may improve sleep in some older adults.", HEDGED),  # the claim keeps the hedge
        ("The supplement improves sleep in older adults.", HEDGED),  # no certainty added: the model's call
        ("All staff work remotely on Fridays.", "All staff work remotely on Fridays, and some on Mondays."),
        ("The museum is always closed on Mondays.", "The museum is always closed on Mondays."),  # no hedge
        ("The supplement definitely improves sleep.", None),  # no evidence sentence
        # Idioms that only look like a scope, and a claim that does not restate the hedged sentence.
        ("Sleep has not always improved with the supplement.", HEDGED),
        ("Older adults should take the supplement all the more.", HEDGED),
        ("All of these fees add to the bank's profits.", "Auto loans might earn banks a rate of 5%."),
    ],
)
def test_no_finding_without_a_hedge_dropped(claim: str, evidence: str | None) -> None:
    assert certainty_findings(claim, evidence) == []


def test_the_check_is_registered_to_decide_with_evidence() -> None:
    check = next(c for c in CLAIM_CHECKS if c.name == "certainty")
    assert check.effect is CheckEffect.VERDICT and check.needs_evidence


def test_a_claim_made_certain_is_not_found_in_a_report() -> None:
    report = Verifier(get_scorer("lexical")).verify("The supplement improves sleep in all older adults.", [HEDGED])
    (claim,) = report.claims
    assert claim.verdict is Verdict.NOT_FOUND and claim.decided_by == "checks"
    assert [f.check for f in claim.checks] == ["certainty_added"]
