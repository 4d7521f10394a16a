"""The one-sided refit (calibration/sides.py, issue 56): with enough labels of one class only, adapt fits the threshold
that class certifies on the base's claim scores and keeps the other at the base's, the same sides in every fold;
with too few of both it refuses as before."""

from __future__ import annotations

import numpy as np
import pytest

from groundwire.calibration import adapt, combine, guard
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.recipe import answer_points
from groundwire.calibration.sides import Sides
from groundwire.evaluation.operating import allowed_errors
from groundwire.scoring.base import Calibration
from groundwire.scoring.combiner import LogisticCombiner

TARGETS = adapt.Targets()
PRIOR = LogisticCombiner(names=("logit:support",), mean=(0.0,), scale=(2.0,), coef=(1.0,), intercept=0.0)
BASE = adapt.Fitted(PRIOR, (0.95, 0.05), {"qa": (0.9, 0.1), "summary": (0.99, 0.7)})
"""A shipped routing with a combiner to refit and per-key pairs: "summary"'s reject_at lies above any accept_at the
labels below give."""


def _rows(hallucinated: int, faithful: int, *, seed: int = 0) -> list[ClaimRow]:
    """One-claim qa answers, hallucinated ones first, each from a source document of its own."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(hallucinated + faithful):
        bad = i < hallucinated
        support = float(np.clip(rng.normal(0.3 if bad else 0.8, 0.15), 0.01, 0.99))
        rows.append(ClaimRow("synthetic", f"a{i}", "qa", f"doc{i}", bad, support, 0, (0, 10), None,
                             {"support": support, "n_claims": 1.0}))
    return rows


def _fit(rows: list[ClaimRow]) -> adapt.Adapted:
    return adapt.adapt_rows(rows, BASE, recipe="combiner", targets=TARGETS, c=adapt.PRIOR_C, folds=5,
                            base_model="m", calibration=Calibration(), auroc_rounds=0)


def _scores(rows: list[ClaimRow], hallucinated: bool) -> list[float]:
    """The answers' scores as the thresholds are fitted on them: the base combiner's."""
    return [p.score for p in answer_points(rows, combine.claim_scores(PRIOR, rows)) if p.hallucinated == hallucinated]


def test_faithful_labels_short_fit_the_accept_threshold_and_keep_the_base_s_reject() -> None:
    rows = _rows(60, 11)
    adapted = _fit(rows)
    fitted = adapted.fitted
    accept_at = fitted.pooled[0]
    assert fitted.pooled[1] == BASE.pooled[1]
    assert accept_at != BASE.pooled[0]
    # Certified by the hallucinated labels alone: at most allowed_errors of them at or above it.
    bad = _scores(rows, True)
    assert sum(s >= accept_at for s in bad) <= max(allowed_errors(len(bad), TARGETS.far, TARGETS.confidence), 0)
    # Each of the base's keys keeps its own reject_at and takes the fitted accept_at, raised above that reject_at
    # where it would cross it; the labels make no keys of their own.
    assert dict(fitted.by_key) == {"qa": (accept_at, 0.1), "summary": (max(accept_at, 0.7001), 0.7)}
    assert fitted.combiner is PRIOR  # not refitted: the kept side means what it did on the base's scores
    document = adapted.document
    assert document["recipe"] == "thresholds" and document["calibration"]["combiner"] is None  # type: ignore[index]
    assert document["sides"] == {
        "fitted": ["accept"],
        "accept": {"class": "hallucinated", "labels": 60, "needed": 22, "from": "labels"},
        "reject": {"class": "faithful", "labels": 11, "needed": 22, "from": "base model"}}


def test_hallucinated_labels_short_fit_the_reject_threshold_and_keep_the_base_s_accept() -> None:
    rows = _rows(10, 60)
    fitted = _fit(rows).fitted
    reject_at = fitted.pooled[1]
    assert fitted.pooled[0] == BASE.pooled[0] and reject_at != BASE.pooled[1]
    good = _scores(rows, False)
    assert sum(s <= reject_at for s in good) <= max(allowed_errors(len(good), TARGETS.frr, TARGETS.confidence), 0)
    assert {key: pair[0] for key, pair in fitted.by_key.items()} == {"qa": 0.9, "summary": 0.99}
    assert {pair[1] for pair in fitted.by_key.values()} == {reject_at}
    assert fitted.combiner is PRIOR


def test_too_few_labels_of_both_classes_are_refused_as_before() -> None:
    assert adapt.require_enough(_rows(60, 11), TARGETS) == Sides(True, False, (60.0, 11.0), (22, 22))
    with pytest.raises(adapt.TooFewLabels) as refused:
        adapt.require_enough(_rows(15, 11), TARGETS)
    assert refused.value.needed == {"hallucinated": 7, "faithful": 11}
    assert "7 more hallucinated and 11 more faithful" in str(refused.value)
    with pytest.raises(adapt.TooFewLabels) as both:  # a fit that changes the scores (a fine-tune) needs both
        adapt.require_enough(_rows(60, 11), TARGETS, both=True)
    assert both.value.needed == {"faithful": 11}


@pytest.mark.parametrize(("counts", "fitted"), [((60, 11), ("accept",)), ((60, 25), ("accept", "reject"))])
def test_every_fold_fits_the_sides_decided_on_all_the_labels(monkeypatch: pytest.MonkeyPatch,
                                                             counts: tuple[int, int], fitted: tuple[str, ...]) -> None:
    """25 faithful labels are enough, the ~20 of a fold's training part would not be: the folds still fit both."""
    seen: list[Sides] = []
    fit_profile = adapt.fit_profile

    def recording(*args: object, **kwargs: object) -> adapt.Fitted:
        seen.append(kwargs["sides"])  # type: ignore[arg-type]
        return fit_profile(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(adapt, "fit_profile", recording)
    _fit(_rows(*counts))
    assert len(seen) == 6  # five folds and the profile
    assert {sides.fitted for sides in seen} == {fitted}


def test_the_guarded_refit_fits_a_one_sided_profile_on_faithful_short_labels() -> None:
    rows = _rows(200, 18, seed=1)  # 22 faithful labels would fit the reject threshold too
    shipped = adapt.Fitted(adapt.IDENTITY, (0.95, 0.05), {})
    refit = guard.guarded_refit(rows, shipped, shipped, targets=TARGETS, base_model="m", calibration=Calibration())
    assert refit.adapted is not None, refit.reason
    assert "adapt refused" not in refit.reason
    assert refit.adapted.document["sides"]["fitted"] == ["accept"]  # type: ignore[index]
    assert refit.adapted.fitted.pooled[1] == 0.05 and refit.adapted.fitted.pooled[0] < 0.95
