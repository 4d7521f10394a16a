"""The refit guard (calibration/guard.py): it refuses a profile fitted on flipped labels, accepts a better one, and
a guarded refit is written as a version or recorded as a refusal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from groundwire.calibration import adapt, guard, versions
from groundwire.calibration.combine import ClaimRow, answers_of
from groundwire.scoring.base import Calibration
from groundwire.scoring.profile import load_profile

TARGETS = adapt.Targets()
SHIPPED = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})
"""A wide band: safe, and escalating most answers."""


def _rows(n: int, seed: int, *, bad: float = 0.3, prefix: str = "") -> list[ClaimRow]:
    """Half hallucinated answers, their support centred on `bad`, half faithful ones centred on 0.75."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(bad if hallucinated else 0.75, 0.12), 0.01, 0.99))
        rows.append(ClaimRow("synthetic", f"{prefix}a{i}", "qa", f"{prefix}doc{i // 4}", hallucinated, support, 0,
                             (0, 10), None, {"support": support, "n_claims": 1.0}))
    return rows


def _split(rows: list[ClaimRow]) -> tuple[list[ClaimRow], list[ClaimRow]]:
    """(fit, judged): whole source documents apart, a third judged."""
    return ([r for r in rows if int(r.group[3:]) % 3], [r for r in rows if not int(r.group[3:]) % 3])  # "docN"


def _routes(profile: adapt.Fitted, rows: list[ClaimRow]) -> dict[tuple[str, str], guard.lodo.Routed]:
    return guard.lodo.route_by_key(profile, rows)


def test_the_guard_refuses_a_profile_fitted_on_flipped_labels() -> None:
    fit, held = _split(_rows(600, 1))
    flipped = [replace(r, hallucinated=not r.hallucinated) for r in fit]
    in_force = adapt.fit_profile(fit, SHIPPED, recipe="thresholds", targets=TARGETS)
    candidate = adapt.fit_profile(flipped, SHIPPED, recipe="thresholds", targets=TARGETS)
    decision = guard.guard(_routes(candidate, held), in_force, held, targets=TARGETS)
    assert not decision.replace
    assert decision.candidate["escalated"].value > decision.in_force["escalated"].value  # type: ignore[operator]
    # A profile that accepts everything escalates nothing, and is refused for its false accepts.
    everything = adapt.Fitted(adapt.IDENTITY, (0.0, 0.0), {})
    lax = guard.guard(_routes(everything, held), SHIPPED, held, targets=TARGETS)
    assert not lax.replace and "false-accept target" in lax.reason
    assert lax.candidate["false_accept"].value == 1.0


def test_the_guard_refuses_a_profile_that_rejects_too_many_faithful_answers() -> None:
    held = _rows(300, 4)
    # Faithful answers centre on 0.75: a reject threshold at 0.7 rejects about a third of them.
    harsh = adapt.Fitted(adapt.IDENTITY, (0.95, 0.7), {})
    decision = guard.guard(_routes(harsh, held), SHIPPED, held, targets=TARGETS)
    assert decision.candidate["escalated"].value < decision.in_force["escalated"].value  # type: ignore[operator]
    assert not decision.replace and "false-reject target" in decision.reason
    assert decision.candidate["false_reject"].low > TARGETS.frr  # type: ignore[operator]


def test_the_guard_judges_a_refit_out_of_fold_on_every_label() -> None:
    """The guard's figures for the refit are adapt's cross-validated ones: each answer routed by the profile fitted
    on the folds without its source document, every labelled answer judged."""
    rows = _rows(600, 5)
    refit = guard.guarded_refit(rows, SHIPPED, SHIPPED, recipe="thresholds", targets=TARGETS, base_model="m",
                                calibration=Calibration())
    assert refit.decision is not None and refit.adapted is not None
    assert refit.decision.held_answers == len(answers_of(rows)) == refit.labels["fitted_on"]
    cross = refit.adapted.validation["profile"]
    for name in ("false_accept", "false_reject", "escalated"):
        assert refit.decision.candidate[name].value == pytest.approx(cross[name]["value"])
    assert set(refit.adapted.cross_validated) == set(answers_of(rows))


def test_the_guard_accepts_a_better_profile_and_the_refit_is_written_and_recorded(tmp_path: Path) -> None:
    rows = _rows(600, 2)
    refit = guard.guarded_refit(rows, SHIPPED, SHIPPED, recipe="thresholds", targets=TARGETS, base_model="m",
                                calibration=Calibration())
    assert refit.replaces, refit.reason
    decision = refit.decision
    assert decision is not None and decision.candidate["escalated"].value < decision.in_force["escalated"].value  # type: ignore[operator]
    out = tmp_path / "scope"
    assert guard.settle(out, refit, by="test") == "v0001"
    assert load_profile(out).thresholds == tuple(refit.adapted.fitted.pooled)  # type: ignore[union-attr]
    entry = versions.history(out)[-1]
    assert entry["event"] == "installed" and entry["labels"]["held_back"] == decision.held_answers
    assert entry["figures"]["guard"]["candidate"]["false_accept"]["value"] <= TARGETS.far + 0.1

    # A refit adapt refuses (labels too few) is recorded as a refusal; the version in force stays.
    few = guard.guarded_refit(rows[:40], SHIPPED, SHIPPED, recipe="thresholds", targets=TARGETS, base_model="m",
                              calibration=Calibration())
    assert not few.replaces and "too_few_labels" in few.reason
    assert guard.settle(out, few, by="test") is None
    last = versions.history(out)[-1]
    assert (last["event"], last["version"]) == ("refused", "v0001") and load_profile(out).version == "v0001"


def test_weights_change_the_false_accept_estimate() -> None:
    _, held = _split(_rows(600, 3))
    lax = adapt.Fitted(adapt.IDENTITY, (0.3, 0.0), {})
    plain = guard.guard(_routes(lax, held), SHIPPED, held, targets=TARGETS)
    accepted = {k for k, r in guard.lodo.route_by_key(lax, held).items() if r.score >= r.accept_at}
    heavy = {k: (10.0 if k in accepted else 1.0) for k in answers_of(held)}
    weighted = guard.guard(_routes(lax, held), SHIPPED, held, targets=TARGETS, weights=heavy)
    assert weighted.weighted and not plain.weighted
    assert weighted.candidate["false_accept"].value > plain.candidate["false_accept"].value  # type: ignore[operator]


def test_a_safer_profile_replaces_one_in_force_that_misses_the_target_even_escalating_more() -> None:
    held = _rows(300, 7)
    lax = adapt.Fitted(adapt.IDENTITY, (0.35, 0.05), {})  # accepts many hallucinated answers (they centre on 0.3)
    strict = adapt.Fitted(adapt.IDENTITY, (0.6, 0.05), {})
    decision = guard.guard(_routes(strict, held), lax, held, targets=TARGETS)
    assert decision.in_force["false_accept"].low > TARGETS.far  # type: ignore[operator]
    assert decision.candidate["escalated"].value > decision.in_force["escalated"].value  # type: ignore[operator]
    assert decision.replace and "profile in force accepts" in decision.reason
    # Against a profile in force that is safe, escalating more is still refused.
    stricter = adapt.Fitted(adapt.IDENTITY, (0.9, 0.05), {})
    assert not guard.guard(_routes(stricter, held), strict, held, targets=TARGETS).replace


def test_a_profile_in_force_is_judged_unsafe_on_the_answers_it_routed_and_was_not_fitted_on() -> None:
    """The ratchet the exception breaks: a profile in force fitted on easy labels looks safe on them, and a truer,
    stricter refit escalates more. Asked on the answers it routed since (`fresh`), it misses the target, and the
    safer refit replaces it."""
    easy = _rows(1200, 8)
    hard = _rows(150, 9, bad=0.55, prefix="h")  # hallucinated answers that score nearly as the faithful ones
    lax = adapt.Fitted(adapt.IDENTITY, (0.55, 0.05), {})
    stricter = adapt.Fitted(adapt.IDENTITY, (0.8, 0.05), {})
    judged = easy + hard
    routes = _routes(stricter, judged)
    everything = guard.guard(routes, lax, judged, targets=TARGETS)
    assert everything.candidate["escalated"].value > everything.in_force["escalated"].value  # type: ignore[operator]
    fresh = set(answers_of(hard))
    since = guard.guard(routes, lax, judged, targets=TARGETS, fresh=fresh)
    assert since.replace and "routed and was not fitted on" in since.reason
    # On every answer the lax profile's false accept is diluted by the easy ones it was fitted on: refused.
    assert everything.in_force["false_accept"].value <= TARGETS.far  # type: ignore[operator]
    assert not everything.replace and "more than the profile in force" in everything.reason
