"""The routing rule: from a score to ACCEPT, ESCALATE or REJECT, for a claim and for an answer alike.

Three-way routing (the default) accepts at or above accept_at, rejects at or below reject_at and escalates the band
between to the judge or a person. Decided verdicts (`[verify] route = "decide"`, issue 33 item 5) are for a check
with no judge: one threshold, decide_at, accepts at or above it and rejects below, and nothing is escalated. The
verifier routes every claim and every answer through `Router.route`, so the two modes differ in this one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groundwire.foundation.types import Route, RoutedThresholds, RouteMode, Thresholds
from groundwire.scoring.combiner import threshold_keys

ROUTE_MODES: tuple[RouteMode, ...] = ("three-way", "decide")
MIDPOINT_WARNING = (
    'route = "decide": no decide_at is calibrated for this scorer or set ([verify] decide_at); each answer is decided '
    "at the midpoint of its accept_at and reject_at (meta.thresholds.decide_at)"
)
"""Every report of a decided check without a decide_at carries this (an uncalibrated scorer such as "lexical")."""


@dataclass(frozen=True, slots=True)
class Router:
    """How a verifier routes: three ways, or decided at one threshold."""

    mode: RouteMode = "three-way"
    decide_at: float | None = None
    """The threshold of decided verdicts; None: each answer is decided midway between its accept_at and reject_at."""
    warnings: tuple[str, ...] = ()
    """What every report of a decided check without a decide_at says about it."""
    reject_needs_finding: frozenset[str] = frozenset()
    """Calibration keys (their sub-keys too: "data2text/long") where REJECT needs a deciding check's finding against
    the claim (a figure, date, hours or record attribute the context lacks or contradicts, or a negation the scorer
    reads as a contradiction: core.verdicts.WindowCaps.kind "reject"). There the scorer's low support alone escalates:
    on records the model misreads field formats ("10:0-20:0" against "10:00 AM to 8:00 PM"), and the record checks
    are the evidence that holds (results/RESULTS.md, calibration v8)."""

    @classmethod
    def of(cls, mode: RouteMode, decide_at: float | None, *, reject_ats: Sequence[float], cascade: bool) -> Router:
        """A router, its settings checked: decide mode takes no cascade (it escalates nothing, so a second stage
        would never run), and its decide_at lies in [0, 1] and above every reject_at in use (`reject_ats`): the
        checks cap a claim at reject_at, and such a claim must be rejected."""
        if mode not in ROUTE_MODES:
            raise ValueError(f'route must be "three-way" or "decide", got {mode!r}')
        if mode == "three-way":
            return cls(mode, decide_at)
        if cascade:
            raise ValueError('route "decide" escalates nothing: a cascade (escalate_to) would never run')
        if decide_at is None:
            return cls(mode, None, (MIDPOINT_WARNING,))
        if not 0.0 <= decide_at <= 1.0:
            raise ValueError(f"decide_at must be in [0, 1], got {decide_at}")
        if decide_at <= max(reject_ats):
            raise ValueError(
                f"decide_at ({decide_at}) must be above reject_at ({max(reject_ats)}): the checks cap a claim at "
                "reject_at, and such a claim must be rejected; set a higher decide_at or a lower reject_at"
            )
        return cls(mode, decide_at)

    def decide_at_for(self, thresholds: Thresholds) -> float:
        """The decide threshold of an answer routed by `thresholds`: `decide_at`, else the pair's midpoint."""
        return self.decide_at if self.decide_at is not None else (thresholds[0] + thresholds[1]) / 2

    def asks_finding(self, key: str | None) -> bool:
        """Whether REJECT needs a deciding finding for an answer of this calibration key (`reject_needs_finding`)."""
        return any(k in self.reject_needs_finding for k in threshold_keys(key))

    def unfounded(self, key: str | None, found: bool) -> bool:
        """Whether a score at or below reject_at is escalated rather than rejected (`route`'s `unfounded`): the key
        asks for a deciding finding and none stands against the claim, or against any claim of the answer (`found`)."""
        return not found and self.asks_finding(key)

    def route(
        self, score: float | None, thresholds: Thresholds, *, doubtful: bool = False, unfounded: bool = False
    ) -> Route:
        """Three-way: accept at or above accept_at, reject at or below reject_at, escalate between. Decide: accept at
        or above `decide_at_for(thresholds)`, reject below, never escalate.

        `score` None: nothing was scored (unknown, not unsupported). `doubtful`: the score alone may not accept it (a
        claim not fully scored, or negated against its evidence; an answer with a claim not accepted or not scored,
        or a citation finding). Neither is ever accepted: three-way escalates it (the judge or a person looks),
        decide rejects it. `unfounded` (`Router.unfounded`, the reject guard): three-way escalates what it would
        reject; decide, with no one to look, still rejects it."""
        if self.mode == "decide":
            accepted = score is not None and not doubtful and score >= self.decide_at_for(thresholds)
            return Route.ACCEPT if accepted else Route.REJECT
        accept_at, reject_at = thresholds
        if score is None or (score >= accept_at and doubtful):
            return Route.ESCALATE
        if score >= accept_at:
            return Route.ACCEPT
        return Route.REJECT if score <= reject_at and not unfounded else Route.ESCALATE

    def described(self, thresholds: Thresholds) -> RoutedThresholds:
        """The thresholds an answer was routed by, as its report's `meta.thresholds` names them: the pair, and in
        decide mode the one threshold it was decided at."""
        decide_at = self.decide_at_for(thresholds) if self.mode == "decide" else None
        return RoutedThresholds(accept_at=thresholds[0], reject_at=thresholds[1], decide_at=decide_at)
