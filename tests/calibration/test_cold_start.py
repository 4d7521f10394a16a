"""Safe on day one (issue 56 item 1): the accept threshold adds the margin an unseen family may need, a key's own
lower threshold must hold leave-one-family-out, and a claimless answer is not counted as accepted."""

from __future__ import annotations

import numpy as np
import pytest

from groundwire.calibration import lodo
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.recipe import Fitted, fit_given
from groundwire.calibration.thresholds import AnswerPoint, fit_key_thresholds
from groundwire.evaluation.operating import accept_threshold, thresholds_for_targets


def _family(name: str, key: str, hallucinated_centre: float, n: int = 60, seed: int = 0) -> list[AnswerPoint]:
    rng = np.random.default_rng(seed)
    bad = np.clip(rng.normal(hallucinated_centre, 0.08, n), 0, 1)
    good = np.clip(rng.normal(0.9, 0.05, n), 0, 1)
    return [AnswerPoint(key, name, True, float(s)) for s in bad] + [AnswerPoint(key, name, False, float(s))
                                                                     for s in good]


def _far(points: list[AnswerPoint], accept_at: float) -> float:
    bad = [p.score for p in points if p.hallucinated]
    return sum(s >= accept_at for s in bad) / len(bad)


def test_the_accept_margin_is_added_to_the_strictest_familys_threshold() -> None:
    families = [_family(f"f{i}", "qa", centre, seed=i) for i, centre in enumerate((0.3, 0.4, 0.5, 0.7))]
    everyone = [p for f in families for p in f]

    def accept(points: list[AnswerPoint], margin: float) -> float:
        return thresholds_for_targets([p.hallucinated for p in points], [p.score for p in points],
                                      groups=[p.family for p in points], accept_margin=margin)[0]

    strictest = max(accept_threshold(np.array([p.score for p in f if p.hallucinated]), 0.10) for f in families)
    assert accept(everyone, 0.0) >= strictest - 2e-4
    assert accept(everyone, 0.05) == pytest.approx(min(accept(everyone, 0.0) + 0.05, 1.0), abs=2e-4)
    # Left out, the strictest family is over target under the others' threshold: what a new domain meets.
    rest = [p for f in families[:-1] for p in f]
    assert _far(families[-1], accept(rest, 0.0)) > 0.10


def test_the_unseen_margin_covers_every_family_left_out() -> None:
    rows = []
    for i, (name, centre) in enumerate((("wice_dev", 0.35), ("lfqa_verification_dev", 0.45), ("hagrid_dev", 0.7))):
        rng = np.random.default_rng(i)
        for j, (hallucinated, score) in enumerate([(True, s) for s in np.clip(rng.normal(centre, 0.08, 60), 0, 1)]
                                                  + [(False, s) for s in np.clip(rng.normal(0.9, 0.04, 60), 0, 1)]):
            rows.append(ClaimRow(name, str(j), "qa", name, hallucinated, float(score), 0, (0, 1), None, {}))

    def fit_at(margin: float | None):
        return lambda train: fit_given(train, lambda r: r.answer_score, target_far=0.1, target_frr=0.1,
                                       accept_margin=margin)

    needed = lodo.unseen_margin(rows, fit_at(0.0), 0.10)
    assert needed["hagrid"] > 0.1 and needed["wice"] == 0.0  # only the strictest family needed one
    at_margin = lodo.lodo(rows, fit_at(max(needed.values())))
    assert all(float(figures["far"] or 0) <= 0.10 for figures in at_margin.values())
    assert float(lodo.lodo(rows, fit_at(None))["hagrid"]["far"] or 0) > 0.10


def test_a_key_lower_than_the_pool_must_hold_without_each_of_its_families() -> None:
    # "summary" is lower than the pool only because of one family; the other summary family needs more.
    summary = _family("s1", "summary", 0.3, n=120, seed=1) + _family("s2", "summary", 0.62, n=120, seed=2)
    qa = _family("q1", "qa", 0.7, n=120, seed=3) + _family("q2", "qa", 0.72, n=120, seed=4)
    points = summary + qa
    pooled, own = fit_key_thresholds(points, min_class_answers=80)
    guarded_pooled, guarded = fit_key_thresholds(points, min_class_answers=80, accept_margin=0.0)
    assert "summary" in own and own["summary"][0] < pooled[0]
    # Fitted without s2, the summary accept lets most of s2's hallucinated answers through: the pooled one routes.
    assert guarded["summary"][0] == guarded_pooled[0] >= pooled[0]


def test_lodo_routes_a_claimless_answer_to_no_accept() -> None:
    def row(row_id: str, claim_index: int, hallucinated: bool) -> ClaimRow:
        return ClaimRow("begin_cmu_dev", row_id, "dialogue", "g", hallucinated, 1.0, claim_index, (0, 1), None, {})

    rows = [row("chat", -1, True), row("fine", 0, False)]
    fitted = Fitted(None, (0.5, 0.1), {}, answer_score=lambda scored: {(r.file, r.row_id): 1.0 for r in scored})
    figs = lodo.figures(lodo.route(fitted, rows))
    assert figs["far"] == 0.0 and figs["esc"] == pytest.approx(0.5)
    decided = lodo.figures(lodo.decided(fitted, rows, 0.5))
    assert decided["far"] == 0.0 and decided["esc"] == 0.0
