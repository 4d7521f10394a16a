"""Routing thresholds from target error rates: the rates they promise hold on the rows they were set on,
small keys fall back to their parent, and the sign-constrained combiner keeps its signs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.families import family
from groundwire.calibration.monotone import SIGNS, fit_monotone
from groundwire.calibration.thresholds import AnswerPoint, fit_key_thresholds, lookup
from groundwire.evaluation.operating import routing_rates, thresholds_for_targets
from groundwire.scoring.combiner import threshold_keys


def test_threshold_keys_walk_up_to_the_pooled_key() -> None:
    assert threshold_keys("summary/long") == ("summary/long", "summary", "")
    assert threshold_keys("qa") == ("qa", "")
    assert threshold_keys(None) == ("",)


def test_families_split_ragtruth_by_task_and_join_begin() -> None:
    assert family("ragtruth_dev", "qa") == "ragtruth/qa"
    assert family("begin_cmu_dev", "dialogue") == family("begin_wow_dev", "dialogue") == "begin"
    assert family("someone_elses_file", "qa") == "someone_elses_file"


def test_routing_rates_count_each_route_once() -> None:
    y = [True, True, True, False, False, False]
    s = [0.9, 0.5, 0.1, 0.95, 0.5, 0.05]
    rates = routing_rates(y, s, 0.8, 0.2)
    assert rates.false_accept == pytest.approx(1 / 3)
    assert rates.false_reject == pytest.approx(1 / 3)
    assert rates.escalated == pytest.approx(2 / 6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=4, max_size=200),
       st.sampled_from([0.0, 0.05, 0.1, 0.2]), st.sampled_from([0.0, 0.1, 0.3]))
def test_targets_hold_on_the_rows_they_were_set_on(pairs: list[tuple[bool, float]], far: float, frr: float) -> None:
    y = [p[0] for p in pairs]
    s = [p[1] for p in pairs]
    if all(y) or not any(y):
        with pytest.raises(ValueError):
            thresholds_for_targets(y, s, target_far=far, target_frr=frr)
        return
    accept_at, reject_at = thresholds_for_targets(y, s, target_far=far, target_frr=frr)
    assert 0.0 <= reject_at < accept_at <= 1.0
    rates = routing_rates(y, s, accept_at, reject_at)
    # A score of 1.0 is always accepted and a score of 0.0 always rejected, whatever the targets.
    hallucinated_at_one = sum(h and v >= 1.0 for h, v in pairs) / sum(y)
    faithful_at_zero = sum(not h and v <= 0.0 for h, v in pairs) / (len(y) - sum(y))
    assert rates.false_accept <= max(far, hallucinated_at_one) + 1e-9
    crossed = accept_at - reject_at < 1e-3  # when the two meet halfway, each side may give up some of its target
    if not crossed:
        assert rates.false_reject <= max(frr, faithful_at_zero) + 1e-9


def test_per_family_thresholds_hold_on_every_family() -> None:
    rng = np.random.default_rng(0)
    y, s, groups = [], [], []
    for name, shift in (("easy", 0.4), ("hard", 0.1)):  # "hard": hallucinated answers score almost as high
        for _ in range(200):
            h = bool(rng.random() < 0.5)
            y.append(h)
            s.append(float(np.clip(rng.normal(0.6 if not h else 0.6 - shift, 0.15), 0, 1)))
            groups.append(name)
    accept_at, reject_at = thresholds_for_targets(y, s, groups=groups)
    for name in ("easy", "hard"):
        idx = [i for i, g in enumerate(groups) if g == name]
        rates = routing_rates([y[i] for i in idx], [s[i] for i in idx], accept_at, reject_at)
        assert rates.false_accept <= 0.10 and rates.false_reject <= 0.10
    pooled_accept, _ = thresholds_for_targets(y, s)
    assert accept_at >= pooled_accept  # the hard family sets the stricter accept threshold


def test_small_keys_fall_back_to_their_parent_then_the_pool() -> None:
    rng = np.random.default_rng(1)

    def points(key: str, fam: str, n: int) -> list[AnswerPoint]:
        return [AnswerPoint(key, fam, bool(i % 2), float(rng.random())) for i in range(n)]

    # summary: 2 families x 100 answers; summary/long: 1 family of 400; qa: 20 answers.
    data = (points("summary", "news", 100) + points("summary", "meetings", 100) + points("summary/long", "news", 400)
            + points("qa", "web", 20))
    pooled, own = fit_key_thresholds(data, min_class_answers=80)
    assert "summary" in own
    assert "qa" not in own and lookup("qa", pooled, own) == pooled  # too few answers
    # 200 answers per class, but all from one family: a pair fitted there would be that family's, not the key's.
    assert "summary/long" not in own and lookup("summary/long", pooled, own) == own["summary"]
    _, one_family_ok = fit_key_thresholds(data, min_class_answers=80, min_families=1)
    assert "summary/long" in one_family_ok


def _row(i: int, support: float, lexical: float, novel: float, hallucinated: bool) -> ClaimRow:
    return ClaimRow(file="f" + str(i % 2), row_id=str(i), task="qa", group=str(i), hallucinated=hallucinated,
                    answer_score=support, claim_index=0, span=(0, 1), gold_overlap=None,
                    features={"support": support, "contradiction": 0.1, "lexical_support": lexical,
                              "novel_word_share": novel})


def test_monotone_fit_keeps_declared_signs_even_against_the_data() -> None:
    rng = np.random.default_rng(2)
    rows = []
    for i in range(400):
        h = bool(rng.random() < 0.5)
        # In this data, novel words go WITH support (an artefact): the fit must not learn a positive weight.
        novel = float(rng.random() * 0.2 + (0.0 if h else 0.5))
        rows.append(_row(i, float(np.clip(rng.normal(0.3 if h else 0.7, 0.2), 0.01, 0.99)),
                         float(rng.random()), novel, h))
    names = ("logit:support", "lexical_support", "novel_word_share")
    combiner = fit_monotone(rows, names=names, c=1.0)
    coef = dict(zip(combiner.names, combiner.coef, strict=True))
    assert coef["logit:support"] > 0.1
    assert coef["novel_word_share"] <= 0.0 == SIGNS["novel_word_share"] + 1
    low, high = combiner.predict([{"support": 0.1, "lexical_support": 0.5, "novel_word_share": 0.1},
                                  {"support": 0.9, "lexical_support": 0.5, "novel_word_share": 0.1}])
    assert high > low
    with pytest.raises(ValueError, match="no sign declared"):
        fit_monotone(rows, names=("claim_words",))
