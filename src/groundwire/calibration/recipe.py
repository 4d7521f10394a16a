"""The calibration recipe: claim rows -> a combiner and routing thresholds, in one call.

`bench/lodo.py` runs it once per held-out dataset family, and `groundwire train combiner` runs it once on all
families to ship it, so the figure a choice is made on and the thing shipped come from the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Unpack

import numpy as np

from groundwire.calibration import combine
from groundwire.calibration.families import family
from groundwire.calibration.monotone import fit_monotone
from groundwire.calibration.thresholds import AnswerPoint, Routing, Thresholds, fit_key_thresholds, lookup
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner

MONO_FEATURES: tuple[str, ...] = (
    "logit:support", "logit:contradiction", "lexical_support", "best_window_recall", "novel_word_share",
    "log1p:novel_names", "figures_not_in_context", "figure_conflicts", "fabricated_citation",
)
MEANING_FEATURES: tuple[str, ...] = (*MONO_FEATURES, "meaning_similarity", "meaning_uncovered")
"""The shipped features and the meaning layer's (core.meaning): how close the claim's aligned sentence is in
meaning, and the share of its content words that sentence leaves uncovered."""
MONO_C = 0.05
"""L2 strength of the shipped recipe (smaller is stronger), chosen by LODO (bench/lodo.py)."""

Key = tuple[str, str]
Combiner = LogisticCombiner | TaskCombiner


@dataclass(frozen=True)
class Fitted:
    combiner: Combiner | None
    pooled: Thresholds
    by_key: Mapping[str, Thresholds]
    answer_score: Callable[[Sequence[combine.ClaimRow]], dict[Key, float]] | None = None
    """For recipes without a combiner: the answer scores as given."""
    gate: bool = False
    """The meaning layer's paraphrase gate lifts the claims it passes (core.verdicts.capped_score)."""
    reject_needs_finding: frozenset[str] = frozenset()
    """The reject guard's keys (core.routing.Router.reject_needs_finding): a declared rule, not fitted; the bundle's
    config.json names them and calibration.lodo.route_by_key routes by them as verify() does."""

    def score_answers(self, rows: Sequence[combine.ClaimRow]) -> dict[Key, float]:
        """Answer scores as verify() gives them: the combiner's claim scores, capped by the checks at each
        key's thresholds, min over claims."""
        return self.scored(rows)[0]

    def scored(self, rows: Sequence[combine.ClaimRow]) -> tuple[dict[Key, float], list[dict[str, float]]]:
        """`score_answers` and the readings of `claim_readings` from one scoring of the rows (routing needs both,
        and scoring is most of a refit's time). A recipe with `answer_score` has no combiner: its readings are the
        rows' own features, read at no cost."""
        capped, chosen = self.claim_readings(rows)
        if self.answer_score is not None:
            return self.answer_score(rows), chosen
        return combine.answer_scores(rows, capped), chosen

    def claim_readings(self, rows: Sequence[combine.ClaimRow]) -> tuple[np.ndarray, list[dict[str, float]]]:
        """Each claim's score as verify() gives it (`combine.chosen_readings`) and the features of the reading it
        comes from; a recipe without a combiner has no scores of its own here, only its rows' features."""
        if self.combiner is None:
            return np.ones(len(rows)), [r.features for r in rows]
        return combine.chosen_readings(rows, combine.claim_scores(self.combiner, rows),
                                       lambda key: lookup(key, self.pooled, dict(self.by_key)), gate=self.gate)


Kind = Literal["v4", "mono", "meaning"]


def fit_combiner(rows: Sequence[combine.ClaimRow], kind: Kind, *, c: float | None = None,
                 names: Sequence[str] | None = None, meta: dict[str, object] | None = None) -> Combiner:
    if kind == "v4":
        return combine.fit_tasks(rows, names=names or combine.FEATURES, c=0.5 if c is None else c, meta=meta)
    default = MEANING_FEATURES if kind == "meaning" else MONO_FEATURES
    return fit_monotone(rows, names=names or default, c=MONO_C if c is None else c, meta=meta)


def answer_points(rows: Sequence[combine.ClaimRow], claim_scores: combine.ReadingScores) -> list[AnswerPoint]:
    """Each answer's floor score (the checks' caps at zero) with its key and family, for the thresholds.

    Answers with no checkable claim are left out: verify() scores them 1.0 by definition, so no threshold
    routes them, and BEGIN's 90 no-claim answers (questions back to the user, labelled hallucinated) would
    otherwise push the accept threshold to 1.0 for everyone. They still count in every reported rate."""
    floor = combine.answer_scores(rows, combine.capped_scores(rows, claim_scores, lambda _key: (0.0, 0.0)))
    first = combine.answers_of(rows)
    return [AnswerPoint(r.key, family(r.file, r.task), r.hallucinated, floor[k], r.weight, r.label_error)
            for k, r in first.items()
            if r.claim_index >= 0]


def fit_recipe(rows: Sequence[combine.ClaimRow], *, kind: Kind = "mono", c: float | None = None,
               names: Sequence[str] | None = None, meta: dict[str, object] | None = None,
               **routing: Unpack[Routing]) -> Fitted:
    """A combiner of `kind` fitted on `rows`, and thresholds (fit_key_thresholds's options in `routing`) set on
    the answers it scores."""
    combiner = fit_combiner(rows, kind, c=c, names=names, meta=meta)
    pooled, own = fit_key_thresholds(answer_points(rows, combine.claim_scores(combiner, rows)), **routing)
    return Fitted(combiner, pooled, own, gate=kind == "meaning")


def fit_given(rows: Sequence[combine.ClaimRow], score_of: Callable[[combine.ClaimRow], float],
              **routing: Unpack[Routing]) -> Fitted:
    """No combiner: each answer's score is given (the lexical baseline's, the model's alone); only the
    thresholds are fitted, the same way."""
    first = combine.answers_of(rows)
    points = [AnswerPoint(r.key, family(r.file, r.task), r.hallucinated, score_of(r)) for r in first.values()
              if r.claim_index >= 0]  # as in answer_points
    pooled, own = fit_key_thresholds(points, **routing)
    return Fitted(None, pooled, own, answer_score=lambda scored: {
        (r.file, r.row_id): score_of(r) for r in scored})
