"""Issue 49, item 1: a claim a context window states word for word, or nearly, is SUPPORTED and cites that window
(decided_by "verbatim"); a copy with anything changed that matters (a figure, a negation, a name) or a piece its
sentence does not assert is left to the checks and the scorer. bench/verbatim.py measures the same on dev data."""

import pytest

from groundwire.config import CheckSettings
from groundwire.core.checks import CheckEffect
from groundwire.core.claim_state import ClaimState
from groundwire.core.figures import canonical_text
from groundwire.core.verbatim import VerbatimMatch, verbatim_match, verbatim_words
from groundwire.foundation.types import Chunk, Claim, DecidedBy, Finding, Route, Verdict
from groundwire.pipeline import build_verifier
from groundwire.scoring.onnx import bundled_path

needs_bundle = pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")

HOURS = "Support hours are 9am to 5pm CET on weekdays."
PRICING = "Acme Cloud pricing: the Pro plan costs $49 per month, and the Team plan costs $99 per month."

# (window, claim): the claim copies the window in another spelling of its figures, or with a light edit. The
# windows are sentences of the kind the dev contexts hold, one per figure form canonical figures rewrite.
COPIES = [
    pytest.param(HOURS, "Support hours are 9:00 to 17:00 CET on weekdays.", id="time-canonical-in-claim"),
    pytest.param("Support hours are 9:00 to 17:00 CET on weekdays.", HOURS, id="time-canonical-in-window"),
    pytest.param("The call runs each Friday from 1 p.m. - 2:30 p.m. for members.",
                 "The call runs each Friday from 1 PM - 2:30 PM for members.", id="time-range-meridiem"),
    pytest.param("Lewis Collins (27 May 1946 – 27 November 2013) was an English film and theatre actor.",
                 "Lewis Collins (May 27, 1946 – November 27, 2013) was an English film and theatre actor.", id="date"),
    pytest.param("The survey was published on 2024-03-05 by the ministry.",
                 "The survey was published on March 5, 2024 by the ministry.", id="date-iso"),
    pytest.param("Automotive techs earn about $32 per hour or $66,300 per year on average.",
                 "Automotive techs earn about 32 dollars per hour or USD 66300 per year on average.", id="money"),
    pytest.param("The trail climbs 12 kilometres to an elevation of 4,278 feet.",
                 "The trail climbs 12 km to an elevation of 4278 ft.", id="unit"),
    pytest.param("EPS could range from $0.15 to $0.30 on a GAAP basis this quarter.",
                 "EPS could range from $0.15 to $0.30 on a GAAP basis this quarter.", id="range-money"),
    pytest.param("Wages for low-wage workers fell 5 percent from 1979 to 2013.",
                 "Wages for low-wage workers fell 5% from 1979 to 2013.", id="percent"),
    pytest.param("Five additional storms minimally affected land areas that year.",
                 "5 additional storms minimally affected land areas that year.", id="number-word"),
    pytest.param("The company raised 5,000,000 dollars in its first round.",
                 "The company raised $5 million in its first round.", id="number-scale"),
    pytest.param(HOURS, "support hours are 9am to 5pm cet on weekdays", id="lower-case"),
    pytest.param(HOURS, "SUPPORT HOURS ARE 9AM TO 5PM CET ON WEEKDAYS.", id="upper-case"),
    pytest.param("Refunds, as a rule, are issued within 5 business days.",
                 "Refunds as a rule are issued within 5 business days", id="punctuation"),
    pytest.param("The museum opens at 9am and closes at 6pm on weekdays.",
                 "Museum opens at 9am and closes at 6pm on weekdays.", id="dropped-the"),
    pytest.param(PRICING, "The Team plan costs $99 per month.", id="clause-of-a-sentence"),
]

# (window, claim): near copies that must not be decided by the copy rule.
NOT_COPIES = [
    pytest.param(HOURS, "Support hours are 9am to 6pm CET on weekdays.", id="swapped-figure"),
    pytest.param(PRICING, "The Team plan costs $79 per month.", id="swapped-money"),
    pytest.param(HOURS, "Support hours are not 9am to 5pm CET on weekdays.", id="added-negation"),
    pytest.param("The museum is not open on Mondays in winter.", "The museum is open on Mondays in winter.",
                 id="dropped-negation"),
    pytest.param(HOURS, "Support hours are 9am to 5pm PST on weekdays.", id="other-name"),
    pytest.param("It is not true that the fee is waived for annual plans.", "The fee is waived for annual plans.",
                 id="negated-by-its-sentence"),
    pytest.param("Early results suggest the drug may lower blood pressure in adults.",
                 "The drug may lower blood pressure in adults.", id="hedged-by-its-sentence"),
    pytest.param("Critics claimed the vaccine causes severe side effects.", "The vaccine causes severe side effects.",
                 id="attributed"),
    pytest.param("The setup fee is waived if you pay annually.", "The setup fee is waived.", id="condition-after"),
    pytest.param("Is the setup fee waived for annual plans?", "The setup fee waived for annual plans.",
                 id="question"),
    pytest.param("The plan costs $49.", "The plan costs $49.", id="too-short"),
    pytest.param("Cornel Wilde (1912 – 1989) was a Hungarian-American actor and film director.",
                 "Actor and film director.", id="a-phrase-not-a-clause"),
    pytest.param("The company said revenue rose 5% in the third quarter.", "Revenue rose 5% in the third quarter.",
                 id="reported"),
]


@pytest.mark.parametrize(("window", "claim"), COPIES)
def test_a_copy_in_any_figure_spelling_or_light_edit_matches_its_window(window, claim):
    assert verbatim_match(claim, ["An unrelated first window about shipping times.", window], [0, 1]) is not None


@pytest.mark.parametrize(("window", "claim"), NOT_COPIES)
def test_a_changed_or_unasserted_copy_does_not_match(window, claim):
    assert verbatim_match(claim, [window], [0]) is None


def test_both_sides_read_in_one_normal_form_whatever_the_spelling():
    """Canonical figures' own output is a spelling like any other: it reads as the original does."""
    assert verbatim_words(HOURS) == verbatim_words(canonical_text(HOURS))
    assert verbatim_words("The Pro plan costs 49 dollars.") == verbatim_words("pro plan costs $49")


def test_the_match_is_sought_only_in_the_candidate_windows_and_names_the_sentence():
    windows = ["Shipping takes 3 to 5 business days.", f"Welcome to Acme. {HOURS} Call us any time."]
    assert verbatim_match(HOURS, windows, [0]) is None
    match = verbatim_match(HOURS, windows, [0, 1])
    assert match is not None and match.window == 1
    assert windows[1][match.span[0] : match.span[1]] == HOURS


@needs_bundle
@pytest.mark.parametrize("canonical", [True, False])
def test_the_issue_example_is_supported_and_cites_its_chunk(canonical):
    """Issue 49: the sentence checked against the chunk that holds it, alone and beside a pricing chunk."""
    verifier = build_verifier(CheckSettings(canonical_figures=canonical))
    for chunks in ([Chunk("S1", HOURS)], [Chunk("S1", PRICING), Chunk("S2", HOURS)]):
        for answer in (HOURS, "Support hours are 9:00 to 17:00 CET on weekdays."):
            report = verifier.verify(answer, chunks)
            (claim,) = report.claims
            assert report.route is Route.ACCEPT
            assert claim.verdict is Verdict.SUPPORTED and claim.decided_by is DecidedBy.VERBATIM
            assert claim.chunk_id == chunks[-1].id and claim.evidence == HOURS
            assert claim.support is not None  # the model's own number is kept
            assert report.to_dict()["claims"][0]["decided_by"] == "verbatim"


@needs_bundle
def test_a_copy_with_a_swapped_figure_is_decided_by_the_checks_not_the_copy_rule():
    verifier = build_verifier(CheckSettings())
    chunks = [Chunk("S1", PRICING), Chunk("S2", HOURS)]
    report = verifier.verify("Support hours are 9am to 6pm CET on weekdays.", chunks)
    (claim,) = report.claims
    assert claim.verdict is Verdict.CONTRADICTED and claim.decided_by is DecidedBy.CHECKS
    assert report.route is Route.REJECT


def test_a_copy_a_check_doubts_is_left_to_the_scorer():
    """The checks run first: any finding but a note takes the claim from the copy rule back to the scorer."""
    claim = Claim("Support hours are 9am to 5pm CET on weekdays.", (0, 46), HOURS)
    copied = VerbatimMatch(0, (0, len(HOURS)))
    assert ClaimState(0, claim, copied=copied).verbatim
    assert ClaimState(0, claim, findings=[(CheckEffect.NOTE, Finding("citation", "no marker"))], copied=copied).verbatim
    for effect in (CheckEffect.SIGNAL, CheckEffect.VERDICT):
        doubted = ClaimState(0, claim, findings=[(effect, Finding("negation", "flipped"))], copied=copied)
        assert not doubted.verbatim
    assert not ClaimState(0, claim).verbatim


def test_any_scorer_gets_the_copy_rule():
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    window = "The Pro plan costs $49 per month. Annual billing is available for every plan."
    report = verifier.verify("Annual billing is available for every plan.", [Chunk("S1", window)])
    assert report.claims[0].decided_by is DecidedBy.VERBATIM and report.route is Route.ACCEPT
    assert report.claims[0].evidence_span == (34, len(window))
    changed = verifier.verify("The Pro plan costs $59 per month.", [Chunk("S1", window)])
    assert changed.claims[0].decided_by is DecidedBy.CHECKS and changed.claims[0].verdict is not Verdict.SUPPORTED

