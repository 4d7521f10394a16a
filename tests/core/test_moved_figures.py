"""The moved-figures check (core.checks.moved_figures): a claim whose figure is in the context, but not in the
sentence the claim restates, which gives another figure there, is a signal: never accepted, never rejected on it
alone, escalated."""

from __future__ import annotations

import pytest

from groundwire.core.checks import CLAIM_CHECKS, CheckEffect
from groundwire.core.checks.context import ContextIndex
from groundwire.core.checks.moved_figures import moved_figure_findings
from groundwire.core.figures import claim_figures
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import Chunk, Route
from groundwire.scoring import get_scorer

CONCERT = (
    "Pink Floyd closed the night, starting their set at 11pm. "
    "Shortly after 8pm The Scissor Sisters bounced onto stage to a roaring crowd."
)


def findings(claim: str, *context: str) -> list[str]:
    index = ContextIndex.build([Chunk(f"S{i}", text) for i, text in enumerate(context, start=1)])
    return [f.detail for f in moved_figure_findings(index, claim_figures(claim), claim)]


@pytest.mark.parametrize(
    ("claim", "context", "detail"),
    [
        # The issue-49 case: 11pm is Pink Floyd's, the Scissor Sisters' sentence says 8pm.
        ("Shortly after 11pm The Scissor Sisters bounced onto stage.", (CONCERT,),
         "the context has '11pm', but the sentence this claim restates says '8pm'"),
        # Money and percentages, the figure's sentence in another chunk.
        ("The Pro plan costs $20 a month.", ("The Pro plan costs $10 a month.", "Team seats cost $20 each."),
         "the context has '$20', but the sentence this claim restates says '$10'"),
        # A measured quantity (a unit core.units knows), written in another spelling in the context.
        ("About 23 minutes later, White signed a statement saying he had been confused.",
         ("About 15 min later, White signed a statement saying he had been confused.", "The hearing took 23 mins."),
         "the context has '23', but the sentence this claim restates says '15'"),
        ("Turnout in the northern district reached 72% this year.",
         ("Turnout in the northern district reached 23% this year.", "Of the votes cast, 72% were by post."),
         "the context has '72%', but the sentence this claim restates says '23%'"),
    ],
)
def test_a_figure_taken_from_another_sentence_is_found(claim: str, context: tuple[str, ...], detail: str) -> None:
    assert findings(claim, *context) == [detail]


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        # The figure is where the claim puts it, whatever else the context says.
        ("Shortly after 8pm The Scissor Sisters bounced onto stage.", (CONCERT,)),
        ("Pink Floyd started their set at 11pm.", (CONCERT,)),
        # Two sentences combined rightly: the sentence holding $20 holds the claim's words as well as the other.
        ("The Pro plan costs $20 a month.", ("The Pro plan costs $10 a month.", "From May the Pro plan costs $20 a month.")),
        # Not in the context at all: the figure check's to decide, not this one's.
        ("The Pro plan costs $30 a month.", ("The Pro plan costs $10 a month.", "Team seats cost $20 each.")),
        # Plain numbers, years and dates are left out: one sentence often holds several.
        ("The festival sold 12 kinds of tea in May.",
         ("The festival sold 10 kinds of tea in May.", "Tickets came in 12 colours.")),
        ("The bridge opened in 1968 to great fanfare.",
         ("The bridge opened in 1972 to great fanfare.", "The plans were drawn in 1968.")),
        # Too few words to tell one sentence from another.
        ("It was $20.", ("It was $10.", "Seats were $20.")),
    ],
)
def test_a_figure_where_the_claim_puts_it_or_out_of_scope_is_not(claim: str, context: tuple[str, ...]) -> None:
    assert findings(claim, *context) == []


def test_it_is_a_signal_that_escalates_and_never_decides() -> None:
    check = next(c for c in CLAIM_CHECKS if c.name == "moved_figures")
    assert check.effect is CheckEffect.SIGNAL and not check.needs_evidence
    verifier = Verifier(get_scorer("lexical"))
    moved = verifier.verify("Shortly after 11pm The Scissor Sisters bounced onto stage.", [Chunk("S1", CONCERT)])
    claim = moved.claims[0]
    assert [f.check for f in claim.checks] == ["figure_moved"]
    assert moved.route is Route.ESCALATE and claim.score < verifier.accept_at
    # Without the moved figure, the same words are accepted: the signal is what holds the claim back.
    right = verifier.verify("Shortly after 8pm The Scissor Sisters bounced onto stage.", [Chunk("S1", CONCERT)])
    assert right.route is Route.ACCEPT and not right.claims[0].checks
