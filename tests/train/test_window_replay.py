"""A calibration replays verify()'s claim scores from the claim rows it collects: each window the verifier read is
scored by the combiner, capped by that window's own findings, and the max taken (core.verdicts.best_window), so what
LODO measures is what a check returns, the windows a check doubts included."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from groundwire.calibration import combine
from groundwire.calibration.recipe import Fitted
from groundwire.config import CheckSettings
from groundwire.data.rows import EvalRow, parse_record
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration
from groundwire.scoring.combiner import LogisticCombiner
from groundwire.scoring.lexical import LexicalScorer

COMBINER = LogisticCombiner(names=("logit:support", "novel_word_share", "negation_flip"), mean=(0.0, 0.0, 0.0),
                            scale=(1.0, 1.0, 1.0), coef=(1.0, -1.0, -0.5), intercept=0.2)
THRESHOLDS = (0.7, 0.2)


@dataclass
class CalibratedLexical(LexicalScorer):
    """The lexical scorer carrying a combiner and thresholds, as a bundle does."""

    @property
    def calibration(self) -> Calibration:
        return Calibration(thresholds=THRESHOLDS, combiner=COMBINER)


def _row(i: int, answer: str, context: list[str]) -> EvalRow:
    return parse_record({"id": f"r{i}", "task": "qa", "question": None, "context": context, "answer": answer,
                         "hallucinated": False, "spans": [], "source": "test"})


ROWS = [
    # the best window draws the opposites finding, another one supports the claim cleanly
    _row(0, "The old harbor museum opens early on Mondays.",
         ["The old harbor museum opens on Sundays.", "The old harbor museum closes early on Mondays."]),
    # only a doubted window: the cap stands
    _row(1, "The old harbor museum opens early on Mondays.", ["The old harbor museum closes early on Mondays."]),
    # nothing doubted, and a figure the context lacks (no sentence copied: the copy rule is not replayed)
    _row(2, "The bridge opened in 1932. It is 500 metres long.", ["In 1932 the long bridge was opened to traffic."]),
]


def test_the_replay_gives_the_scores_verify_gives() -> None:
    verifier = build_verifier(CheckSettings(), scorer=CalibratedLexical())
    rows = combine.collect_rows(ROWS, verifier, file="test")
    assert any(row.other_windows for row in rows)  # the first answer's claim was read at two windows
    fitted = Fitted(COMBINER, THRESHOLDS, {})
    replayed, chosen = fitted.claim_readings(rows)
    reports = [verifier.verify(r.answer, list(r.context)) for r in ROWS]
    claims = [claim for report in reports for claim in report.claims]
    assert replayed == pytest.approx(np.array([claim.score for claim in claims]))
    assert chosen == [claim.features for claim in claims]
    answers = fitted.score_answers(rows)
    assert [answers[("test", r.id)] for r in ROWS] == pytest.approx([report.score for report in reports])
