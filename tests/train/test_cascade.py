"""The cascade's LODO: stage 2 sees only what stage 1 escalates, and together they decide more than stage 1 alone."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.lodo import Routed, route_by_key
from groundwire.calibration.recipe import Fitted, fit_given
from groundwire.calibration.thresholds import Routing
from groundwire.train.cascade import accept_only, cascade_lodo, decided, stage_two_routing


def _rows(seed: int) -> tuple[list[ClaimRow], list[ClaimRow]]:
    """Three families. Half the answers are easy: both models separate them. On the hard half the small model
    scores about 0.5 (noise alone) either way and the large model still separates them."""
    rng = np.random.default_rng(seed)
    small, large = [], []
    for family in range(3):
        for i in range(300):
            hallucinated = bool(i % 2)
            easy = i % 4 < 2
            sign = -1.0 if hallucinated else 1.0
            s = 0.5 + sign * 0.45 + rng.normal(0, 0.02) if easy else 0.5 + rng.normal(0, 0.1)
            l_ = 0.5 + sign * 0.4 + rng.normal(0, 0.05)
            for out, score in ((small, s), (large, l_)):
                score = float(np.clip(score, 0.0, 1.0))
                out.append(ClaimRow(file=f"f{family}", row_id=str(i), task="qa", group=str(i),
                                    hallucinated=hallucinated, answer_score=score, claim_index=0, span=(0, 1),
                                    gold_overlap=None, features={"support": score}))
    return small, large


ROUTING: Routing = {"target_far": 0.05, "target_frr": 0.05}


def _fit(rows: Sequence[ClaimRow], routing: Routing) -> Fitted:
    return fit_given(rows, lambda r: r.answer_score, **routing)


def test_the_cascade_decides_what_the_small_model_leaves_open() -> None:
    small, large = _rows(0)
    figs = cascade_lodo(small, large, _fit, ROUTING)
    assert set(figs) == {"f0", "f1", "f2"}
    for family, f in figs.items():
        assert f.sent_to_large == pytest.approx(float(f.small["esc"] or 0.0))
        assert float(f.small["esc"] or 0) > 0.3  # the hard half is escalated by stage 1
        assert float(f.cascade["esc"] or 0) < float(f.small["esc"] or 0) / 2, family
        assert float(f.cascade["far"] or 0) <= 0.1 and float(f.cascade["frr"] or 0) <= 0.1, family


def test_stage_two_is_fitted_only_on_what_stage_one_escalates() -> None:
    small, large = _rows(1)
    stage1 = _fit([r for r in small if r.file != "f0"], ROUTING)
    sent = {k for k, a in route_by_key(stage1, [r for r in small if r.file != "f0"]).items() if not decided(a)}
    # The answers stage 1 escalates are exactly the hard ones.
    assert sent and all(int(row_id) % 4 >= 2 for _, row_id in sent)


def test_the_two_feature_sets_must_hold_the_same_answers() -> None:
    small, large = _rows(2)
    with pytest.raises(ValueError, match="different answers"):
        cascade_lodo(small, large[:-1], _fit, ROUTING)


def test_the_same_model_twice_buys_no_decisions_with_errors() -> None:
    """A control: stage 2 = stage 1's own scores. Refitting thresholds on the escalated band must not decide
    answers by spending more than the targets allow (the unspent budget is all stage 2 gets)."""
    small, _ = _rows(3)
    figs = cascade_lodo(small, small, _fit, ROUTING)
    for f in figs.values():
        for rate in ("far", "frr"):
            assert float(f.cascade[rate] or 0) <= float(f.small[rate] or 0) + 0.02
        assert float(f.cascade["esc"] or 0) >= float(f.small["esc"] or 0) - 0.03


def test_stage_two_gets_the_budget_stage_one_left() -> None:
    first = {("f", str(i)): Routed("f", i < 10, score, 0.8, 0.2, True)
             for i, score in enumerate([0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1,   # 10 hallucinated
                                        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.1, 0.9])}  # 10 faithful
    routing = stage_two_routing(first, {"target_far": 0.2, "target_frr": 0.2})
    # Hallucinated: 1 of 10 accepted, 4 sent: (0.2 * 10 - 1) / 4. Faithful: 1 rejected, 2 sent: (0.2 * 10 - 1) / 2.
    assert routing["target_far"] == pytest.approx(0.25) and routing["target_frr"] == pytest.approx(0.5)


def test_an_accept_only_second_stage_rejects_nothing_stage_one_did_not() -> None:
    small, large = _rows(4)
    figs = cascade_lodo(small, large, _fit, ROUTING, fit_second=accept_only(_fit))
    full = cascade_lodo(small, large, _fit, ROUTING)
    for family, f in figs.items():
        # Every reject is stage 1's (its FRR and its rejects of hallucinated answers), and stage 2 still accepts.
        assert f.cascade["frr"] == f.small["frr"], family
        assert float(f.cascade["esc"] or 0) < float(f.small["esc"] or 0), family
        # What it gives up: the escalated answers the full second stage would have rejected go to the judge.
        assert float(f.cascade["esc"] or 0) >= float(full[family].cascade["esc"] or 0), family


def test_a_stage_one_share_leaves_budget_to_stage_two() -> None:
    from groundwire.train.cascade import stage_one_routing

    assert stage_one_routing(ROUTING, 0.5) == {"target_far": 0.025, "target_frr": 0.025}
    with pytest.raises(ValueError, match="share"):
        stage_one_routing(ROUTING, 0.0)
    small, large = _rows(5)
    whole = cascade_lodo(small, large, _fit, ROUTING)
    half = cascade_lodo(small, large, _fit, ROUTING, first_share=0.5)
    for family, f in half.items():
        # Stage 1 at half the budgets decides no more than at the whole of them, and the cascade still keeps the
        # cascade's targets (with the slack of a LODO fold).
        assert f.sent_to_large >= whole[family].sent_to_large, family
        assert float(f.cascade["far"] or 0) <= 0.1 and float(f.cascade["frr"] or 0) <= 0.1, family
