"""The hybrid combiner: fitting, JSON round trip, numpy prediction equal to scikit-learn's, grouped CV."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from groundwire.calibration import combine
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner, load_combiner


def _rows(n_answers: int = 120, seed: int = 0, task: str = "qa", flip: bool = False) -> list[combine.ClaimRow]:
    """Synthetic claim rows; with `flip`, low support marks the good claims (a task where a feature means
    the opposite of what it means elsewhere)."""
    rng = random.Random(seed)
    rows = []
    for a in range(n_answers):
        hallucinated = a % 2 == 0
        for c in range(rng.randint(1, 3)):
            bad = hallucinated and c == 0
            support = min(max(rng.gauss(0.3 if bad != flip else 0.75, 0.15), 0.01), 0.99)
            feats = {"support": support, "support_second": support / 2, "contradiction": rng.random() * 0.2,
                     "contradiction_at_best": 0.1, "best_window_recall": 1 - support / 3,
                     "novel_word_share": rng.random() * 0.2, "novel_names": 0.0, "figures_not_in_context": 0.0,
                     "figure_conflicts": 0.0, "fabricated_citation": 0.0, "claim_words": 8.0, "position": 0.5,
                     "n_claims": 3.0, "lexical_support": 1 - support / 2}
            rows.append(combine.ClaimRow(file=f"f{a % 3}", row_id=str(a), task=task, group=str(a // 4),
                                         hallucinated=hallucinated, answer_score=support, claim_index=c,
                                         span=(0, 10), gold_overlap=None, features=feats))
    return rows


def test_fit_learns_support_and_round_trips() -> None:
    rows = _rows()
    comb = combine.fit(rows)
    assert comb.coef[comb.names.index("logit:support")] > 0
    again = LogisticCombiner.from_dict(__import__("json").loads(comb.to_json()))
    feats = [r.features for r in rows]
    np.testing.assert_allclose(again.predict(feats), comb.predict(feats))
    assert np.all((comb.predict(feats) >= 0) & (comb.predict(feats) <= 1))


def test_numpy_prediction_equals_sklearn() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    model = LogisticRegression().fit(x, y)
    comb = LogisticCombiner(names=("a", "b"), mean=(0.0, 0.0), scale=(1.0, 1.0),
                            coef=tuple(model.coef_[0]), intercept=float(model.intercept_[0]))
    got = comb.predict([{"a": float(r[0]), "b": float(r[1])} for r in x])
    np.testing.assert_allclose(got, model.predict_proba(x)[:, 1], atol=1e-9)


def test_cross_validation_separates_answers() -> None:
    answers = combine.cross_validate(_rows(), folds=3)
    assert len(answers) == 120
    m = combine.metrics(answers)
    assert m["auroc"] > 0.8


def test_missing_feature_is_a_clear_error() -> None:
    comb = LogisticCombiner(names=("logit:support",), mean=(0.0,), scale=(1.0,), coef=(1.0,), intercept=0.0)
    with pytest.raises(KeyError, match="support"):
        comb.predict([{"other": 1.0}])
    with pytest.raises(ValueError, match="same length"):
        LogisticCombiner(names=("a",), mean=(), scale=(1.0,), coef=(1.0,), intercept=0.0)


def test_per_task_combiners_learn_what_each_task_needs(tmp_path) -> None:
    rows = _rows(120, task="qa") + [replace(r, row_id="d" + r.row_id)
                                    for r in _rows(120, seed=1, task="data2text", flip=True)]
    comb = combine.fit_tasks(rows, min_answers=50)
    assert set(comb.by_task) == {"qa", "data2text"}
    all_feats = [r.features for r in rows]
    support = [f["support"] for f in all_feats]
    assert np.corrcoef(support, comb.predict(all_feats, task="qa"))[0, 1] > 0.5
    assert np.corrcoef(support, comb.predict(all_feats, task="data2text"))[0, 1] < -0.5
    feats = [rows[0].features]
    assert comb.predict(feats, task="qa")[0] != pytest.approx(comb.predict(feats, task="data2text")[0])
    np.testing.assert_allclose(comb.predict(feats, task="claim"), comb.default.predict(feats))  # unknown: pooled
    path = tmp_path / "combiner.json"
    path.write_text(comb.to_json())
    again = load_combiner(path)
    assert isinstance(again, TaskCombiner)
    np.testing.assert_allclose(again.predict(feats, task="data2text"), comb.predict(feats, task="data2text"))
    # Per task, cross-validation separates both tasks; pooled, the opposite tasks cancel out.
    by_task = combine.report(combine.cross_validate(rows, folds=3))
    pooled = combine.report(combine.cross_validate(rows, folds=3, per_task=False))
    assert min(by_task[f]["auroc"] for f in ("f0", "f1", "f2")) > 0.8
    assert max(pooled[f]["auroc"] for f in ("f0", "f1", "f2")) < min(by_task[f]["auroc"] for f in ("f0", "f1", "f2"))


def test_a_task_with_too_few_answers_uses_the_pooled_combiner() -> None:
    comb = combine.fit_tasks(_rows(120, task="qa"), min_answers=500)
    assert comb.by_task == {}


def test_long_form_answers_are_calibrated_apart() -> None:
    short = _rows(120, task="qa")
    long = [replace(r, row_id="L" + r.row_id, features={**r.features, "n_claims": 6.0})
            for r in _rows(120, seed=1, task="qa", flip=True)]
    assert {r.key for r in short} == {"qa"} and {r.key for r in long} == {"qa/long"}
    comb = combine.fit_tasks(short + long, min_answers=50)
    assert set(comb.by_task) == {"qa", "qa/long"}
    _pooled, by_key = combine.task_thresholds(short + long, combine.claim_scores(comb, short + long), ["qa", "qa/long"])
    assert set(by_key) == {"qa", "qa/long"} and all(reject < accept for accept, reject in by_key.values())


def test_cross_validation_caps_figure_check_claims_as_verify_does() -> None:
    rows = _rows(120, task="qa")
    # A faithful answer whose every claim has a figure the context lacks is scored at most reject_at.
    flagged = {r.row_id for r in rows if not r.hallucinated and int(r.row_id) % 6 == 1}
    rows = [replace(r, features={**r.features, "figures_not_in_context": 1.0}) if r.row_id in flagged else r
            for r in rows]
    answers = combine.cross_validate(rows, folds=3)
    capped = [a for a, r in zip(answers, dict.fromkeys((r.file, r.row_id) for r in rows), strict=True)
              if r[1] in flagged]
    assert capped and not any(a.accepted for a in capped)
    plain = [a.score for a, key in zip(answers, dict.fromkeys((r.file, r.row_id) for r in rows), strict=True)
             if key[1] not in flagged and not a.hallucinated]
    assert max(a.score for a in capped) < np.median(plain)
