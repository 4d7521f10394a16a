"""The operating point: accept/reject thresholds set from target error rates, and the rates they give.

ACCEPT must be safe and REJECT must be safe; the band between them goes to the judge. So a threshold pair is
chosen from two targets, not from the best balanced accuracy:
- false-accept rate (FAR): the share of hallucinated answers routed ACCEPT (score >= accept_at);
- false-reject rate (FRR): the share of faithful answers routed REJECT (score <= reject_at).
The escalation rate (the share routed to the judge) is what the model's uncertainty costs at those targets.

Decided verdicts (route = "decide", for a check with no judge) have no band: one threshold, `decide_threshold`,
set at the best balanced accuracy, and both error rates are whatever it gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

DEFAULT_TARGET_FAR = 0.10
DEFAULT_TARGET_FRR = 0.10


@dataclass(frozen=True, slots=True)
class RoutingRates:
    n: int
    false_accept: float | None
    """Hallucinated answers routed ACCEPT, over hallucinated answers (None without any)."""
    false_reject: float | None
    """Faithful answers routed REJECT, over faithful answers (None without any)."""
    escalated: float
    """Answers routed ESCALATE (to the judge), over all answers."""

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def routing_rates(hallucinated: Sequence[bool], scores: Sequence[float], accept_at: float | Sequence[float],
                  reject_at: float | Sequence[float]) -> RoutingRates:
    """Rates with verify()'s routing: ACCEPT at score >= accept_at, REJECT at score <= reject_at. The
    thresholds may be one pair or one per answer (answers of different calibration keys)."""
    s = np.asarray(scores, dtype=float)
    accepted = s >= np.asarray(accept_at, dtype=float)
    return rates_of_routes(hallucinated, accepted, ~accepted & (s <= np.asarray(reject_at, dtype=float)))


def rates_of_routes(hallucinated: Sequence[bool], accepted: Sequence[bool] | np.ndarray,
                    rejected: Sequence[bool] | np.ndarray) -> RoutingRates:
    """Rates of routes already taken (a Report's decision): the rest were escalated."""
    y = np.asarray(hallucinated, dtype=bool)
    accept = np.asarray(accepted, dtype=bool)
    reject = np.asarray(rejected, dtype=bool)
    return RoutingRates(
        n=len(y),
        false_accept=float(accept[y].mean()) if y.any() else None,
        false_reject=float(reject[~y].mean()) if (~y).any() else None,
        escalated=float((~accept & ~reject).mean()) if len(y) else 0.0,
    )


def allowed_errors(n: int, target: float, confidence: float | None = None) -> int:
    """How many of `n` answers of a class a threshold may put on the wrong side for its rate to meet `target`.

    None: floor(target * n), the rate met on these answers. With a `confidence`, the most errors k for which the
    threshold's true rate (on answers like these, not seen) is at most `target` with that confidence: the largest
    k with P(Binomial(n, target) <= k) <= 1 - confidence, the order-statistic bound of conformal risk control. -1
    when even a threshold that lets none through cannot show it (n < `answers_needed`)."""
    if confidence is None:
        return int(np.floor(target * n + 1e-9))
    allowed, cdf = -1, 0.0
    for k in range(n + 1):
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                        + k * math.log(target) + (n - k) * math.log1p(-target)) if target > 0 else 1.0
        if cdf > 1 - confidence + 1e-12:
            break
        allowed = k
    return allowed


def answers_needed(target: float, confidence: float) -> int:
    """The fewest answers of a class on which a threshold can meet `target` with `confidence` (one that lets none
    of them through): (1 - target)^n <= 1 - confidence. 22 for 10% at 90%, 29 at 95%."""
    if target <= 0.0:
        raise ValueError("a zero target rate cannot be shown with confidence on any number of answers")
    return math.ceil(math.log(1 - confidence) / math.log1p(-target) - 1e-9)


def accept_threshold(hallucinated_scores: np.ndarray, target_far: float, confidence: float | None = None,
                     weights: np.ndarray | None = None) -> float:
    """The lowest threshold at which at most `target_far` of these hallucinated answers score at or above it
    (with a `confidence`, `allowed_errors`'s count of them: at least one threshold above them all).

    `weights`: how much each answer counts (a judge's label less than a person's: calibration.combine.ClaimRow
    .weight). The answers then stand for their total weight (rounded down) in `allowed_errors`, and the threshold
    lets through the highest-scoring ones up to that much weight; with every weight 1 it is the unweighted rule."""
    return _threshold(np.asarray(hallucinated_scores, dtype=float), target_far, confidence, weights, descending=True)


def reject_threshold(faithful_scores: np.ndarray, target_frr: float, confidence: float | None = None,
                     weights: np.ndarray | None = None) -> float:
    """The highest threshold at which at most `target_frr` of these faithful answers score at or below it
    (`weights` as in accept_threshold)."""
    return _threshold(np.asarray(faithful_scores, dtype=float), target_frr, confidence, weights, descending=False)


def _threshold(scores: np.ndarray, target: float, confidence: float | None, weights: np.ndarray | None, *,
               descending: bool) -> float:
    """Accept strictly above (reject strictly below) the first answer, in score order from the wrong side, past
    which the answers let through would weigh more than `allowed_errors` allows."""
    w = np.ones(len(scores)) if weights is None else np.asarray(weights, dtype=float)
    order = np.argsort(-scores if descending else scores, kind="stable")
    s, w = scores[order], w[order]
    n = len(s) if weights is None else int(np.floor(float(w.sum()) + 1e-9))
    allowed = max(allowed_errors(n, target, confidence), 0)  # this much weight may be let through
    over = np.nonzero(np.cumsum(w) > allowed + 1e-9)[0]
    if not over.size:
        return 0.0 if descending else 1.0
    return float(np.nextafter(s[over[0]], np.inf if descending else -np.inf))


def thresholds_for_targets(hallucinated: Sequence[bool], scores: Sequence[float], *,
                           target_far: float = DEFAULT_TARGET_FAR, target_frr: float = DEFAULT_TARGET_FRR,
                           groups: Sequence[str] | None = None, min_group: int = 30,
                           confidence: float | None = None, accept_margin: float = 0.0,
                           weights: Sequence[float] | None = None,
                           label_errors: Sequence[float] | None = None) -> tuple[float, float]:
    """(accept_at, reject_at) meeting both targets on these answers (with a `confidence`, meeting them on answers
    like these with that confidence: `allowed_errors`).

    With `groups` (dataset families), each group must meet the targets on its own: the thresholds are the
    strictest of the groups' own, so a family unlike the others does not hide behind the pooled rate. A group
    with fewer than `min_group` answers of a class is too small to set that class's threshold alone: such
    groups are pooled for it. When
    the two thresholds cross (a model good enough to meet both targets with no band), they meet halfway.

    `accept_margin` is added to the accept threshold: the margin a family nobody has seen needs beyond the ones
    here (calibration.lodo.unseen_margin measures it leave-one-family-out). A cold start pays it in escalation; a
    domain profile earns it back.

    `weights`: how much each answer counts (accept_threshold); None: each counts once.

    `label_errors`: the probability that each answer's label is wrong (a judge known to err 10% of the time: 0.1; a
    person's label: 0). Each answer then counts toward the hallucinated class by (y - e) / (1 - 2e), y its label (1
    hallucinated) and e its error, and toward the faithful class by the rest of its weight: the unbiased count of
    each class under such flips, so that a noisy label's false accepts are corrected for, not fitted around. Without
    it, a judge wrong 10% of the time puts high-scoring faithful answers among the "hallucinated" ones, and the
    accept threshold climbs above them (bench/learning_table.py: +0.27 of week-6 escalation on HaluEval, +0.07 with
    the correction). Not with `groups`.
    """
    y = np.asarray(hallucinated, dtype=bool)
    s = np.asarray(scores, dtype=float)
    if not (0.0 <= target_far < 1.0 and 0.0 <= target_frr < 1.0):
        raise ValueError("target rates must be in [0, 1)")
    if not y.any() or y.all():
        raise ValueError("thresholds need both hallucinated and faithful answers")
    w = None if weights is None else np.asarray(weights, dtype=float)
    if label_errors is not None:
        if groups is not None:
            raise ValueError("label_errors are corrected for on one pool of answers, not per group")
        hallucinated_share = hallucinated_mass(y, label_errors)
        mass = np.ones(len(y)) if w is None else w
        accepts = [accept_threshold(s, target_far, confidence, mass * hallucinated_share)]
        rejects = [reject_threshold(s, target_frr, confidence, mass * (1.0 - hallucinated_share))]
    else:
        labels = np.asarray(groups if groups is not None else [""] * len(y), dtype=object)
        accepts = [accept_threshold(s[members], target_far, confidence, None if w is None else w[members])
                   for members in _class_groups(labels, y, min_group)]
        rejects = [reject_threshold(s[members], target_frr, confidence, None if w is None else w[members])
                   for members in _class_groups(labels, ~y, min_group)]
    accept_at, reject_at = min(max(accepts), 1.0), max(min(rejects), 0.0)
    if reject_at >= accept_at:
        middle = (accept_at + reject_at) / 2
        accept_at, reject_at = float(np.nextafter(middle, np.inf)), middle
    accept_at = min(accept_at + accept_margin, 1.0)  # after the meeting point: the margin is never halved
    return round_up(accept_at), round_down(reject_at)


def hallucinated_mass(hallucinated: np.ndarray, label_errors: Sequence[float]) -> np.ndarray:
    """Each answer's unbiased count as a hallucinated one when its label is flipped with probability e:
    (y - e) / (1 - 2e), y = 1 for a hallucinated label. 1 and 0 for e = 0; above 1 and below 0 otherwise, so that
    summed over answers the flips cancel out in expectation."""
    e = np.asarray(label_errors, dtype=float)
    if e.shape != hallucinated.shape or np.any((e < 0.0) | (e >= 0.5)):
        raise ValueError("one label error per answer, each in [0, 0.5)")
    mass: np.ndarray = (hallucinated.astype(float) - e) / (1.0 - 2.0 * e)
    return mass


def decide_threshold(hallucinated: np.ndarray | Sequence[bool], scores: np.ndarray | Sequence[float]) -> float:
    """The one threshold of decided verdicts (route = "decide"): flag an answer when its score is below it, at the
    best balanced accuracy on these answers.

    Several thresholds may tie at the best; they come in runs of adjacent cuts (a cut moving past a score held by
    one answer of each class, in a balanced set, changes nothing). The threshold is the middle of the longest best
    run (the lowest such run on a tie), halfway between the highest score it flags and the lowest it keeps, so it
    sits as far from both as the data allow; rounded to 4 decimals (as thresholds are stored) where that keeps it
    inside the run. Scores are taken in [0, 1]: a run that flags nothing ends at 0, one that flags all at 1."""
    y = np.asarray(hallucinated, dtype=bool)
    s = np.asarray(scores, dtype=float)
    if y.shape != s.shape:
        raise ValueError("one label per score")
    if not y.any() or y.all():
        raise ValueError("a decide threshold needs both hallucinated and faithful answers")
    values, at = np.unique(s, return_inverse=True)
    # Cut c flags the c lowest distinct scores (c = 0 .. len(values)): its hit rates, by cumulative counts.
    flagged_hallucinated = np.concatenate([[0.0], np.cumsum(np.bincount(at, weights=y, minlength=len(values)))])
    flagged_faithful = np.concatenate([[0.0], np.cumsum(np.bincount(at, weights=~y, minlength=len(values)))])
    bacc = (flagged_hallucinated / y.sum() + 1.0 - flagged_faithful / (~y).sum()) / 2
    best = np.flatnonzero(bacc >= bacc.max() - 1e-12)
    runs = np.split(best, np.flatnonzero(np.diff(best) > 1) + 1)
    run = max(runs, key=len)  # the first of the longest
    first, last, top = int(run[0]), int(run[-1]), len(values)
    # Thresholds in (lower, upper] give a cut in the run: above the highest score it flags, at most the lowest kept.
    lower = float(values[first - 1]) if first > 0 else min(0.0, float(values[0]))
    upper = float(values[last]) if last < top else max(1.0, float(np.nextafter(values[-1], np.inf)))

    def inside(threshold: float) -> bool:
        return (first == 0 or threshold > lower) and (last == top or threshold <= upper)

    middle = (lower + upper) / 2
    return next(float(t) for t in (round(middle, 4), middle, upper) if inside(t))


def _class_groups(labels: np.ndarray, of_class: np.ndarray, min_group: int) -> list[np.ndarray]:
    """Masks of one class's answers per group; groups under `min_group` answers of the class are pooled."""
    big, small = [], np.zeros(len(labels), dtype=bool)
    for g in dict.fromkeys(labels[of_class].tolist()):
        members = of_class & (labels == g)
        if members.sum() >= min_group:
            big.append(members)
        else:
            small |= members
    return big + ([small] if small.any() else [])


def round_up(value: float, digits: int = 4) -> float:
    """Thresholds are stored with `digits` decimals; rounding must never loosen them (0.95 + 1 ulp -> 0.9501)."""
    step = 10.0**-digits
    rounded = round(float(np.ceil(value / step)) * step, digits)
    return rounded if rounded >= value else round(rounded + step, digits)


def round_down(value: float, digits: int = 4) -> float:
    step = 10.0**-digits
    rounded = round(float(np.floor(value / step)) * step, digits)
    return rounded if rounded <= value else round(rounded - step, digits)
