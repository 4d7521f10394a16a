"""The verdict rule: from a claim's checks, score and the scorer's contradiction to its verdict, and the caps the
checks put on a score (docs/how-it-works.md "How a verdict is chosen"). The verifier and the calibration replay both apply it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groundwire.foundation.types import DecidedBy, Route, Thresholds, Verdict

CONTRADICTION_AT = 0.5
"""The scorer's contradiction probability at or above which a claim without findings may be CONTRADICTED."""
NEGATED_CONTRADICTION_AT = 0.9
"""A negation flip with the scorer's contradiction at or above this is rejected, not escalated: the claim negates
its evidence and the model reads it so. On 2,993 dev answers this fires on 7, all hallucinated, in 5 families
(at 0.8 it would take a faithful one); the judge has nothing to add there, and a weak one overturned such claims."""


def capped_score(
    score: float,
    thresholds: Thresholds,
    *,
    hard: bool,
    negation: bool,
    contradiction: float = 0.0,
    paraphrase: bool = False,
) -> float:
    """A claim score after the deterministic checks: a figure the context lacks caps it at the reject
    threshold; a negation flip is a signal, not proof, so it caps the score mid-band (never accepted
    outright, the judge looks), unless the scorer's `contradiction` reaches NEGATED_CONTRADICTION_AT too: then
    it is capped at the reject threshold. A claim the meaning layer's paraphrase gate passed (core.meaning; it
    has no finding, so no cap applies to it) is lifted to the accept threshold. The calibration code applies
    the same rule to its cross-validated scores."""
    accept_at, reject_at = thresholds
    if paraphrase:
        score = max(score, accept_at)
    if hard or (negation and contradiction >= NEGATED_CONTRADICTION_AT):
        return min(score, reject_at)
    if negation:
        return min(score, (accept_at + reject_at) / 2)
    return score


@dataclass(frozen=True, slots=True)
class WindowCaps:
    """What caps a claim's score at one of its windows (`capped_score`): the deciding checks' findings (`hard`), a
    negation signal, and the scorer's contradiction at that window (not at another one); and the meaning layer's
    paraphrase gate, which lifts it."""

    hard: bool = False
    negation: bool = False
    contradiction: float = 0.0
    paraphrase: bool = False

    @property
    def kind(self) -> str:
        """The cap: "reject" (at reject_at), "mid" (mid-band) or "none". Windows of one kind cap alike."""
        if self.hard or (self.negation and self.contradiction >= NEGATED_CONTRADICTION_AT):
            return "reject"
        return "mid" if self.negation else "none"


def best_window(scores: Sequence[float], caps: Sequence[WindowCaps], thresholds: Thresholds) -> tuple[float, int]:
    """A claim's score and the window it comes from (its citation): each window's score capped by that window's own
    findings (`capped_score`), then the max over the windows, the first of equals (windows come best-supported
    first). A check that doubts the best window's evidence therefore no longer caps a claim that another window
    supports cleanly, and a chunk added to the context can only add windows: it never lowers a claim's score.
    The verifier and the calibration replay (calibration.combine) both choose so."""
    if not scores or len(scores) != len(caps):
        raise ValueError(f"best_window needs one cap per score, at least one: {len(scores)} scores, {len(caps)} caps")
    capped = [
        capped_score(
            score,
            thresholds,
            hard=cap.hard,
            negation=cap.negation,
            contradiction=cap.contradiction,
            paraphrase=cap.paraphrase,
        )
        for score, cap in zip(scores, caps, strict=True)
    ]
    best = max(range(len(capped)), key=capped.__getitem__)  # max() keeps the first of equals
    return capped[best], best


def claim_verdict(
    route: Route,
    support: float,
    contradiction: float | None,
    *,
    findings: Sequence[Verdict],
    figures_match: bool,
) -> Verdict:
    """The one rule from a claim's evidence to its verdict (docs/how-it-works.md "How a verdict is chosen").

    1. A deciding check's finding decides: CONTRADICTED if any finding is, else NOT_FOUND.
    2. Otherwise a claim routed ACCEPT (its score at or above the accept threshold) is SUPPORTED.
    3. Otherwise it is CONTRADICTED only when the scorer's contradiction probability is at least
       CONTRADICTION_AT and above its support, and the claim's figures do not all match the context: the
       model reads "3600" against "3,600" as different tokens, so it alone never contradicts figures the
       figure check has matched (the caller counts a claim the negation check flags as not matching).
    4. Anything else routed ESCALATE (between the thresholds, or not scored) is UNRESOLVED: the evidence
       shown is some support, not enough to accept. An LLM judge, when configured, resolves it.
       Decided verdicts (route = "decide") route nothing ESCALATE, so none is UNRESOLVED there.
    5. Anything else (routed REJECT) is NOT_FOUND.
    """
    if findings:
        return Verdict.CONTRADICTED if Verdict.CONTRADICTED in findings else Verdict.NOT_FOUND
    if route is Route.ACCEPT:
        return Verdict.SUPPORTED
    contradicts = contradiction is not None and contradiction >= CONTRADICTION_AT and contradiction > support
    if contradicts and not figures_match:
        return Verdict.CONTRADICTED
    return Verdict.UNRESOLVED if route is Route.ESCALATE else Verdict.NOT_FOUND


def decided_by(*, copied: bool, hard: bool, paraphrase: bool, route: Route) -> DecidedBy:
    """Who set a claim's verdict: the copy rule (core.verbatim), a deciding check, the meaning layer's paraphrase
    gate (for a claim it accepts), else the scorer."""
    if copied:
        return DecidedBy.VERBATIM
    if hard:
        return DecidedBy.CHECKS
    return DecidedBy.MEANING if paraphrase and route is Route.ACCEPT else DecidedBy.SCORER
