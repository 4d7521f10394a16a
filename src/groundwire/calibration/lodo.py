"""Leave-one-dataset-out (LODO): fit a recipe without a family, score that family, for every family.

Every fitted thing -- the combiner, the routing thresholds, which calibration keys get their own -- comes from
the other families, so the figure predicts answers nobody tuned on. `in_sample` is the same recipe fitted on
every row and scored on the same rows; the gap between the two is what a choice made on the scored rows
would overstate. bench/lodo.py prints both, and `groundwire train combiner` records both beside what it ships.
`decide_lodo` and `decide_in_sample` do the same for decided verdicts (route = "decide"): one threshold at the
best balanced accuracy, fitted without the family it is scored on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groundwire.calibration.combine import ClaimRow, answers_of
from groundwire.calibration.families import EVALUATION_ONLY, family
from groundwire.calibration.recipe import Fitted
from groundwire.calibration.thresholds import lookup
from groundwire.core.claim_state import window_caps
from groundwire.core.routing import Router
from groundwire.evaluation.metrics import detection_metrics
from groundwire.evaluation.operating import decide_threshold, rates_of_routes
from groundwire.foundation.types import Route

Key = tuple[str, str]
CLAIMLESS_ACCEPT_AT = float("inf")
"""The accept threshold a claimless answer is routed by here: none accepts it (see route_by_key)."""
Recipe = Callable[[Sequence[ClaimRow]], Fitted]
Figures = dict[str, float | int | None]


@dataclass(frozen=True, slots=True)
class Routed:
    """One answer as a fitted recipe scores and routes it."""

    family: str
    hallucinated: bool
    score: float
    accept_at: float
    reject_at: float
    has_claims: bool
    unfounded: bool = False
    """The reject guard (core.routing.Router.unfounded): its key asks for a deciding finding to reject it, and none
    stands against any of its claims; at or below reject_at it is escalated, not rejected."""

    @property
    def route(self) -> Route:
        """Its route by verify()'s one rule (core.routing.Router.route, three ways)."""
        return THREE_WAY.route(self.score, (self.accept_at, self.reject_at), unfounded=self.unfounded)


THREE_WAY = Router()


def found_against(rows: Sequence[ClaimRow], chosen: Sequence[Mapping[str, float]]) -> set[Key]:
    """The answers with a claim that a deciding finding stands against at the reading its score comes from (what the
    reject guard asks for: core.claim_state.ClaimState.found_against), `chosen` the readings as the fitted recipe
    chooses them (Fitted.claim_readings)."""
    return {(r.file, r.row_id) for r, features in zip(rows, chosen, strict=True)
            if r.claim_index >= 0 and window_caps(features).kind == "reject"}


def route_by_key(fitted: Fitted, rows: Sequence[ClaimRow]) -> dict[Key, Routed]:
    """Each answer of `rows`, scored and routed by the fitted recipe, by its (file, row id); with the recipe's reject
    guard (`Fitted.reject_needs_finding`), as verify() routes it."""
    scores, chosen = fitted.scored(rows)
    router = Router(reject_needs_finding=fitted.reject_needs_finding)
    found = found_against(rows, chosen) if fitted.reject_needs_finding else set()
    out = {}
    for key, r in answers_of(rows).items():
        accept_at, reject_at = lookup(r.key, fitted.pooled, dict(fitted.by_key))
        if r.claim_index < 0:
            # verify() escalates a claimless answer unless it declines to answer (core.claims.REFUSAL_REASONS);
            # the claim rows do not record which do, so every one is escalated here: for the faithful refusals
            # among them, an upper bound on escalation.
            accept_at = CLAIMLESS_ACCEPT_AT
        out[key] = Routed(family(r.file, r.task), r.hallucinated, scores[key], accept_at, reject_at,
                          r.claim_index >= 0, router.unfounded(r.key, key in found))
    return out


def route(fitted: Fitted, rows: Sequence[ClaimRow]) -> list[Routed]:
    return list(route_by_key(fitted, rows).values())


def figures(items: Sequence[Routed]) -> Figures:
    """AUROC; balanced accuracy with "not accepted" as the flag (what `groundwire eval` reports); false-accept,
    false-reject and escalation rates; the share of hallucinated answers with no checkable claim, which
    verify() accepts by definition (no threshold can route them); and the AUROC on answers with a claim, which
    those 1.0 scores do not tie or outrank."""
    y = [a.hallucinated for a in items]
    s = [a.score for a in items]
    m = detection_metrics(y, s, [a.score < a.accept_at for a in items])
    routes = [a.route for a in items]
    rates = rates_of_routes(y, [r is Route.ACCEPT for r in routes], [r is Route.REJECT for r in routes])
    hallucinated = max(sum(y), 1)
    claimed = [a for a in items if a.has_claims]
    on_claims = detection_metrics([a.hallucinated for a in claimed], [a.score for a in claimed],
                                  [False] * len(claimed)).auroc if claimed else None
    return {"n": len(items), "auroc": m.auroc, "auroc_claims": on_claims, "bacc": m.balanced_accuracy,
            "far": rates.false_accept,
            "frr": rates.false_reject, "esc": rates.escalated,
            "far_no_claims": sum(a.hallucinated and not a.has_claims for a in items) / hallucinated}


def by_family(rows: Sequence[ClaimRow]) -> dict[str, list[ClaimRow]]:
    out: dict[str, list[ClaimRow]] = defaultdict(list)
    for r in rows:
        out[family(r.file, r.task)].append(r)
    return dict(sorted(out.items()))


def fittable(rows: Sequence[ClaimRow]) -> list[ClaimRow]:
    """The rows a recipe may be fitted on: every family's but the evaluation-only ones'."""
    return [r for r in rows if family(r.file, r.task) not in EVALUATION_ONLY]


def lodo(rows: Sequence[ClaimRow], fit: Recipe) -> dict[str, Figures]:
    """Per family: the recipe fitted on every other family (evaluation-only ones never), scored on this one."""
    out = {}
    for held_out, test in by_family(rows).items():
        train = [r for r in fittable(rows) if family(r.file, r.task) != held_out]
        out[held_out] = figures(route(fit(train), test))
    return out


def margin_needed(fitted: Fitted, test: Sequence[ClaimRow], target_far: float) -> float:
    """How much the fitted accept thresholds must rise for `test`'s answers to stay at `target_far` false accept
    (0 when they do already). Claimless answers are never accepted (route_by_key), so they only count in the
    denominator."""
    routed = route(fitted, test)
    bad = [a for a in routed if a.hallucinated]
    above = sorted((a.score - a.accept_at for a in bad if a.has_claims), reverse=True)
    allowed = int(np.floor(target_far * len(bad) + 1e-9))  # this many may be accepted
    if allowed >= len(above) or above[allowed] < 0:
        return 0.0
    return float(np.nextafter(above[allowed], np.inf))


def unseen_margin(rows: Sequence[ClaimRow], fit: Recipe, target_far: float,
                  without: str | None = None) -> dict[str, float]:
    """Per family: the margin its accept thresholds needed when it was left out (`margin_needed` of the recipe
    fitted on the other families). The largest is the margin a cold start adds (`Routing.accept_margin`): every
    family here, left out, then stays at `target_far`. `without`: leave that family out of everything (a nested
    LODO: the margin the other families alone would have chosen)."""
    families = {f: test for f, test in by_family(rows).items() if f != without and f not in EVALUATION_ONLY}
    out = {}
    for held_out, test in families.items():
        train = [r for r in fittable(rows) if family(r.file, r.task) not in (held_out, without)]
        out[held_out] = margin_needed(fit(train), test, target_far)
    return out


def nested_margin_lodo(rows: Sequence[ClaimRow], fit_at: Callable[[float], Recipe],
                       target_far: float) -> dict[str, Figures]:
    """The honest figure of a margin chosen by `unseen_margin`: per family, the margin the OTHER families choose
    (leaving each of them out in turn, this one never seen), added to the recipe fitted on them, scored on this
    family. `fit_at(margin)` is the recipe with that accept margin."""
    out: dict[str, Figures] = {}
    for held_out, test in by_family(rows).items():
        margin = max(unseen_margin(rows, fit_at(0.0), target_far, without=held_out).values(), default=0.0)
        train = [r for r in fittable(rows) if family(r.file, r.task) != held_out]
        out[held_out] = {**figures(route(fit_at(margin)(train), test)), "margin": margin}
    return out


def in_sample(rows: Sequence[ClaimRow], fit: Recipe) -> dict[str, Figures]:
    """Per family: the recipe fitted on all fittable rows (this family's included), scored on every row."""
    return per_family(route(fit(fittable(rows)), rows))


def per_family(routed: Sequence[Routed]) -> dict[str, Figures]:
    """The figures of each family's routed answers, families in order."""
    grouped: dict[str, list[Routed]] = defaultdict(list)
    for a in routed:
        grouped[a.family].append(a)
    return {f: figures(items) for f, items in sorted(grouped.items())}


def decide_scores(fitted: Fitted, rows: Sequence[ClaimRow]) -> dict[Key, float]:
    """Each answer's score as decided verdicts (route = "decide") read it: the recipe's answer score, except that an
    answer holding a claim the negation check flags scores 0, since decide mode never accepts such a claim (three-way
    keeps it below accept_at; verify() rejects it in decide mode). Claims too long to score fully are rejected by
    verify() too; the claim rows do not record them, so they are read by their score here."""
    scores = fitted.score_answers(rows)
    chosen = fitted.claim_readings(rows)[1]  # a claim's flag is the one of the reading its score comes from
    negated = {(r.file, r.row_id) for r, features in zip(rows, chosen, strict=True)
               if r.claim_index >= 0 and window_caps(features).negation}
    return {key: 0.0 if key in negated else score for key, score in scores.items()}


def fit_decide_at(fitted: Fitted, rows: Sequence[ClaimRow]) -> float:
    """The decide threshold (`operating.decide_threshold`, best balanced accuracy) on these rows' answers as the
    fitted recipe scores them. Answers with no checkable claim are left out, as they are for the routing
    thresholds: verify() scores them 1.0 and accepts them whatever the threshold."""
    scores = decide_scores(fitted, rows)
    answers = [(r.hallucinated, scores[key]) for key, r in answers_of(rows).items() if r.claim_index >= 0]
    return decide_threshold(np.array([h for h, _ in answers]), np.array([s for _, s in answers]))


def decided(fitted: Fitted, rows: Sequence[ClaimRow], decide_at: float) -> list[Routed]:
    """The answers of `rows` decided at `decide_at`: accepted at or above it, rejected below (a Routed with both
    thresholds at decide_at, so `figures` gives the decided balanced accuracy, false-accept and false-reject rates,
    and no escalation)."""
    scores = decide_scores(fitted, rows)
    # A claimless answer is rejected in decide mode (see route_by_key): both thresholds above its score of 1.0.
    return [Routed(family(r.file, r.task), r.hallucinated, scores[key],
                   *((decide_at, decide_at) if r.claim_index >= 0 else (CLAIMLESS_ACCEPT_AT, CLAIMLESS_ACCEPT_AT)),
                   r.claim_index >= 0)
            for key, r in answers_of(rows).items()]


def decide_lodo(rows: Sequence[ClaimRow], fit: Recipe) -> dict[str, Figures]:
    """Per family: the recipe and its decide threshold fitted on every other family (evaluation-only ones never),
    this family's answers decided at it. Each family's figures name the `decide_at` they were decided at."""
    out: dict[str, Figures] = {}
    for held_out, test in by_family(rows).items():
        train = [r for r in fittable(rows) if family(r.file, r.task) != held_out]
        fitted = fit(train)
        at = fit_decide_at(fitted, train)
        out[held_out] = {**figures(decided(fitted, test, at)), "decide_at": at}
    return out


def decide_in_sample(rows: Sequence[ClaimRow], fit: Recipe) -> dict[str, object]:
    """The decide threshold to ship: the recipe and the threshold fitted on all fittable rows; with the pooled
    figures on every row at it ("all") and each family's (in-sample: they overstate what a new family sees)."""
    fitted = fit(fittable(rows))
    at = fit_decide_at(fitted, fittable(rows))
    answers = decided(fitted, rows, at)
    return {"decide_at": at, "all": figures(answers), "families": per_family(answers)}


def summary(figs: dict[str, Figures], lexical: dict[str, Figures], *, limit: float = 0.15) -> dict[str, float]:
    """Across families: mean AUROC, families at or above the lexical baseline, worst rates, escalation, and
    RAGTruth's macro balanced accuracy and escalation."""
    fams = sorted(figs)
    rt = [f for f in fams if f.startswith("ragtruth/")]

    def mean(name: str, among: Sequence[str]) -> float:
        return float(np.mean([float(figs[f][name] or 0.0) for f in among])) if among else float("nan")

    return {
        "mean_auroc": mean("auroc", fams),
        "families_at_or_above_lexical": sum(float(figs[f]["auroc"] or 0) >= float(lexical[f]["auroc"] or 0) - 1e-9
                                            for f in fams),
        "families": len(fams),
        "max_far": max(float(figs[f]["far"] or 0) for f in fams),
        "max_frr": max(float(figs[f]["frr"] or 0) for f in fams),
        "families_over_limit": sum(float(figs[f]["far"] or 0) > limit or float(figs[f]["frr"] or 0) > limit
                                   for f in fams),
        "mean_esc": mean("esc", fams),
        "ragtruth_macro_bacc": mean("bacc", rt),
        "ragtruth_esc": mean("esc", rt),
    }
