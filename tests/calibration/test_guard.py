"""The refit guard (calibration/guard.py): it refuses a profile fitted on flipped labels, accepts a better one, and
a guarded refit is written as a version or recorded as a refusal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from groundwire.calibration import adapt, guard, versions
from groundwire.calibration.combine import ClaimRow, answers_of
from groundwire.scoring.base import Calibration
from groundwire.scoring.profile import load_profile

TARGETS = adapt.Targets()
SHIPPED = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})
"""A wide band: safe, and escalating most answers."""


def _rows(n: int, seed: int) -> list[ClaimRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(0.3 if hallucinated else 0.75, 0.12), 0.01, 0.99))
        rows.append(ClaimRow("synthetic", f"a{i}", "qa", f"doc{i // 4}", hallucinated, support, 0, (0, 10), None,
                             {"support": support, "n_claims": 1.0}))
    return rows


def test_the_held_back_part_is_whole_source_documents() -> None:
    rows = _rows(400, 0)
    fit, held = guard.hold_out(rows, share=0.3, seed=1)
    assert {r.group for r in fit}.isdisjoint({r.group for r in held})
    assert 0.3 <= len(answers_of(held)) / len(answers_of(rows)) < 0.32


def test_the_guard_refuses_a_profile_fitted_on_flipped_labels() -> None:
    fit, held = guard.hold_out(_rows(600, 1), seed=0)
    flipped = [replace(r, hallucinated=not r.hallucinated) for r in fit]
    in_force = adapt.fit_profile(fit, SHIPPED, recipe="thresholds", targets=TARGETS)
    candidate = adapt.fit_profile(flipped, SHIPPED, recipe="thresholds", targets=TARGETS)
    decision = guard.guard(candidate, in_force, held, targets=TARGETS)
    assert not decision.replace
    assert decision.candidate["escalated"].value > decision.in_force["escalated"].value  # type: ignore[operator]
    # A profile that accepts everything escalates nothing, and is refused for its false accepts.
    lax = guard.guard(adapt.Fitted(adapt.IDENTITY, (0.0, 0.0), {}), SHIPPED, held, targets=TARGETS)
    assert not lax.replace and "false-accept target" in lax.reason
    assert lax.candidate["false_accept"].value == 1.0


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
    fit, held = guard.hold_out(_rows(600, 3), seed=0)
    lax = adapt.Fitted(adapt.IDENTITY, (0.3, 0.0), {})
    plain = guard.guard(lax, SHIPPED, held, targets=TARGETS)
    accepted = {k for k, r in guard.lodo.route_by_key(lax, held).items() if r.score >= r.accept_at}
    heavy = {k: (10.0 if k in accepted else 1.0) for k in answers_of(held)}
    weighted = guard.guard(lax, SHIPPED, held, targets=TARGETS, weights=heavy)
    assert weighted.weighted and not plain.weighted
    assert weighted.candidate["false_accept"].value > plain.candidate["false_accept"].value  # type: ignore[operator]


def test_a_safer_profile_replaces_one_in_force_that_misses_the_target_even_escalating_more() -> None:
    held = _rows(300, 7)
    lax = adapt.Fitted(adapt.IDENTITY, (0.35, 0.05), {})  # accepts many hallucinated answers (they centre on 0.3)
    strict = adapt.Fitted(adapt.IDENTITY, (0.6, 0.05), {})
    decision = guard.guard(strict, lax, held, targets=TARGETS)
    assert decision.in_force["false_accept"].low > TARGETS.far  # type: ignore[operator]
    assert decision.candidate["escalated"].value > decision.in_force["escalated"].value  # type: ignore[operator]
    assert decision.replace and "profile in force accepts" in decision.reason
    # Against a profile in force that is safe, escalating more is still refused.
    assert not guard.guard(adapt.Fitted(adapt.IDENTITY, (0.9, 0.05), {}), strict, held, targets=TARGETS).replace
