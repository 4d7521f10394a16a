"""The combiner's `novel_names` feature counts the names a claim states that its context lacks (issue 49, item 1):
an all-caps copy of a context sentence scored 0.42-0.52 at model support 0.71-0.86 because every capitalised word
of it, "ARE" and "9AM" among them, counted as a name the context lacks."""

import pytest

from groundwire.config import CheckSettings
from groundwire.core.claim_state import names_in
from groundwire.foundation.types import Chunk
from groundwire.pipeline import build_verifier

HOURS = "Support hours are 9am to 5pm CET on weekdays, run by the Acme support desk."


@pytest.mark.parametrize(("claim", "names"), [
    ("Support is run by Globex and Initech.", [["globex"], ["initech"]]),
    ("SUPPORT HOURS ARE 9AM TO 5PM CET ON WEEKDAYS.", []),  # capitals mark no name in a claim written in them
    ("Opening at 9AM, the Acme desk answers calls.", [["acme"]]),  # a figure is the figure check's, not a name
    ("Tickets go to The Scissor Sisters.", [[], ["scissor"], ["sister"]]),  # a stopword: a name with no word
    ("Acme runs it.", []),  # the first word is capitalised as a sentence's start
])
def test_the_names_a_claim_states(claim: str, names: list[list[str]]) -> None:
    assert names_in(claim) == names


@pytest.mark.parametrize(("claim", "novel"), [
    ("SUPPORT HOURS ARE 9AM TO 5PM CET ON WEEKDAYS.", 0.0),
    ("Support hours are 9am to 5pm CET on weekdays, run by the Acme support desk.", 0.0),
    ("Support hours are run by the Globex support desk.", 1.0),
    ("SUPPORT HOURS ARE RUN BY THE GLOBEX DESK.", 0.0),  # all caps: no names to count (the model reads the rest)
])
def test_novel_names_in_a_check(claim: str, novel: float) -> None:
    report = build_verifier(CheckSettings(scorer="lexical")).verify(claim, [Chunk("S1", HOURS)])
    assert [c.features["novel_names"] for c in report.claims] == [novel]
