"""Routing thresholds per calibration key, set from target error rates, with fallback for small keys.

A key ("qa", "summary/long", ...) gets its own (accept_at, reject_at) only when it has enough labelled answers
of each class for the rates to be measured; otherwise it falls back to its parent key ("summary/long" ->
"summary"), then to the pooled pair, never to its own noisy fit. verify() looks thresholds up the same way
(`scoring.combiner.threshold_keys`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from groundwire.evaluation.operating import DEFAULT_TARGET_FAR, DEFAULT_TARGET_FRR, thresholds_for_targets
from groundwire.scoring.combiner import threshold_keys

MIN_KEY_CLASS_ANSWERS = 80
"""A key needs at least this many hallucinated AND this many faithful answers for thresholds of its own.

From the variance of the rates (bench/lodo.py --key-sizes): thresholds set at 10% / 10% on n answers per class
of a family give, on the family's other answers, a 90th-percentile false-accept rate of .233 at n=20, .201 at
40, .184 at 60, .183 at 80 and .157 at 120 (false-reject: .269, .213, .199, .185, .187). Below 60 a key's own
pair adds more noise than its fit removes; 80 is where both rates have settled, and where two families can
still supply a key (qa and claim do)."""

MIN_KEY_FAMILIES = 2
MIN_FAMILY_CLASS_ANSWERS = 30
"""...and at least MIN_KEY_FAMILIES dataset families must each bring this many answers of each class to it
(see fit_key_thresholds)."""

Thresholds = tuple[float, float]


class Routing(TypedDict, total=False):
    """fit_key_thresholds's options, as the recipes pass them through."""

    target_far: float
    target_frr: float
    min_class_answers: int
    per_family: bool
    by_key: bool
    min_families: int
    confidence: float | None
    accept_margin: float | None


@dataclass(frozen=True, slots=True)
class AnswerPoint:
    key: str
    family: str
    hallucinated: bool
    score: float
    """The answer's score with the deterministic checks' caps applied at a zero threshold (a capped claim
    scores 0): verify() routes such answers below any accept threshold whatever the pair is."""
    weight: float = 1.0
    """How much the answer's label counts (a judge's less than a person's: combine.ClaimRow.weight)."""
    label_error: float = 0.0
    """The probability that its label is wrong (a judge's stated error rate: combine.ClaimRow.label_error)."""


def fit_key_thresholds(answers: Sequence[AnswerPoint], *, target_far: float = DEFAULT_TARGET_FAR,
                       target_frr: float = DEFAULT_TARGET_FRR, min_class_answers: int = MIN_KEY_CLASS_ANSWERS,
                       per_family: bool = True, by_key: bool = True,
                       min_families: int = MIN_KEY_FAMILIES,
                       confidence: float | None = None,
                       accept_margin: float | None = None) -> tuple[Thresholds, dict[str, Thresholds]]:
    """(pooled pair, {key: pair}) meeting the targets; with `per_family`, on each family separately.

    A key gets its own pair only when it has `min_class_answers` answers of each class and at least
    `min_families` families each bring MIN_FAMILY_CLASS_ANSWERS of each class to it: a pair fitted on one
    family's answers is that family's, and LODO showed it does not carry over (summary thresholds from SummEdits
    alone rejected 29% of RAGTruth's faithful summaries). `confidence`: meet the targets with it
    (operating.allowed_errors) rather than on these answers alone. Each answer counts as its `weight` (a judge's
    label less than a person's) in the rates and in `min_class_answers`.

    `accept_margin` (issue 56, safe on day one): every accept threshold adds it (the margin a family nobody has
    seen needs: calibration.lodo.unseen_margin), and a key's own accept threshold may be lower than the pooled one
    only where it holds leave-one-family-out on each of its families (`_holds_without_each_family`): within one
    task the families differ widely (the summary files alone need 0.61 to 0.86)."""

    def pair(items: Sequence[AnswerPoint]) -> Thresholds:
        weighted = any(a.weight != 1.0 for a in items)
        noisy = any(a.label_error > 0.0 for a in items)  # judge labels of a stated error rate: corrected for
        return thresholds_for_targets([a.hallucinated for a in items], [a.score for a in items],
                                      target_far=target_far, target_frr=target_frr,
                                      groups=[a.family for a in items] if per_family else None,
                                      confidence=confidence, accept_margin=accept_margin or 0.0,
                                      weights=[a.weight for a in items] if weighted else None,
                                      label_errors=[a.label_error for a in items] if noisy else None)

    pooled = pair(answers)
    if not by_key:
        return pooled, {}
    keys: dict[str, list[AnswerPoint]] = {}
    for answer in answers:
        for key in threshold_keys(answer.key)[:-1]:  # the key itself and its parent, not the pooled ""
            keys.setdefault(key, []).append(answer)
    own: dict[str, Thresholds] = {}
    for key, items in sorted(keys.items()):
        positives = sum(a.weight for a in items if a.hallucinated)  # labels as they count (a judge's at its weight)
        if (min(positives, sum(a.weight for a in items) - positives) >= min_class_answers - 1e-9
                and _families_with_both_classes(items, MIN_FAMILY_CLASS_ANSWERS) >= min_families):
            candidate = pair(items)
            if accept_margin is not None:
                # The pooled accept covers every family, an unseen one's margin included: a key's is never
                # stricter, and lower only where that holds without each of its families.
                lower = candidate[0] < pooled[0] and _holds_without_each_family(items, pair, target_far)
                candidate = (candidate[0] if lower else pooled[0], min(candidate[1], pooled[0]))
            own[key] = candidate
    return pooled, own


def _holds_without_each_family(items: Sequence[AnswerPoint], pair: Callable[[Sequence[AnswerPoint]], Thresholds],
                               target_far: float) -> bool:
    """Whether a key's accept threshold, fitted without each of its families in turn, keeps that family's false
    accept within `target_far`: for each family bringing MIN_FAMILY_CLASS_ANSWERS hallucinated answers (and both
    classes among the rest, so that a pair can be fitted)."""
    for held_out in sorted({a.family for a in items}):
        test = [a.score for a in items if a.family == held_out and a.hallucinated]
        rest = [a for a in items if a.family != held_out]
        if len(test) < MIN_FAMILY_CLASS_ANSWERS or len({a.hallucinated for a in rest}) < 2:
            continue
        accept_at = pair(rest)[0]
        if sum(score >= accept_at for score in test) / len(test) > target_far:
            return False
    return True


def _families_with_both_classes(items: Sequence[AnswerPoint], minimum: int) -> int:
    """How many families bring at least `minimum` answers of each class."""
    counts = Counter((a.family, a.hallucinated) for a in items)
    return sum(min(counts[(f, True)], counts[(f, False)]) >= minimum for f in {a.family for a in items})


def lookup(key: str, pooled: Thresholds, by_key: dict[str, Thresholds]) -> Thresholds:
    """The pair verify() uses for `key`: its own, else its parent's, else the pooled one."""
    return next((by_key[k] for k in threshold_keys(key) if k in by_key), pooled)
