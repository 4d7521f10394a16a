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

    def route(self, score: float | None, thresholds: Thresholds, *, doubtful: bool = False) -> Route:
        """Three-way: accept at or above accept_at, reject at or below reject_at, escalate between. Decide: accept at
        or above `decide_at_for(thresholds)`, reject below, never escalate.

        `score` None: nothing was scored (unknown, not unsupported). `doubtful`: the score alone may not accept it (a
        claim not fully scored, or negated against its evidence; an answer with a claim not accepted or not scored,
        or a citation finding). Neither is ever accepted: three-way escalates it (the judge or a person looks),
        decide rejects it."""
        if self.mode == "decide":
            accepted = score is not None and not doubtful and score >= self.decide_at_for(thresholds)
            return Route.ACCEPT if accepted else Route.REJECT
        accept_at, reject_at = thresholds
        if score is None or (score >= accept_at and doubtful):
            return Route.ESCALATE
        if score >= accept_at:
            return Route.ACCEPT
        return Route.REJECT if score <= reject_at else Route.ESCALATE

    def described(self, thresholds: Thresholds) -> RoutedThresholds:
        """The thresholds an answer was routed by, as its report's `meta.thresholds` names them: the pair, and in
        decide mode the one threshold it was decided at."""
        decide_at = self.decide_at_for(thresholds) if self.mode == "decide" else None
        return RoutedThresholds(accept_at=thresholds[0], reject_at=thresholds[1], decide_at=decide_at)
