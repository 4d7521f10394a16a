"""The figure check: every number, percentage, amount of money, date, time, version string and quantity in a
claim must appear in the context, compared after normalisation (3,600 == 3600, 5 million == 5,000,000,
50 percent == 50%, 5 PM == 17:00). A figure missing from the context makes the claim NOT_FOUND; when the
context states a figure of the same kind in a sentence about the same thing, the claim is CONTRADICTED.
Opening hours claimed for days ("11 am to 9 pm on weekdays") are checked day by day against a schedule the
context lists per day (hours.py), and a JSON record's yes/no attributes against what a claim says of them
(attributes.py): one check, "figures", whose findings decide the claim.
"""

from __future__ import annotations

from collections.abc import Sequence

from groundwire.core.checks.attributes import attribute_findings
from groundwire.core.checks.base import CheckEffect, ClaimCheck, ClaimCheckInput
from groundwire.core.checks.context import ContextIndex
from groundwire.core.checks.hours import hours_findings
from groundwire.core.figures import Figure, claim_figures
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import Finding, Verdict


def figure_findings(claim: str, context: ContextIndex, figures: Sequence[Figure] | None = None) -> list[Finding]:
    """One finding per claim figure that the context does not contain (`figures`: the claim's, read already)."""
    findings: list[Finding] = []
    claim_words = frozenset(content_words(claim))
    for figure in claim_figures(claim) if figures is None else figures:
        if context.has(figure):
            continue
        conflict = context.conflicting(figure, claim_words)
        if conflict is not None:
            findings.append(
                Finding(
                    "figure_conflict",
                    f"{figure.kind} {figure.text!r} is not in the context, which says {conflict!r} about this",
                    Verdict.CONTRADICTED,
                )
            )
        else:
            findings.append(
                Finding(
                    "figure_not_in_context",
                    f"{figure.kind} {figure.text!r} does not appear in the context",
                    Verdict.NOT_FOUND,
                )
            )
    return findings + hours_findings(claim, context.schedule) + attribute_findings(claim, context.attributes)


def _figure_check(item: ClaimCheckInput) -> list[Finding]:
    return figure_findings(item.claim.text, item.context, item.figures)


CHECK = ClaimCheck("figures", _figure_check, CheckEffect.VERDICT)
