"""The LLM judge's labels in a fit (issue 56 item 4): a judge's label counts as its weight in the thresholds and the
combiner, is counted apart from human labels, and the guard judges a refit on human labels once they are enough."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from groundwire.calibration import adapt, combine, guard
from groundwire.calibration.combine import ClaimRow
from groundwire.evaluation.operating import accept_threshold, reject_threshold, thresholds_for_targets
from groundwire.foundation.errors import InputError
from groundwire.scoring.base import Calibration

TARGETS = adapt.Targets()
SHIPPED = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})


def _rows(n: int, seed: int, *, prefix: str = "a") -> list[ClaimRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(0.3 if hallucinated else 0.75, 0.12), 0.01, 0.99))
        rows.append(ClaimRow("log", f"{prefix}{i}", "qa", f"{prefix}doc{i // 4}", hallucinated, support, 0, (0, 10),
                             None, {"support": support, "n_claims": 1.0}))
    return rows


def _wrong_judge(n: int, seed: int, weight: float) -> list[ClaimRow]:
    """Judge labels that are all wrong: every hallucinated answer labelled faithful and the reverse."""
    return [replace(r, hallucinated=not r.hallucinated, label_kind="judge", weight=weight)
            for r in _rows(n, seed, prefix="j")]


def test_unit_weights_give_the_unweighted_thresholds_and_lighter_labels_stricter_ones() -> None:
    rng = np.random.default_rng(0)
    scores = rng.random(200)
    for target, confidence in ((0.1, None), (0.1, 0.9), (0.05, 0.95)):
        assert accept_threshold(scores, target, confidence, np.ones(200)) == accept_threshold(scores, target, confidence)
        assert reject_threshold(scores, target, confidence, np.ones(200)) == reject_threshold(scores, target, confidence)
    # 200 answers weighing 0.3 each stand for 60: fewer errors allowed, so the accept threshold rises.
    assert accept_threshold(scores, 0.1, 0.9, np.full(200, 0.3)) > accept_threshold(scores, 0.1, 0.9)
    assert reject_threshold(scores, 0.1, 0.9, np.full(200, 0.3)) < reject_threshold(scores, 0.1, 0.9)
    labels = [i % 2 == 0 for i in range(200)]
    assert (thresholds_for_targets(labels, scores.tolist(), weights=[1.0] * 200)
            == thresholds_for_targets(labels, scores.tolist()))


def test_the_judge_weight_changes_the_fit_and_a_light_judge_moves_it_less() -> None:
    human = _rows(300, 1)
    alone = adapt.fit_profile(human, SHIPPED, recipe="thresholds", targets=TARGETS).pooled
    by_weight = {w: adapt.fit_profile(human + _wrong_judge(200, 2, w), SHIPPED, recipe="thresholds",
                                      targets=TARGETS).pooled for w in (1.0, 0.1)}
    assert by_weight[1.0] != by_weight[0.1]
    # Wrong labels push the accept threshold up (faithful-looking answers labelled hallucinated); weighed light,
    # they push it less.
    assert alone[0] <= by_weight[0.1][0] < by_weight[1.0][0]
    # The combiner's fit too: its loss weighs each claim by its label's weight.
    prior = combine.LogisticCombiner(names=("logit:support",), mean=(0.0,), scale=(1.0,), coef=(1.0,), intercept=0.0)
    heavy = adapt.fit_profile(human + _wrong_judge(200, 2, 1.0), adapt.Fitted(prior, (0.95, 0.05), {}),
                              recipe="combiner", targets=TARGETS).combiner
    light = adapt.fit_profile(human + _wrong_judge(200, 2, 0.1), adapt.Fitted(prior, (0.95, 0.05), {}),
                              recipe="combiner", targets=TARGETS).combiner
    assert heavy is not None and light is not None and heavy.coef != light.coef


def test_too_few_labels_counts_a_judge_s_label_as_its_weight() -> None:
    judged = [replace(r, label_kind="judge", weight=0.3) for r in _rows(100, 3)]  # 50 per class, weighing 15
    with pytest.raises(InputError, match=r"there are 15 and 15 \(judge labels counted at weight 0.3\)") as refused:
        adapt.require_enough(judged, TARGETS)
    assert refused.value.needed == {"hallucinated": 7, "faithful": 7}  # type: ignore[attr-defined]
    adapt.require_enough([replace(r, weight=1.0) for r in judged], TARGETS)  # the same labels at full weight


def test_a_profile_records_its_label_kinds_and_the_judge_weight() -> None:
    rows = _rows(300, 4) + [replace(r, label_kind="judge", weight=0.3) for r in _rows(100, 5, prefix="j")]
    adapted = adapt.adapt_rows(rows, SHIPPED, recipe="thresholds", targets=TARGETS, c=adapt.PRIOR_C, folds=5,
                               base_model="m", calibration=Calibration(), use="both", auroc_rounds=0)
    source = adapted.document["labels_from"]
    assert source["labels"] == "both" and source["label_kinds"] == {"human": 300, "judge": 100}  # type: ignore[index]
    assert source["judge_weight"] == 0.3  # type: ignore[index]
    assert adapt.label_kinds(adapted.document)["judge"] == 100
    with pytest.raises(InputError, match="judge-weight"):
        adapt.check_judge_weight(0.0)


def test_the_guard_judges_on_human_labels_once_they_are_enough() -> None:
    human = _rows(300, 6)
    judged = _wrong_judge(300, 7, 0.3)
    held = human + judged
    rows, weights, whose = guard.guard_rows(held, TARGETS)
    assert whose == "human" and weights is None
    assert {r.label_kind for r in rows} == {"human"}
    # Too few human labels: every label judges it, a judge's at its weight.
    few = human[:10] + judged
    rows, weights, whose = guard.guard_rows(few, TARGETS)
    assert whose == "human and judge" and len(combine.answers_of(rows)) == 310
    assert weights is not None and weights[("log", "j1")] == 0.3 and weights[("log", "a1")] == 1.0


def test_a_guarded_refit_counts_the_kinds_apart_and_is_judged_on_human_labels() -> None:
    """Judge labels that are all wrong, beside human ones: the guard measures the refit on the human labels only; weighed lighter, the wrong labels move the profile less (its accept threshold nearer the human one)."""
    accept_at = {}
    for weight in (1.0, 0.1):
        rows = _rows(600, 8) + _wrong_judge(400, 9, weight)
        refit = guard.guarded_refit(rows, SHIPPED, SHIPPED, recipe="thresholds", targets=TARGETS, base_model="m",
                                    calibration=Calibration(), use="both")
        assert refit.labels["human"] == 600 and refit.labels["judge"] == 400
        assert refit.labels["judge_weight"] == weight and refit.labels["guarded_on"] == "human"
        assert refit.decision is not None and refit.adapted is not None
        assert refit.decision.held_answers == 600  # every human label, out of fold
        assert refit.adapted.document["guard"]["labels"] == "human"
        accept_at[weight] = refit.adapted.fitted.pooled[0]
    assert accept_at[0.1] < accept_at[1.0]


def _flipped(rows: list[ClaimRow], share: float, seed: int) -> list[ClaimRow]:
    """Judge labels wrong on `share` of the answers, at random."""
    rng = np.random.default_rng(seed)
    return [replace(r, hallucinated=r.hallucinated != bool(rng.random() < share), label_kind="judge") for r in rows]


def test_zero_label_errors_give_the_thresholds_without_them() -> None:
    rng = np.random.default_rng(8)
    scores = rng.random(300).tolist()
    labels = [s < 0.5 if i % 7 else s >= 0.5 for i, s in enumerate(scores)]
    for confidence in (None, 0.9):
        plain = thresholds_for_targets(labels, scores, confidence=confidence)
        assert thresholds_for_targets(labels, scores, confidence=confidence, label_errors=[0.0] * 300) == plain
        assert thresholds_for_targets(labels, scores, confidence=confidence, weights=[0.5] * 300,
                                      label_errors=[0.0] * 300) == thresholds_for_targets(
            labels, scores, confidence=confidence, weights=[0.5] * 300)
    with pytest.raises(ValueError, match="label error"):
        thresholds_for_targets(labels, scores, label_errors=[0.5] * 300)
    with pytest.raises(ValueError, match="not per group"):
        thresholds_for_targets(labels, scores, label_errors=[0.1] * 300, groups=["a"] * 300)


def test_a_judge_s_stated_error_rate_is_corrected_for_and_recorded() -> None:
    clean = _rows(2000, 9)
    judged = _flipped(clean, 0.1, 10)
    truth = adapt.fit_profile(clean, SHIPPED, recipe="thresholds", targets=TARGETS).pooled
    noisy = adapt.fit_profile(judged, SHIPPED, recipe="thresholds", targets=TARGETS).pooled
    corrected = adapt.fit_profile([replace(r, label_error=0.1) for r in judged], SHIPPED, recipe="thresholds",
                                  targets=TARGETS).pooled
    # Flipped faithful answers, labelled hallucinated, score high: the accept threshold climbs above them. Told the
    # judge's error rate, the fit lands near the threshold the true labels give.
    assert noisy[0] > truth[0] + 0.05
    assert abs(corrected[0] - truth[0]) < abs(noisy[0] - truth[0]) / 2
    rows = combine.weighted_by_kind(clean[:300], [r.row_id for r in clean[:300]], judge_weight=1.0, judge_error=0.1)
    assert {(r.label_kind, r.weight, r.label_error) for r in rows} == {("judge", 1.0, 0.1)}
    adapted = adapt.adapt_rows(rows, SHIPPED, recipe="thresholds", targets=TARGETS, c=adapt.PRIOR_C, folds=5,
                               base_model="m", calibration=Calibration(), use="judge", auroc_rounds=0)
    assert adapted.document["labels_from"]["judge_error"] == 0.1  # type: ignore[index]
    with pytest.raises(InputError, match="judge-error"):
        adapt.check_judge_error(0.5)


def _guarded(profile: adapt.Fitted, rows: list[ClaimRow]) -> guard.GuardDecision:
    """The guard of `profile` against itself, on rows it routes as its own candidate."""
    return guard.guard(guard.lodo.route_by_key(profile, rows), profile, rows, targets=TARGETS)


def test_the_guard_corrects_a_judge_s_stated_error_rate_in_its_false_accept() -> None:
    clean = _rows(3000, 11)
    fitted = adapt.Fitted(adapt.IDENTITY, (0.5, 0.05), {})
    truth = _guarded(fitted, clean).candidate["false_accept"].value
    judged = _flipped(clean, 0.1, 12)
    noisy = _guarded(fitted, judged).candidate["false_accept"].value
    told = [replace(r, label_error=0.1) for r in judged]
    corrected = _guarded(fitted, told).candidate["false_accept"].value
    assert truth is not None and noisy is not None and corrected is not None
    # Faithful answers flipped to "hallucinated" sit above the accept threshold: the plain estimate counts them as
    # false accepts; told the error rate, the guard's estimate comes back near the truth.
    assert noisy > truth + 0.05 and abs(corrected - truth) < abs(noisy - truth) / 2


def test_the_guard_refuses_when_corrected_counts_leave_no_hallucinated_mass() -> None:
    # One judge label "hallucinated" among nine "faithful", told an error rate of 0.4: the corrected hallucinated
    # mass is 1 * 3 - 9 * 2 < 0, so there is no false-accept rate to judge by (this raised a TypeError before).
    rows = [replace(r, hallucinated=i == 0, label_kind="judge", label_error=0.4) for i, r in enumerate(_rows(10, 13))]
    fitted = adapt.Fitted(adapt.IDENTITY, (0.5, 0.05), {})
    decision = _guarded(fitted, rows)
    assert not decision.replace and decision.candidate["false_accept"].value is None
    assert "no hallucinated answers to measure" in decision.reason
