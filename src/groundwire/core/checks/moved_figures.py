"""Moved figures: the claim's figure is in the context, but the sentence the claim restates gives another one.

"Shortly after 11pm The Scissor Sisters bounced onto stage." against a context where the Scissor Sisters went on
at 8pm and Pink Floyd at 11pm: the figure check finds 11pm in the context and passes, and a cross-encoder reads
the near-copy as support. The check fires when a context sentence restates the claim (it holds at least
`RESTATES` of the claim's other content words) and states a figure of the same kind and unit in place of the
claim's, while no sentence that holds the claim's figure holds even `HOLDS` of what the restating one does.

Money, percentages, times, versions and measured quantities ("23 minutes", "12 km": a unit core.units knows)
only. A plain number (a count, a year, "10-12 May") and a date are left out: one sentence often holds several,
and a claim may combine them (an earlier draft caught a faithful dev answer so).

A signal, not a verdict: the figure is in the context, so the claim may still combine two sentences rightly. The
score is capped mid-band and the claim escalated, not rejected (decide mode, with no one to escalate to, rejects
it, as it does every signal). What it fires on over the dev answers: docs/accuracy.md, "What the signals fire on".
"""

from __future__ import annotations

from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.checks.context import ContextIndex
from groundwire.core.figures import Figure
from groundwire.core.units import UNIT_SPELLINGS, canonical_unit
from groundwire.foundation.textutil import content_words, word_share
from groundwire.foundation.types import Finding

RESTATES = 0.8
"""A context sentence restates the claim when it holds this share of the claim's content words (figures aside)."""
HOLDS = 0.5
"""The claim's figure is where the claim puts it when a sentence holding it holds this share of the restating
sentence's share of the claim's words."""
MIN_WORDS = 3
"""Claims with fewer content words (figures aside) restate too little for a sentence to be told apart."""


def moved_figure_findings(context: ContextIndex, figures: tuple[Figure, ...], claim: str) -> list[Finding]:
    """One signal per claim figure that the context holds only away from the sentence the claim restates."""
    claim_words = frozenset(word for word in content_words(claim) if not any(c.isdigit() for c in word))
    if len(claim_words) < MIN_WORDS:
        return []
    findings: list[Finding] = []
    for figure in figures:
        if not _in_scope(figure) or not context.has(figure):
            continue
        restating: tuple[float, str] | None = None
        held = 0.0
        for (_, sentence_words, sentence_figures), holds in zip(
            context.sentences, context.holding(figure), strict=True
        ):
            share = word_share(claim_words, sentence_words)
            if holds:
                held = max(held, share)
            elif share >= RESTATES and (restating is None or share > restating[0]):
                other = next((o for o in sentence_figures if _same_kind(o, figure)), None)
                if other is not None:
                    restating = (share, other.text)
        if restating is not None and held < HOLDS * restating[0]:
            findings.append(
                Finding(
                    "figure_moved",
                    f"the context has {figure.text!r}, but the sentence this claim restates says {restating[1]!r}",
                    None,
                )
            )
    return findings


def _in_scope(figure: Figure) -> bool:
    return figure.kind in ("money", "percent", "time", "version") or (
        figure.kind == "number" and figure.unit.lower() in UNIT_SPELLINGS
    )


def _same_kind(figure: Figure, other: Figure) -> bool:
    return figure.kind == other.kind and canonical_unit(figure.unit) == canonical_unit(other.unit)


def _moved_figure_check(item: ClaimCheckInput) -> list[Finding]:
    return moved_figure_findings(item.context, item.figures, item.claim.text)


CHECK = ClaimCheck("moved_figures", _moved_figure_check, CheckEffect.SIGNAL)
