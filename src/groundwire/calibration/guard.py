"""The guard on a refit: whether a newly fitted profile may replace the one in force, and the refit it guards.

`guarded_refit` fits the profile on all of a scope's labelled answers with `adapt`'s own code (`adapt.adapt_rows`:
the same refusals, the same cross-validated figures) and asks `guard` whether it replaces the one in force, judged
on answers it was not fitted on: adapt's five folds of whole source documents, each answer routed by the profile
fitted on the other four (`Adapted.cross_validated`). `settle` writes the profile as a new version or records the
refusal (calibration.versions). The service's continuous refit and the learning-loop bench call these functions,
so both take the same decisions on the same labels. All are pure over plain records (claim rows, fitted recipes)
apart from `settle`, which writes the profile folder.

Why folds and not one held-back share. Until issue 56's fifth stop the guard held back 30% of the labels (whole
source documents) and fitted on the rest. On a scope with few labels that share decided when a refit could start at
all (a fit needs 22 labels of a class at 10% and 90% confidence), and the guard judged on a third as many answers.
With folds every label is fitted on and judged on, out of fold. What the folds judge is the fitting on these
labels, of which the profile put in force is one more run on all of them, as adapt's own figures are.

The profile in force is routed on the same answers, most of which it was fitted on, and there it looks safer than
it is. So whether it misses the false-accept target is asked of the answers it routed (`fresh`): otherwise a
profile fitted on labels that happened to be easy stays in force for good, since every truer refit escalates more
(docs/adapt.md, "The guard"). `bench/learning_table.py` (teach order, a person's labels, a quarter of each week
reviewed, 5 seeds), week 6 over the ten dev families, held-back share -> folds: escalation / false accept / false
reject 0.665 / 0.053 / 0.032 -> 0.663 / 0.043 / 0.039; folds with the profile in force asked on every label:
0.642 / 0.056 / 0.039, HaluEval's false accept 0.104 over 10 seeds.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

import numpy as np

from groundwire.calibration import combine, lodo, versions
from groundwire.calibration.adapt import FOLDS, PRIOR_C, Adapted, Recipe, Targets, adapt_rows, write_profile
from groundwire.calibration.recipe import Fitted
from groundwire.data.labelled import LabelUse
from groundwire.evaluation.operating import hallucinated_mass
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import Route
from groundwire.scoring.base import Calibration

LEVEL = 0.95
"""The two-sided level of the false-accept and false-reject intervals the guard allows above the targets."""

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate on the answers the guard judged, with its Wilson interval at LEVEL; `n` is the effective number of
    answers (Kish's, with weights; the count without)."""

    value: float | None
    low: float | None
    high: float | None
    n: float

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


@dataclass(frozen=True, slots=True)
class GuardDecision:
    """The guard's answer and the figures it was taken on (what the profile's history records)."""

    replace: bool
    reason: str
    held_answers: int
    """The answers judged, each held back from the fit that routed it (out of fold)."""
    weighted: bool
    candidate: Mapping[str, Rate] = field(default_factory=dict)
    in_force: Mapping[str, Rate] = field(default_factory=dict)

    def figures(self) -> dict[str, object]:
        return {"held_answers": self.held_answers, "weighted": self.weighted,
                "candidate": {k: r.as_dict() for k, r in self.candidate.items()},
                "in_force": {k: r.as_dict() for k, r in self.in_force.items()}}


def guard(candidate: Mapping[Key, lodo.Routed], in_force: Fitted, judged: Sequence[combine.ClaimRow], *,
          targets: Targets, weights: Mapping[Key, float] | None = None,
          fresh: Collection[Key] | None = None) -> GuardDecision:
    """Whether the candidate profile replaces `in_force`, judged on the answers of `judged`: `candidate` routes
    each of them by a fit that did not see it (`Adapted.cross_validated`; an answer it lacks is not judged).

    It replaces only if (1) its false-accept rate on the hallucinated answers stays within the target plus its
    interval: the rate's 95% Wilson interval reaches down to `targets.far` or below (the rule `adapt` refuses a
    profile by, `adapt.require_within_target`), (2) its false-reject rate on the faithful ones does the same against
    `targets.frr` (REJECT must be safe too), and (3) it escalates no larger share of the answers than the profile in
    force does, unless the profile in force accepts more than the target of the hallucinated answers it routed and
    was not fitted on (`fresh`, the keys of the answers it routed; None: every answer, for a routing fitted on no
    label) and this one accepts fewer: ACCEPT must be safe before it is cheap. Without that exception the rule is a
    ratchet: a profile fitted on labels that happened to be easy escalates little, so every later, stricter and
    truer refit escalates more and is refused, and on the answers it was fitted on it looks safe. The answers must
    be of both classes.

    Which false-accept estimate: labels weighted by how likely the review queue was to pick them. With `weights`
    (answer key (file, row id) -> weight; an answer without one counts 0), every rate is weighted, and its interval
    uses Kish's effective sample size. `guarded_refit` passes each label's weight (ClaimRow.weight), which the
    service and the bench set from the share of its (week, route) stratum that reviewers labelled
    (calibration.selection): so the few audit labels of accepted answers count for the accepted traffic they stand
    for, and the many labels of escalations for no more than the escalations. Without weights, every label counts
    once: the rate is then that of the labelled answers, biased toward what the queue picked.

    Judge labels (`serve --judge-labels`): `guarded_refit` hands the guard the human labels alone once they are
    enough (`guard_rows`), so a judge's errors cannot certify a profile fitted on them."""
    routed_now = lodo.route_by_key(in_force, judged)
    keys = sorted(k for k in routed_now if k in candidate)
    w, mass = _counting(routed_now, keys, judged, weights)
    weighted = weights is not None
    y = np.array([routed_now[k].hallucinated for k in keys], dtype=bool)
    if not (y.any() and (~y).any()):
        return GuardDecision(False, f"the {len(keys)} answers judged do not hold labelled answers of both classes: "
                                    "nothing to judge the refit on; label answers on more sources",
                             len(keys), weighted)
    new = _rates(candidate, keys, w, mass)
    now = _rates(routed_now, keys, w, mass)
    far, frr = new["false_accept"], new["false_reject"]
    if far.value is None:  # a judge's corrected counts (mass below 0 for its "faithful" labels) summed to nothing
        return GuardDecision(False, f"the {len(keys)} answers judged hold no hallucinated answers to measure a "
                                    "false-accept rate on once the judge's error rate is corrected for; label "
                                    "more answers", len(keys), weighted, new, now)
    for rate, target, name, which in ((far, targets.far, "false-accept", "accepts"),
                                      (frr, targets.frr, "false-reject", "rejects")):
        if rate.low is not None and rate.low > target:
            kind = "hallucinated" if which == "accepts" else "faithful"
            reason = (f"out of fold on {len(keys)} answers it {which} {rate.value or 0:.1%} of the {kind} ones (95% "
                      f"interval {rate.low:.1%}-{rate.high or 0:.1%}): above the {name} target {target:g} by more "
                      "than its interval")
            return GuardDecision(False, reason, len(keys), weighted, new, now)
    more, less = new["escalated"].value or 0.0, now["escalated"].value or 0.0
    since, routed_since = _since(routed_now, keys, w, mass, fresh)
    if since.value is not None and since.value > targets.far and (far.value or 0.0) < since.value:
        # The routing in force misses the target on the answers it routed (the traffic drifted, or the labels it was
        # fitted on were too few or happened to be easy): a safer profile replaces it even though it escalates more.
        reason = (f"on the {routed_since} answers judged that it routed and was not fitted on, the profile in "
                  f"force accepts {since.value:.1%} of the hallucinated ones, above the false-accept target "
                  f"{targets.far:g}; this one accepts {far.value:.1%} out of fold and escalates {more:.1%} against "
                  f"{less:.1%}")
        return GuardDecision(True, reason, len(keys), weighted, new, now)
    if more > less + 1e-12:
        reason = (f"out of fold on {len(keys)} answers it escalates {more:.1%}, more than the profile in force "
                  f"({less:.1%})")
        return GuardDecision(False, reason, len(keys), weighted, new, now)
    reason = (f"out of fold on {len(keys)} answers: false accept {far.value:.1%} (target {targets.far:g}), false "
              f"reject {frr.value or 0:.1%} (target {targets.frr:g}), escalated {more:.1%} against {less:.1%} in force")
    return GuardDecision(True, reason, len(keys), weighted, new, now)


def false_accept_since(in_force: Fitted, judged: Sequence[combine.ClaimRow], *,
                       weights: Mapping[Key, float] | None = None,
                       fresh: Collection[Key] | None = None) -> tuple[Rate, int]:
    """The false-accept rate of `in_force` on the answers of `judged` it was not fitted on, and how many there are:
    those it routed (`fresh`, their keys), or all of them when it was fitted on none (None: the base model's
    routing). Weighted as `guard` weighs, a judge's stated error rate corrected for."""
    routed = lodo.route_by_key(in_force, judged)
    keys = sorted(routed)
    return _since(routed, keys, *_counting(routed, keys, judged, weights), fresh)


def _counting(routed: Mapping[Key, lodo.Routed], keys: Sequence[Key], judged: Sequence[combine.ClaimRow],
              weights: Mapping[Key, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """How each answer of `keys` counts in the guard's rates: its weight (1 without `weights`; 0 for an answer
    without one), and its mass in the hallucinated class. A judge's stated error rate (ClaimRow.label_error) is
    corrected for: the unbiased mass of operating.hallucinated_mass, 1 or 0 for a person's label."""
    w = np.array([1.0 if weights is None else float(weights.get(k, 0.0)) for k in keys])
    answers = combine.answers_of(judged)
    y = np.array([routed[k].hallucinated for k in keys], dtype=bool)
    return w, hallucinated_mass(y, [answers[k].label_error for k in keys])


def _since(routed: Mapping[Key, lodo.Routed], keys: Sequence[Key], w: np.ndarray, mass: np.ndarray,
           fresh: Collection[Key] | None) -> tuple[Rate, int]:
    """The false-accept rate over the answers of `keys` in `fresh` (all of them for None), and how many there are."""
    kept = [i for i, k in enumerate(keys) if fresh is None or k in fresh]
    return _rates(routed, [keys[i] for i in kept], w[kept], mass[kept])["false_accept"], len(kept)


def _rates(routed: Mapping[Key, lodo.Routed], keys: Sequence[Key], w: np.ndarray,
           mass: np.ndarray) -> dict[str, Rate]:
    """False accept over the hallucinated answers, false reject over the faithful ones, each answer counting by its
    weight times its mass in that class (`mass`: 1 or 0 for an exact label)."""
    accepted = np.array([routed[k].route is Route.ACCEPT for k in keys], dtype=bool)
    rejected = np.array([routed[k].route is Route.REJECT for k in keys], dtype=bool)
    return {"false_accept": _rate(accepted, w * mass), "false_reject": _rate(rejected, w * (1.0 - mass)),
            "escalated": _rate(~accepted & ~rejected, w)}


def _rate(hits: np.ndarray, w: np.ndarray) -> Rate:
    total = float(w.sum())
    if total <= 0:
        return Rate(None, None, None, 0.0)
    p = min(max(float((w * hits).sum()) / total, 0.0), 1.0)  # a corrected count may step outside [0, 1]
    n = total * total / float((w * w).sum())  # Kish's effective size: the count when every weight is 1
    z = NormalDist().inv_cdf(1 - (1 - LEVEL) / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Rate(p, max(0.0, centre - half), min(1.0, centre + half), n)


def guard_rows(rows: Sequence[combine.ClaimRow],
               targets: Targets) -> tuple[list[combine.ClaimRow], dict[Key, float] | None, str]:
    """The labelled answers the guard judges a refit on, their weights, and whose labels they are ("human" or
    "human and judge").

    Human labels only, as soon as there are enough of them: at least `targets.needed()` hallucinated and faithful
    answers labelled by a person (the fewest on which a false-accept rate at the target can be shown with the
    targets' confidence). A judge's errors would otherwise certify the profile fitted on them. Until then, every
    label. Each answer counts as its label weight (ClaimRow.weight: a judge's weight times the review queue's
    selection weight, calibration.selection); None when every weight is 1."""
    answers = combine.answers_of(rows)
    human = {key for key, row in answers.items() if row.label_kind == "human"}
    need_bad, need_good = targets.needed()
    bad = sum(answers[key].hallucinated for key in human)
    if len(human) == len(answers) or (bad >= need_bad and len(human) - bad >= need_good):
        kept = [r for r in rows if (r.file, r.row_id) in human]
        return kept, _label_weights(kept), "human"
    return list(rows), _label_weights(rows), "human and judge"


def _label_weights(rows: Sequence[combine.ClaimRow]) -> dict[Key, float] | None:
    weights = combine.answer_weights(rows)
    return None if all(w == 1.0 for w in weights.values()) else weights


@dataclass(frozen=True)
class Refit:
    """A guarded refit's outcome: the profile fitted (None when adapt refused the labels) and the guard's decision
    (None when nothing was fitted); `reason` says why it replaces or not."""

    adapted: Adapted | None
    decision: GuardDecision | None
    reason: str
    labels: dict[str, object]

    @property
    def replaces(self) -> bool:
        return self.decision is not None and self.decision.replace


def guarded_refit(rows: Sequence[combine.ClaimRow], in_force: Fitted, base: Fitted, *, recipe: Recipe = "combiner",
                  targets: Targets | None = None, base_model: str, calibration: Calibration,
                  scope: str | None = None, c: float = PRIOR_C, folds: int = FOLDS, use: LabelUse = "human",
                  judge_error_from: str | dict[str, object] = "stated", fresh: Collection[Key] | None = None) -> Refit:
    """Fit a profile on the labels (adapt's fit, its refusals included) and guard it against `in_force` out of fold
    (module docstring), on the human labels once they are enough (`guard_rows`). `base`: the base model's own
    routing (what adapt refits from). Each row's label counts as its weight (ClaimRow.weight: a judge's weight,
    times the review queue's selection weight where the labels came from a queue), in the fit and the guard; `use`
    records which labels were read, `judge_error_from` how the judge's error rate was obtained
    (calibration.judge_error). The label counts (`labels`, what the history records) keep the kinds apart, with the
    judge's weight and error rate."""
    targets = targets or Targets()
    answers = combine.answers_of(rows)
    judge_weight, judge_error = combine.judge_terms(rows)
    judged_on, guard_weights, guarded_on = guard_rows(rows, targets)
    # A profile in force that misses the false-accept target on the answers it routed may be replaced by a refit on
    # labels from fewer documents than a fit otherwise waits for (calibration.clusters): a safer routing should not
    # wait for 22 documents, and the guard takes it only if it accepts fewer hallucinated answers.
    since, _ = false_accept_since(in_force, judged_on, weights=guard_weights, fresh=fresh)
    per_document = not (since.value is not None and since.value > targets.far)
    labels: dict[str, object] = {
        **combine.label_kinds(rows), "judge_weight": judge_weight, "judge_error": judge_error,
        "judge_error_from": judge_error_from if use != "human" else None,
        "hallucinated": sum(r.hallucinated for r in answers.values()),
        "faithful": sum(not r.hallucinated for r in answers.values()),
        "fitted_on": len(answers), "held_back": len(combine.answers_of(judged_on)), "guarded_on": guarded_on,
        "counted_per_document": per_document}
    try:
        adapted = adapt_rows(rows, base, recipe=recipe, targets=targets, c=c, folds=folds, base_model=base_model,
                             calibration=calibration, scope=scope, use=use, judge_error_from=judge_error_from,
                             per_document=per_document)
    except InputError as refused:
        return Refit(None, None, f"adapt refused the labels ({refused.code.value}): {refused}", labels)
    decision = guard(adapted.cross_validated, in_force, judged_on, targets=targets, weights=guard_weights,
                     fresh=fresh)
    adapted.document["guard"] = {"replaced": decision.replace, "reason": decision.reason, "labels": guarded_on,
                                 **decision.figures()}
    return Refit(adapted, decision, decision.reason, labels)


def settle(folder: Path, refit: Refit, *, by: str) -> str | None:
    """Put a refit the guard accepted in force as a new version of `folder`, or record its refusal there; the new
    version, None when refused."""
    if refit.replaces:
        assert refit.adapted is not None and refit.decision is not None
        figures = {"guard": refit.decision.figures(), "cross_validated": refit.adapted.validation["profile"]}
        write_profile(refit.adapted, folder, force=True, by=by, reason=refit.reason, figures=figures,
                      labels=refit.labels)
        return versions.current_version(folder)
    judged = refit.decision.figures() if refit.decision is not None else None
    if refit.adapted is not None:
        refit.adapted.discard()
    versions.record(folder, "refused", version=versions.current_version(folder), by=by, reason=refit.reason,
                    figures=judged, labels=refit.labels)
    return None

