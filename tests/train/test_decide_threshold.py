"""The decide threshold (route = "decide"): best balanced accuracy, ties to the middle of the best run; and its
leave-one-dataset-out fit (calibration.lodo.decide_lodo), as bench/lodo.py prints it."""

from __future__ import annotations

import numpy as np
import pytest

from groundwire.calibration import lodo
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.recipe import fit_given
from groundwire.evaluation.operating import decide_threshold


def test_the_threshold_by_hand() -> None:
    # Flagging the two lowest scores (both hallucinated) separates the classes: balanced accuracy 1 for any
    # threshold in (0.3, 0.5]; the middle is 0.4.
    assert decide_threshold(np.array([True, True, False, False]), np.array([0.1, 0.3, 0.5, 0.9])) == 0.4


def test_a_tie_goes_to_the_middle_of_the_best_run() -> None:
    # Three of each class; 0.5 holds one of each. Flagging {0.1, 0.2} and flagging {0.1, 0.2, 0.5} both give
    # balanced accuracy 5/6 (2/3 + 1, and 1 + 2/3, halved): one run of thresholds, (0.2, 0.7], whose middle is
    # 0.45, rather than the middle of either cut alone (0.35 or 0.6).
    hallucinated = np.array([True, True, False, True, False, False])
    scores = np.array([0.1, 0.2, 0.5, 0.5, 0.7, 0.9])
    assert decide_threshold(hallucinated, scores) == 0.45


def test_the_threshold_is_stored_to_four_decimals_only_inside_its_run() -> None:
    assert decide_threshold([True, False], [0.12341, 0.12346]) == pytest.approx(0.123435)  # 0.1234 would flag neither
    assert decide_threshold([True, False], [0.1, 0.20001]) == 0.15


def test_one_class_alone_has_no_threshold() -> None:
    with pytest.raises(ValueError, match="both"):
        decide_threshold([True, True], [0.2, 0.4])
    with pytest.raises(ValueError, match="one label per score"):
        decide_threshold([True, False], [0.2])


def _row(file: str, index: int, hallucinated: bool, score: float, *, negated: bool = False) -> ClaimRow:
    return ClaimRow(file=file, row_id=str(index), task="qa", group=f"{file}{index}", hallucinated=hallucinated,
                    answer_score=score, claim_index=0, span=(0, 1), gold_overlap=None,
                    features={"negation_flip": float(negated)})


def _rows() -> list[ClaimRow]:
    data = {"fa": [(True, 0.1), (True, 0.2), (False, 0.6), (False, 0.9)],
            "fb": [(True, 0.3), (True, 0.5), (False, 0.7), (False, 0.8)],
            "fc": [(True, 0.2), (True, 0.65), (False, 0.4), (False, 0.9)]}
    return [_row(file, i, h, s) for file, pairs in data.items() for i, (h, s) in enumerate(pairs)]


def _given(train: list[ClaimRow]) -> lodo.Fitted:
    return fit_given(train, lambda r: r.answer_score)


def test_the_decide_threshold_is_fitted_without_the_family_it_decides() -> None:
    rows = _rows()
    figures = lodo.decide_lodo(rows, _given)
    assert sorted(figures) == ["fa", "fb", "fc"]
    # fa is decided at the threshold of fb and fc's answers: hallucinated 0.2, 0.3, 0.5, 0.65 below faithful 0.4,
    # 0.7, 0.8, 0.9 but one; flagging up to 0.65 is best (balanced accuracy 7/8), so 0.675.
    fa = figures["fa"]
    assert fa["decide_at"] == 0.675
    others = [r for r in rows if r.file != "fa"]
    assert fa["decide_at"] == decide_threshold([r.hallucinated for r in others], [r.answer_score for r in others])
    # On fa at 0.675: both hallucinated answers rejected, the faithful 0.6 rejected, 0.9 accepted.
    assert (fa["n"], fa["far"], fa["frr"], fa["esc"]) == (4, 0.0, 0.5, 0.0)
    assert fa["bacc"] == pytest.approx(0.75)
    shipped = lodo.decide_in_sample(rows, _given)
    assert shipped["decide_at"] == decide_threshold([r.hallucinated for r in rows], [r.answer_score for r in rows])
    assert sorted(shipped["families"]) == ["fa", "fb", "fc"]  # type: ignore[call-overload]


def test_an_answer_with_a_negated_claim_is_decided_rejected() -> None:
    rows = [*_rows(), _row("fa", 9, False, 0.95, negated=True)]
    scores = lodo.decide_scores(_given(rows), rows)
    assert scores[("fa", "9")] == 0.0 and scores[("fa", "3")] == 0.9
    decided = {a.score: a for a in lodo.decided(_given(rows), rows, 0.5)}
    assert decided[0.0].hallucinated is False  # a faithful answer the negation check flags: a false reject
