"""Canonical figures cannot crash (issue 34): every date, range and number people write reads, or stays text.

A figure groundwire cannot read (a date that does not exist, a time past the clock) is text to the checks and the
model, and the claim's note says so; nothing raises, whatever the text.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundwire.core.checks.context import ContextIndex
from groundwire.core.checks.figures import figure_findings
from groundwire.core.figures import canonical_text, claim_figures, extract_figures, unreadable_figures
from groundwire.foundation.types import Chunk, Verdict
from groundwire.pipeline import CheckItem, CheckSettings, build_verifier, check

# The list, and forms beside them.
FORMS = [
    "March to June 2010",
    "2010-2012",
    "from 1998 to 2001",
    "the 2018-19 season",
    "Q3 2021",
    "FY2023",
    "the 1990s",
    "mid-2019",
    "early 20th century",
    "June 31",
    "June 31, 2020",
    "February 29, 2023",
    "00/00/2010",
    "13/13/2013",
    "2010-13-45",
    "2010-00-00",
    "2010-02-30",
    "25:70",
    "99:99 pm",
    "13 pm",
    "0 am",
    "1st",
    "22nd",
    "XIV",
    "Louis XIV",
    "5'11\"",
    "1e400",
    "1E-400",
    "2**63",
    "3/4",
    "1/0",
    "10-20%",
    "5 to 10 percent",
    "49 dollars",
    "12 euros",
    "100 USD",
    "USD 100",
    "12345678901234567890123456789012",
    "$12345678901234567890123456789012345678901234567890 million",
    "9" * 400,
    "0." + "0" * 300 + "1",
    "1,000,000,000,000,000,000,000,000,000,000,000",
    "99999999999999999999999999999 trillion",
    "twenty-five thousand",
    "ninety-nine trillion",
    "5 PM",
    "5:00 p.m.",
    "Apr. 18-26",
    "Apr. 40-99, 2020",
]

_DATE_PARTS = st.tuples(st.integers(-1, 10_000), st.integers(-1, 99), st.integers(-1, 99))
_MONTHS = st.sampled_from(["Jan", "January", "Feb.", "June", "Sept", "December", "may"])


@st.composite
def figure_text(draw: st.DrawFn) -> str:
    """A figure in one of the forms people write, with values in and out of range."""
    year, month, day = draw(_DATE_PARTS)
    number = draw(st.one_of(st.integers(), st.decimals(allow_nan=False, allow_infinity=False), st.floats()))
    forms = [
        f"{year}-{month:02d}-{day:02d}",
        f"{month}/{day}/{year}",
        f"{draw(_MONTHS)} {day}, {year}",
        f"{day} {draw(_MONTHS)} {year}",
        f"{draw(_MONTHS)} to {draw(_MONTHS)} {year}",
        f"{draw(_MONTHS)} {day}-{month}",
        f"{year}-{month}",
        f"{year}-{day:02d}",
        f"Q{month} {year}",
        f"FY{year}",
        f"the {year}s",
        f"mid-{year}",
        f"{month}:{day}",
        f"{month} {draw(st.sampled_from(['am', 'p.m.', 'PM']))}",
        f"{number}",
        f"${number}",
        f"{number}%",
        f"{number} {draw(st.sampled_from(['million', 'billion', 'k', 'km', 'dollars', 'euros', 'USD']))}",
        f"USD {number}",
        f"{day}/{month}",
        f"{day}'{month}\"",
        f"{draw(st.integers(0, 10**6))}e{draw(st.integers(-1000, 1000))}",
        f"{draw(st.integers(0, 99))}**{draw(st.integers(0, 999))}",
        draw(st.sampled_from(FORMS)),
    ]
    return draw(st.sampled_from(forms))


@st.composite
def sentence(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(figure_text(), st.sampled_from(["It ran", "from", "to", "cost", "the", "on",
                                                                    ",", ".", "-", "and", "not"])),
                          min_size=1, max_size=8))
    return " ".join(parts)


def _every_reader(text: str, context: str) -> None:
    canonical_text(text)
    extract_figures(text)
    claim_figures(text)
    unreadable_figures(text)
    figure_findings(text, ContextIndex.build([Chunk("c", context)]))


@pytest.mark.parametrize("form", FORMS)
def test_every_listed_form_reads_or_stays_text(form: str) -> None:
    _every_reader(f"It was {form}.", f"The record says {form} and 2010.")
    _every_reader(form, form)


@given(sentence(), sentence())
def test_no_figure_text_raises(claim: str, context: str) -> None:
    _every_reader(claim, context)


@given(st.text(max_size=200), st.text(max_size=200))
def test_no_text_at_all_raises(claim: str, context: str) -> None:
    _every_reader(claim, context)


@pytest.fixture(scope="module")
def lexical():
    return build_verifier(CheckSettings(scorer="lexical"))


@given(sentence(), sentence())
def test_a_whole_check_of_figure_text_never_raises(claim: str, context: str) -> None:
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    report = check(verifier, CheckItem(claim, [Chunk("S1", context)]))
    assert all(result.verdict in Verdict for result in report.claims)


@pytest.mark.parametrize(
    ("claim", "unreadable"),
    [
        ("The launch was on 2010-13-45.", "2010-13-45"),
        ("The deadline is June 31, 2020.", "June 31, 2020"),
        ("The deadline is February 30.", "February 30"),
        ("The alarm rang at 25:70.", "25:70"),
    ],
)
def test_a_date_or_time_that_cannot_be_real_is_text_and_the_claim_says_so(lexical, claim: str,
                                                                          unreadable: str) -> None:
    assert unreadable_figures(claim) == (unreadable,)
    assert not any(figure.kind in ("date", "time") for figure in extract_figures(claim))
    report = check(lexical, CheckItem(claim, [Chunk("S1", f"Our notes list {unreadable} and nothing else.")]))
    [result] = report.claims
    assert result.note is not None and repr(unreadable) in result.note and "as text" in result.note


@pytest.mark.parametrize("claim", ["It opened on March 5, 2024.", "It was February 29, 2024.", "Doors open at 5 PM.",
                                   "It is on February 29."])
def test_real_dates_and_times_stay_figures(lexical, claim: str) -> None:
    assert unreadable_figures(claim) == ()
    assert any(figure.kind in ("date", "time") for figure in extract_figures(claim))
    [result] = check(lexical, CheckItem(claim, [Chunk("S1", claim)])).claims
    assert result.note is None


def test_a_long_number_reads_and_matches_itself(lexical) -> None:
    # 32 digits and more made Decimal.quantize raise InvalidOperation (a 500 on /v1/verify).
    digits = "12345678901234567890123456789012"
    assert canonical_text(f"The order number is {digits}.") == f"The order number is {digits}."
    report = check(lexical, CheckItem(f"The order number is {digits}.", [Chunk("S1", "The order number is 1.")]))
    assert report.claims[0].verdict is Verdict.CONTRADICTED  # the context gives another order number
    same = check(lexical, CheckItem(f"The order number is {digits}.", [Chunk("S1", f"The order number is {digits}.")]))
    assert same.claims[0].verdict is Verdict.SUPPORTED
