"""The one verdict rule (claim_verdict) and the figure guard: issue 21, items 1 and 3."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundwire import Route, Verdict, Verifier
from groundwire.core.verdicts import CONTRADICTION_AT, claim_verdict
from groundwire.scoring import get_scorer
from groundwire.scoring.base import PairScores
from groundwire.scoring.lexical import LexicalScorer

# Figures the figure check already reads as equal; the bundled model sees different tokens.
REFORMATTED = [
    ("The rate limit is 3,600 requests per hour for each API key.",
     "Each API key is limited to 3600 requests per hour."),
    ("The Pro plan costs $1,200 per year.", "The Pro plan costs 1200 dollars per year."),
    ("The warranty lasts five years.", "The warranty lasts 5 years."),
    ("The company has 5 million users.", "The company has 5,000,000 users."),
    ("Refunds are issued within 30 days.", "Refunds are issued within thirty days."),
    ("The office opens at 5 PM on Fridays.", "The office opens at 17:00 on Fridays."),
    ("The release shipped on 2024-03-05.", "The release shipped on March 5, 2024."),
]


@pytest.fixture(scope="module")
def bundled():
    return Verifier(get_scorer("bundled"))


@pytest.mark.parametrize(("context", "answer"), REFORMATTED)
def test_reformatted_figures_are_never_contradicted_by_the_model_alone(bundled, context, answer):
    claim = bundled.verify(answer, [context]).claims[0]
    assert not any(f.verdict is Verdict.CONTRADICTED for f in claim.checks)  # the figure check agrees
    assert claim.verdict is not Verdict.CONTRADICTED, (claim.support, claim.contradiction)


def test_a_changed_figure_is_still_contradicted(bundled):
    claim = bundled.verify("Each API key is limited to 3700 requests per hour.",
                           ["The rate limit is 3,600 requests per hour for each API key."]).claims[0]
    assert claim.verdict is Verdict.CONTRADICTED
    assert any(f.check == "figure_conflict" for f in claim.checks)


class _Contradicting(LexicalScorer):
    """Lexical tokens, but every pair scored as a confident contradiction."""

    def score(self, pairs):
        n = len(pairs)
        return PairScores(support=np.full(n, 0.1, np.float32), contradiction=np.full(n, 0.9, np.float32))


def test_model_contradiction_stands_when_the_claim_has_no_figures_or_a_negation_flip():
    verifier = Verifier(_Contradicting())
    assert verifier.verify("The castle faces the river.", ["The castle faces the harbor."]).claims[0].verdict \
        is Verdict.CONTRADICTED
    context = ["The rate limit is 3,600 requests per hour for each API key."]
    assert verifier.verify("Each API key is limited to 3600 requests per hour.", context).claims[0].verdict \
        is Verdict.NOT_FOUND
    negated = verifier.verify("Each API key is not limited to 3600 requests per hour.", context).claims[0]
    assert negated.verdict is Verdict.CONTRADICTED


probability = st.floats(0.0, 1.0, allow_nan=False)


@given(route=st.sampled_from(list(Route)), support=probability, contradiction=st.none() | probability,
       findings=st.lists(st.sampled_from([Verdict.CONTRADICTED, Verdict.NOT_FOUND]), max_size=3),
       figures_match=st.booleans())
def test_a_contradicted_verdict_always_has_a_finding_or_a_confident_contradiction(
        route, support, contradiction, findings, figures_match):
    verdict = claim_verdict(route, support, contradiction, findings=findings, figures_match=figures_match)
    if verdict is Verdict.CONTRADICTED:
        assert Verdict.CONTRADICTED in findings or (
            contradiction is not None and contradiction >= CONTRADICTION_AT and not figures_match)
    if findings:
        assert verdict is not Verdict.SUPPORTED
    if verdict is Verdict.SUPPORTED:
        assert route is Route.ACCEPT


_FIGURE_CLAIMS = st.sampled_from([answer for _, answer in REFORMATTED] + ["The castle faces the river."])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, len(REFORMATTED) - 1), claim=_FIGURE_CLAIMS)
def test_every_contradicted_claim_in_a_report_shows_its_reason(bundled, index, claim):
    context = REFORMATTED[index][0]
    for result in bundled.verify(claim, [context]).claims:
        if result.verdict is Verdict.CONTRADICTED:
            assert any(f.verdict is Verdict.CONTRADICTED for f in result.checks) or (
                result.contradiction is not None and result.contradiction >= CONTRADICTION_AT)


@given(route=st.sampled_from(list(Route)), support=probability, contradiction=st.none() | probability,
       figures_match=st.booleans())
def test_the_escalation_band_is_unresolved_and_only_a_rejected_claim_is_not_found(
        route, support, contradiction, figures_match):
    """Issue 19 item 5: a claim between the thresholds is not "nothing supports this"."""
    verdict = claim_verdict(route, support, contradiction, findings=[], figures_match=figures_match)
    if verdict is Verdict.UNRESOLVED:
        assert route is Route.ESCALATE
    if verdict is Verdict.NOT_FOUND:
        assert route is Route.REJECT
    if route is Route.ESCALATE:
        assert verdict in (Verdict.UNRESOLVED, Verdict.CONTRADICTED)


def test_a_finding_decides_even_in_the_escalation_band():
    assert claim_verdict(Route.ESCALATE, 0.5, 0.1, findings=[Verdict.NOT_FOUND], figures_match=False) \
        is Verdict.NOT_FOUND


def test_a_paraphrase_in_the_band_is_unresolved_with_its_evidence(bundled):
    """The issue's example: escalated, and shown with the very sentence that supports it in part."""
    context = "The default access token expires after 3600 seconds. Refresh tokens last 30 days."
    claim = bundled.verify("Access tokens expire after 3600 seconds by default.", [context]).claims[0]
    if claim.route is not Route.ESCALATE:
        pytest.skip(f"the bundled model routes this claim {claim.route.value} now (score {claim.score:.2f})")
    assert claim.verdict is Verdict.UNRESOLVED
    assert claim.evidence == "The default access token expires after 3600 seconds."
