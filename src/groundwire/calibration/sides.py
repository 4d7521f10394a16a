"""The one-sided refit (issue 56): which routing thresholds a domain's labels can certify, and a fit of that side.

Each threshold's error rate is a share of one class: the accept threshold's false-accept rate is the share of the
hallucinated answers it accepts, so the hallucinated labels alone certify it; the reject threshold's false-reject
rate is the share of the faithful answers it rejects, certified by the faithful labels alone. A skewed domain has
enough labels of one class long before the other (BEGIN CMU is 82% hallucinated: at 14 reviews a week, ~59
hallucinated and ~11 faithful after five weeks). There `adapt` fits the side its labels certify and keeps the
other at the base model's, on the base model's claim scores (no combiner refit): the kept threshold still means
what the base was certified for only on the scores it was certified on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from groundwire.calibration import combine
from groundwire.calibration.recipe import Fitted, answer_points
from groundwire.evaluation.operating import (
    accept_threshold,
    hallucinated_mass,
    reject_threshold,
    round_down,
    round_up,
)

Side = Literal["accept", "reject"]
CLASS_OF: dict[Side, str] = {"accept": "hallucinated", "reject": "faithful"}
"""The class whose labels certify each threshold."""


@dataclass(frozen=True, slots=True)
class Sides:
    """Which thresholds a fit sets from the labels, decided once on all of them (`adapt.require_enough`: every
    fold of the cross-validation fits the same sides as the profile), and why: the weighted labels (with a
    checkable claim) of each class against the fewest the targets need."""

    accept: bool = True
    """The accept threshold is fitted (enough hallucinated labels)."""
    reject: bool = True
    """The reject threshold is fitted (enough faithful labels)."""
    have: tuple[float, float] = (0.0, 0.0)
    """(hallucinated, faithful) labels, each counting as its ClaimRow.weight."""
    need: tuple[int, int] = (0, 0)
    """(hallucinated, faithful): Targets.needed()."""

    @classmethod
    def of(cls, have: tuple[float, float], need: tuple[int, int]) -> Sides:
        return cls(have[0] >= need[0] - 1e-9, have[1] >= need[1] - 1e-9, have, need)

    @property
    def fitted(self) -> tuple[Side, ...]:
        chosen: dict[Side, bool] = {"accept": self.accept, "reject": self.reject}
        return tuple(side for side, ok in chosen.items() if ok)

    @property
    def both(self) -> bool:
        return self.accept and self.reject

    def short(self) -> dict[str, int]:
        """More labels of each class whose threshold is not fitted that the targets need, by class name."""
        return {CLASS_OF[side]: math.ceil(n - h - 1e-9)
                for side, h, n in zip(CLASS_OF, self.have, self.need, strict=True) if side not in self.fitted}

    def to_dict(self) -> dict[str, object]:
        """profile.json's "sides": the thresholds fitted, and for each side the class that certifies it, its labels
        (with a checkable claim, as they count) and the fewest needed, and where its value comes from."""
        return {"fitted": list(self.fitted), **{
            side: {"class": CLASS_OF[side], "labels": _rounded(have), "needed": need,
                   "from": "labels" if side in self.fitted else "base model"}
            for side, have, need in zip(CLASS_OF, self.have, self.need, strict=True)}}


def describe(sides: Mapping[str, Any]) -> str | None:
    """What a one-sided profile says of its sides (profile.json's "sides"), None when both were fitted (or the
    profile predates the record): "accept threshold fitted on 59 hallucinated labels; reject threshold kept at the
    base model's until 22 faithful labels (11 now)"."""
    fitted = sides.get("fitted")
    if not isinstance(fitted, list) or len(fitted) != 1:
        return None
    kept = "reject" if fitted[0] == "accept" else "accept"
    own, other = sides[fitted[0]], sides[kept]
    return (f"{fitted[0]} threshold fitted on {own['labels']} {own['class']} labels; {kept} threshold kept at the "
            f"base model's until {other['needed']} {other['class']} labels ({other['labels']} now)")


BOTH = Sides()
"""Both thresholds fitted (a caller with no decision of its own: a guard's test, a bench)."""


def class_weights(rows: Sequence[combine.ClaimRow]) -> tuple[float, float]:
    """(hallucinated, faithful) labelled answers with a checkable claim, each counting as its weight (a judge's
    label at the judge weight): what the thresholds' confidence rests on."""
    answers = [r for r in combine.answers_of(rows).values() if r.claim_index >= 0]
    return (sum(r.weight for r in answers if r.hallucinated), sum(r.weight for r in answers if not r.hallucinated))


def fit_one_side(rows: Sequence[combine.ClaimRow], base: Fitted, sides: Sides, *, target_far: float,
                 target_frr: float, confidence: float) -> Fitted:
    """`base` with the one side `sides` fits set from these rows, scored by the base's combiner: pooled, and the
    same value in each of the base's own per-key pairs, whose other side stays theirs. No per-key pairs of the
    labels' own (those need both classes)."""
    if len(sides.fitted) != 1:
        raise ValueError(f"a one-sided fit sets one threshold, not {list(sides.fitted) or 'none'}")
    assert base.combiner is not None
    side = sides.fitted[0]
    points = answer_points(rows, combine.claim_scores(base.combiner, rows))
    y = np.array([p.hallucinated for p in points], dtype=bool)
    if not (y if side == "accept" else ~y).any():
        raise ValueError(f"the {side} threshold needs {CLASS_OF[side]} answers")
    scores = np.array([p.score for p in points], dtype=float)
    # Each answer counts toward its class by its weight, a judge's label by its unbiased mass as well
    # (operating.thresholds_for_targets's rule): 1 or 0 for a person's.
    mass = hallucinated_mass(y, [p.label_error for p in points])
    share = mass if side == "accept" else 1.0 - mass
    weight = np.array([p.weight for p in points], dtype=float) * share
    member = weight != 0.0
    plain = bool(np.all(weight[member] == 1.0))  # unweighted: the count rule, as thresholds_for_targets has it
    if side == "accept":
        value = round_up(min(accept_threshold(scores[member], target_far, confidence,
                                              None if plain else weight[member]), 1.0))
    else:
        value = round_down(max(reject_threshold(scores[member], target_frr, confidence,
                                                None if plain else weight[member]), 0.0))
    return Fitted(base.combiner, _with(base.pooled, side, value),
                  {key: _with(pair, side, value) for key, pair in base.by_key.items()},
                  reject_needs_finding=base.reject_needs_finding)


def _with(pair: tuple[float, float], side: Side, value: float) -> tuple[float, float]:
    """`pair` with `side` set to the fitted `value`, clipped so that reject_at stays below accept_at: the kept side
    is the base's, so the fitted one gives way, and only toward caution (an accept threshold raised lets fewer
    hallucinated answers through, a reject threshold lowered fewer faithful ones: each still meets its target)."""
    accept_at, reject_at = pair  # the next stored value (4 decimals: operating.round_up) past the kept one
    if side == "accept":
        return min(max(value, round_up(float(np.nextafter(reject_at, np.inf)))), 1.0), reject_at
    return accept_at, max(min(value, round_down(float(np.nextafter(accept_at, -np.inf)))), 0.0)


def _rounded(weight: float) -> float | int:
    return round(weight) if abs(weight - round(weight)) < 1e-9 else round(weight, 4)
