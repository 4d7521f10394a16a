"""Fitting a domain profile (calibration/adapt.py): the confidence rule, the combiner refit toward its prior, grouped
folds, the refusals, and a profile written, loaded and applied."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from groundwire.calibration import adapt, monotone
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.monotone import fit_toward
from groundwire.config import CheckSettings
from groundwire.data.rows import read_eval_jsonl
from groundwire.evaluation.operating import accept_threshold, allowed_errors, answers_needed
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.pipeline import CheckItem, build_verifier, check
from groundwire.scoring.base import Calibration
from groundwire.scoring.combiner import LogisticCombiner
from groundwire.scoring.profile import load_profile

FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "labelled.jsonl"


def _binomial_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize("n", [10, 22, 40, 80, 200])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95])
def test_allowed_errors_is_the_largest_count_the_binomial_bound_allows(n: int, confidence: float) -> None:
    k = allowed_errors(n, 0.1, confidence)
    if k >= 0:
        assert _binomial_cdf(k, n, 0.1) <= 1 - confidence + 1e-12
    assert _binomial_cdf(k + 1, n, 0.1) > 1 - confidence
    assert allowed_errors(n, 0.1) == math.floor(0.1 * n + 1e-9)  # without a confidence: the rate on these answers


def test_answers_needed_is_where_a_threshold_above_all_first_meets_the_bound() -> None:
    need = answers_needed(0.1, 0.9)
    assert need == 22
    assert allowed_errors(need, 0.1, 0.9) == 0
    assert allowed_errors(need - 1, 0.1, 0.9) == -1
    # With the bound, a threshold lets fewer of the hallucinated answers through than the plain rate.
    scores = np.linspace(0.0, 1.0, 100)
    assert accept_threshold(scores, 0.1, 0.9) > accept_threshold(scores, 0.1)


def _rows(n: int, *, rng: np.random.Generator, flip_recall: bool = False) -> list[ClaimRow]:
    """One-claim answers whose support separates the classes; `best_window_recall` says the opposite when
    `flip_recall` (data against the sign the combiner must keep)."""
    rows = []
    for i in range(n):
        hallucinated = i % 2 == 0
        support = float(np.clip(rng.normal(0.3 if hallucinated else 0.8, 0.15), 0.01, 0.99))
        recall = float(np.clip(rng.normal(0.8 if hallucinated == flip_recall else 0.4, 0.1), 0.0, 1.0))
        rows.append(ClaimRow("synthetic", f"a{i}", "qa", f"doc{i // 2}", hallucinated, support, 0, (0, 10), None,
                             {"support": support, "best_window_recall": recall, "n_claims": 1.0}))
    return rows


PRIOR = LogisticCombiner(names=("logit:support", "best_window_recall"), mean=(0.0, 0.5), scale=(2.0, 0.2),
                         coef=(1.0, 0.5), intercept=0.0)


def test_the_refit_keeps_each_coefficient_s_sign_against_the_data() -> None:
    rows = _rows(400, rng=np.random.default_rng(0), flip_recall=True)  # recall now says "hallucinated"
    refit = fit_toward(rows, PRIOR, c=100.0)
    assert refit.coef[1] >= 0.0  # it may not turn negative: only shrink to zero
    assert refit.coef[1] < PRIOR.coef[1] - 0.2  # and it did move toward what the data say
    assert (refit.names, refit.mean, refit.scale) == (PRIOR.names, PRIOR.mean, PRIOR.scale)


def test_a_strong_prior_holds_the_refit_near_the_shipped_coefficients() -> None:
    rows = _rows(60, rng=np.random.default_rng(1), flip_recall=True)
    near = fit_toward(rows, PRIOR, c=1e-4)
    far = fit_toward(rows, PRIOR, c=100.0)
    distance = [float(np.abs(np.subtract(f.coef, PRIOR.coef)).sum()) for f in (near, far)]
    assert distance[0] < 0.05 < distance[1]


def test_the_refit_reaches_the_constrained_minimum() -> None:
    """At the fit, each coefficient off its bound has a zero gradient, and each held at zero a gradient that pushes
    it past its bound (the optimality conditions of a sign-constrained convex loss)."""
    rows = _rows(400, rng=np.random.default_rng(4), flip_recall=True)
    c = 100.0
    refit = fit_toward(rows, PRIOR, c=c)
    x, yy, w = monotone._design(rows, PRIOR.names)
    z = (x - np.asarray(PRIOR.mean)) / np.asarray(PRIOR.scale)
    coef = np.asarray(refit.coef)
    p = 1 / (1 + np.exp(-(z @ coef + refit.intercept)))
    grad = z.T @ (w * (p - yy)) / len(yy) + (coef - np.asarray(PRIOR.coef)) / (c * len(yy))
    assert abs(float(np.sum(w * (p - yy)))) / len(yy) < 1e-8  # the intercept is free
    assert refit.coef[1] == 0.0 and grad[1] > 0  # held at its bound by the data against its sign
    assert abs(grad[0]) < 1e-8


def test_the_combiner_refit_needs_no_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A core install (`pip install groundwire`, and the [serve] extra) has no scipy: the refit runs on numpy."""
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    rows = _rows(300, rng=np.random.default_rng(3))
    base = adapt.Fitted(PRIOR, (0.95, 0.05), {})
    result = adapt.adapt_rows(rows, base, recipe="combiner", targets=adapt.Targets(), c=adapt.PRIOR_C, folds=5,
                              base_model="m", calibration=Calibration())
    assert result.document["recipe"] == "combiner"
    assert result.fitted.combiner != PRIOR


def test_profile_json_names_no_path_nor_database_url() -> None:
    rows = list(read_eval_jsonl(FIXTURE))
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    from_file = adapt.adapt(rows, verifier, recipe="thresholds", source=str(FIXTURE))
    assert from_file.document["labels_from"] == {"kind": "file", "scope": None, "answers": 80,
                                                 "unlabelled_skipped": 0, "labels": "human",
                                                 "label_kinds": {"human": 80, "judge": 0}, "judge_weight": None,
                                                 "judge_error": None, "judge_error_from": None}
    assert str(FIXTURE.parent) not in json.dumps(from_file.document)
    url = "postgresql://groundwire:s3cret@db.internal:5432/log"
    from_log = adapt.adapt(rows, verifier, recipe="thresholds", source=adapt.log_source(url, "ops"), scope="ops")
    assert from_log.document["labels_from"] == {"kind": "request_log", "scope": "ops", "answers": 80,
                                                "unlabelled_skipped": 0, "labels": "human",
                                                "label_kinds": {"human": 80, "judge": 0}, "judge_weight": None,
                                                "judge_error": None, "judge_error_from": None}
    written = json.dumps(from_log.document)
    assert "s3cret" not in written and "db.internal" not in written


def test_folds_never_split_a_source_document() -> None:
    groups = [f"doc{i % 17}" for i in range(200)]
    folds = adapt.group_folds(groups, 5)
    assert len(folds) == 5
    assert np.sum(folds, axis=0).tolist() == [1] * 200  # every row in exactly one fold
    for test in folds:
        inside = {g for g, held in zip(groups, test, strict=True) if held}
        outside = {g for g, held in zip(groups, test, strict=True) if not held}
        assert not inside & outside


def test_too_few_labels_are_refused_with_how_many_more() -> None:
    rows = _rows(30, rng=np.random.default_rng(2))  # 15 of each class: 22 needed at 10% / 90%
    with pytest.raises(InputError) as error:
        adapt.require_enough(rows, adapt.Targets())
    assert error.value.code is ErrorCode.TOO_FEW_LABELS
    assert "7 more hallucinated and 7 more faithful" in str(error.value)
    adapt.require_enough(_rows(44, rng=np.random.default_rng(2)), adapt.Targets())  # 22 of each: enough


def test_a_cross_validated_false_accept_rate_above_its_interval_is_refused() -> None:
    targets = adapt.Targets()
    adapt.require_within_target(adapt.rate(6, 40), targets)  # 15%: its interval (7%-29%) reaches the target
    with pytest.raises(InputError) as error:
        adapt.require_within_target(adapt.rate(14, 40), targets, unroutable=9)  # 35%: 22%-50%, wholly above 10%
    assert error.value.code is ErrorCode.PROFILE_MISSES_TARGET
    assert "9 of them have no checkable claim" in str(error.value)
    assert str(error.value).startswith("cross-validated within the labels, this profile accepts 14 of 40")
    # Refused before anything is fitted (adapt --fine-tune checks the claim-less answers before it tunes): the
    # message speaks of no profile's cross-validation.
    with pytest.raises(InputError) as early:
        adapt.require_within_target(adapt.rate(14, 40), targets, unroutable=14, fitted=False)
    assert str(early.value).startswith("whatever it fits, any profile accepts 14 of 40 hallucinated answers")


def test_the_combiner_recipe_refits_and_routes_its_held_out_answers_within_the_targets() -> None:
    rows = _rows(300, rng=np.random.default_rng(3))
    base = adapt.Fitted(PRIOR, (0.95, 0.05), {})
    result = adapt.adapt_rows(rows, base, recipe="combiner", targets=adapt.Targets(), c=adapt.PRIOR_C, folds=5,
                              base_model="m", calibration=Calibration())
    assert result.fitted.combiner is not PRIOR
    validation = result.validation
    assert validation["profile"]["escalated"]["value"] < validation["shipped"]["escalated"]["value"]
    assert validation["profile"]["false_accept"]["value"] <= 0.10
    assert result.document["labels"]["qa"] == {"hallucinated": 150, "faithful": 150, "no_claims": 0}


def test_adapt_writes_a_profile_that_loads_and_routes_a_check(tmp_path: Path) -> None:
    rows = list(read_eval_jsonl(FIXTURE))
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    result = adapt.adapt(rows, verifier, recipe="combiner", source=str(FIXTURE))
    assert result.document["recipe"] == "thresholds"  # the lexical scorer has no combiner to refit
    out = adapt.write_profile(result, tmp_path / "support-desk")
    profile = load_profile(out)
    assert profile.base_model == "lexical-baseline"
    assert profile.thresholds == tuple(result.fitted.pooled)
    with pytest.raises(InputError) as error:
        adapt.write_profile(result, out)
    assert error.value.code is ErrorCode.OUTPUT_EXISTS

    profiled = build_verifier(CheckSettings(scorer="lexical", profile=str(out)))
    assert profiled.thresholds_for("qa") == profile.thresholds
    report = check(profiled, CheckItem("The museum of Lyon was opened in 1800.", ["The museum of Lyon was opened "
                                                                                   "in 1800 by the council."]))
    assert report.meta.profile == "support-desk"
    plain = check(verifier, CheckItem("The museum of Lyon was opened in 1800.", ["The museum of Lyon was opened "
                                                                                 "in 1800 by the council."]))
    assert plain.meta.profile is None
