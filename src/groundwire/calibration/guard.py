"""The guard on a refit: whether a newly fitted profile may replace the one in force, and the refit it guards.

`guarded_refit` holds back a share of a scope's labelled answers (whole source documents: `hold_out`), fits the
profile on the rest with `adapt`'s own code (`adapt.adapt_rows`: the same refusals, the same cross-validated
figures), and asks `guard` whether it replaces the one in force on the held-back answers. `settle` writes the
profile as a new version or records the refusal (calibration.versions). The service's continuous refit and the
learning-loop bench call these functions, so both take the same decisions on the same labels. All are pure over
plain records (claim rows, fitted recipes) apart from `settle`, which writes the profile folder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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

HOLD_SHARE = 0.3
"""The share of a scope's labelled answers (whole source documents) held back to judge a refit on."""
LEVEL = 0.95
"""The two-sided level of the false-accept interval the guard allows above the target."""

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate on the held-back answers, with its Wilson interval at LEVEL; `n` is the effective number of answers
    (Kish's, with weights; the count without)."""

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
    weighted: bool
    candidate: Mapping[str, Rate] = field(default_factory=dict)
    in_force: Mapping[str, Rate] = field(default_factory=dict)

    def figures(self) -> dict[str, object]:
        return {"held_answers": self.held_answers, "weighted": self.weighted,
                "candidate": {k: r.as_dict() for k, r in self.candidate.items()},
                "in_force": {k: r.as_dict() for k, r in self.in_force.items()}}


def hold_out(rows: Sequence[combine.ClaimRow], *, share: float = HOLD_SHARE,
             seed: int = 0) -> tuple[list[combine.ClaimRow], list[combine.ClaimRow]]:
    """(fit, held): whole source documents (`ClaimRow.group`), shuffled by `seed`, held back until they hold at
    least `share` of the answers. A document is never on both sides, so the held part judges the profile on
    sources it was not fitted on."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"the held-back share must be strictly between 0 and 1, got {share:g}")
    answers = combine.answers_of(rows)
    per_group: dict[str, int] = {}
    for row in answers.values():
        per_group[row.group] = per_group.get(row.group, 0) + 1
    groups = sorted(per_group)
    np.random.default_rng(seed).shuffle(groups)
    held_groups: set[str] = set()
    taken = 0
    for group in groups:
        if taken >= share * len(answers):
            break
        held_groups.add(group)
        taken += per_group[group]
    return [r for r in rows if r.group not in held_groups], [r for r in rows if r.group in held_groups]


def guard(candidate: Fitted, in_force: Fitted, held: Sequence[combine.ClaimRow], *, targets: Targets,
          weights: Mapping[Key, float] | None = None) -> GuardDecision:
    """Whether `candidate` replaces `in_force`, judged on held-back answers neither was fitted on.

    It replaces only if (1) its false-accept rate on the held-back hallucinated answers stays within the target
    plus its interval: the rate's 95% Wilson interval reaches down to `targets.far` or below (the rule `adapt`
    refuses a profile by, `adapt.require_within_target`), and (2) it escalates no larger share of the held-back
    answers than the profile in force does, unless the profile in force misses the target there by more than its
    interval and this one accepts fewer of the hallucinated answers: ACCEPT must be safe before it is cheap. The
    held-back part must hold answers of both classes.

    Which false-accept estimate: labels weighted by how likely the review queue was to pick them. With `weights`
    (answer key (file, row id) -> weight; an answer without one counts 0), every rate is weighted, and its interval
    uses Kish's effective sample size. `guarded_refit` passes each label's weight (ClaimRow.weight), which the
    service and the bench set from the share of its (week, route) stratum that reviewers labelled
    (calibration.selection): so the few audit labels of accepted answers count for the accepted traffic they stand
    for, and the many labels of escalations for no more than the escalations. Without weights, every label counts
    once: the rate is then that of the labelled answers, biased toward what the queue picked.

    Judge labels (`serve --judge-labels`): `guarded_refit` hands the guard the held-back human labels alone once
    they are enough (`guard_rows`), so a judge's errors cannot certify a profile fitted on them."""
    routed_now = lodo.route_by_key(in_force, held)
    routed_new = lodo.route_by_key(candidate, held)
    keys = sorted(routed_new)
    w = np.array([1.0 if weights is None else float(weights.get(k, 0.0)) for k in keys])
    y = np.array([routed_new[k].hallucinated for k in keys], dtype=bool)
    weighted = weights is not None
    if not (y.any() and (~y).any()):
        return GuardDecision(False, f"the held-back part ({len(keys)} answers) does not hold labelled answers of both "
                                    "classes: nothing to judge the refit on; label answers on more sources",
                             len(keys), weighted)
    # A judge's stated error rate (ClaimRow.label_error) is corrected for here too: each answer counts toward the
    # hallucinated class by its unbiased mass (operating.hallucinated_mass), 1 or 0 for a person's label.
    answers = combine.answers_of(held)
    mass = hallucinated_mass(y, [answers[k].label_error for k in keys])
    new = _rates(routed_new, keys, w, mass)
    now = _rates(routed_now, keys, w, mass)
    far = new["false_accept"]
    if far.value is None:  # a judge's corrected counts (mass below 0 for its "faithful" labels) summed to nothing
        return GuardDecision(False, f"the held-back part ({len(keys)} answers) holds no hallucinated answers to measure "
                                    "a false-accept rate on once the judge's error rate is corrected for; label "
                                    "more answers", len(keys), weighted, new, now)
    if far.low is not None and far.low > targets.far:
        reason = (f"on {len(keys)} held-back answers it accepts {far.value:.1%} of the hallucinated ones (95% interval "
                  f"{far.low:.1%}-{far.high or 0:.1%}): above the false-accept target {targets.far:g} by more than "
                  "its interval")
        return GuardDecision(False, reason, len(keys), weighted, new, now)
    more, less = new["escalated"].value or 0.0, now["escalated"].value or 0.0
    unsafe_now = now["false_accept"]
    if (unsafe_now.low is not None and unsafe_now.low > targets.far
            and (far.value or 0.0) < (unsafe_now.value or 0.0)):
        # The routing in force misses the target by more than its interval on these labels (the traffic drifted, or
        # the labels it was fitted on were too few): a safer profile replaces it even though it escalates more.
        reason = (f"on {len(keys)} held-back answers the profile in force accepts {unsafe_now.value:.1%} of the "
                  f"hallucinated ones (95% interval {unsafe_now.low:.1%}-{unsafe_now.high or 0:.1%}), above the "
                  f"false-accept target {targets.far:g} by more than its interval; this one accepts {far.value:.1%} "
                  f"and escalates {more:.1%} against {less:.1%}")
        return GuardDecision(True, reason, len(keys), weighted, new, now)
    if more > less + 1e-12:
        reason = (f"on {len(keys)} held-back answers it escalates {more:.1%}, more than the profile in force "
                  f"({less:.1%})")
        return GuardDecision(False, reason, len(keys), weighted, new, now)
    reason = (f"on {len(keys)} held-back answers: false accept {far.value:.1%} (target {targets.far:g}), escalated "
              f"{more:.1%} against {less:.1%} in force")
    return GuardDecision(True, reason, len(keys), weighted, new, now)


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


def guard_rows(held: Sequence[combine.ClaimRow],
               targets: Targets) -> tuple[list[combine.ClaimRow], dict[Key, float] | None, str]:
    """The held-back answers the guard judges a refit on, their weights, and whose labels they are ("human" or
    "human and judge").

    Human labels only, as soon as the held-back part holds enough of them: at least `targets.needed()` hallucinated
    and faithful answers labelled by a person (the fewest on which a false-accept rate at the target can be shown with
    the targets' confidence). A judge's errors would otherwise certify the profile fitted on them. Until then, every
    held-back label. Each answer counts as its label weight (ClaimRow.weight: a judge's weight times the review
    queue's selection weight, calibration.selection); None when every weight is 1."""
    answers = combine.answers_of(held)
    human = {key for key, row in answers.items() if row.label_kind == "human"}
    need_bad, need_good = targets.needed()
    bad = sum(answers[key].hallucinated for key in human)
    if len(human) == len(answers) or (bad >= need_bad and len(human) - bad >= need_good):
        kept = [r for r in held if (r.file, r.row_id) in human]
        return kept, _label_weights(kept), "human"
    return list(held), _label_weights(held), "human and judge"


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
                  scope: str | None = None, c: float = PRIOR_C, folds: int = FOLDS, share: float = HOLD_SHARE,
                  seed: int = 0, use: LabelUse = "human",
                  judge_error_from: str | dict[str, object] = "stated") -> Refit:
    """Fit a profile on the labels outside a held-back share (adapt's fit, its refusals included) and guard it
    against `in_force` on that share (its human labels once they are enough: `guard_rows`). `base`: the base
    model's own routing (what adapt refits from). Each row's label counts as its weight (ClaimRow.weight: a judge's
    weight, times the review queue's selection weight where the labels came from a queue), in the fit and the guard;
    `use` records which labels were read, `judge_error_from` how the judge's error rate was obtained
    (calibration.judge_error). The label counts (`labels`, what the history records) keep the kinds apart, with the
    judge's weight and error rate."""
    targets = targets or Targets()
    fit_rows, held = hold_out(rows, share=share, seed=seed)
    answers = combine.answers_of(rows)
    judge_weight, judge_error = combine.judge_terms(rows)
    labels: dict[str, object] = {
        **combine.label_kinds(rows), "judge_weight": judge_weight, "judge_error": judge_error,
        "judge_error_from": judge_error_from if use != "human" else None,
        "hallucinated": sum(r.hallucinated for r in answers.values()),
        "faithful": sum(not r.hallucinated for r in answers.values()),
        "fitted_on": len(combine.answers_of(fit_rows)), "held_back": len(combine.answers_of(held))}
    judged_on, guard_weights, guarded_on = guard_rows(held, targets)
    labels["guarded_on"] = guarded_on
    try:
        adapted = adapt_rows(fit_rows, base, recipe=recipe, targets=targets, c=c, folds=folds, base_model=base_model,
                             calibration=calibration, scope=scope, use=use, judge_error_from=judge_error_from)
    except InputError as refused:
        return Refit(None, None, f"adapt refused the labels ({refused.code.value}): {refused}", labels)
    decision = guard(adapted.fitted, in_force, judged_on, targets=targets, weights=guard_weights)
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

