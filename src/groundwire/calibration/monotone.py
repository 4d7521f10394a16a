"""A sign-constrained, strongly regularised logistic combiner: the fit that generalises across datasets.

The v4 combiner had 14 free coefficients per task, and its largest was the claim count (+2.06): an artefact of
which datasets have long answers, not of grounding. Here each feature may only move the score the way it
means (more model support can only raise it, more novel words can only lower it), features that describe the
answer's shape rather than its grounding are left out, and the weights are shrunk hard. The result is applied
by the same `LogisticCombiner` as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from groundwire.calibration.combine import ClaimRow, claim_label, file_weights
from groundwire.scoring.combiner import LogisticCombiner, feature_matrix

SIGNS: Mapping[str, int] = {
    "logit:support": +1,
    "logit:support_second": +1,
    "logit:contradiction": -1,
    "logit:contradiction_at_best": -1,
    "best_window_recall": +1,
    "lexical_support": +1,
    "novel_word_share": -1,
    "log1p:novel_names": -1,
    "figures_not_in_context": -1,
    "figure_conflicts": -1,
    "fabricated_citation": -1,
    "negation_flip": -1,
    "meaning_similarity": +1,
    "meaning_uncovered": -1,
    "paraphrase": +1,
}
"""+1: the feature can only raise the support score; -1: only lower it. Shape features (claim length, position,
claim count) are not grounding evidence and are absent on purpose."""
MAX_NEWTON_STEPS = 100
GRADIENT_TOLERANCE = 1e-10
"""The fit stops where no coefficient free to move has a loss gradient above this (the loss is a mean per claim)."""


def fit_monotone(rows: Sequence[ClaimRow], *, names: Sequence[str], c: float = 0.05,
                 meta: dict[str, object] | None = None) -> LogisticCombiner:
    """Weighted logistic regression on standardised features with each coefficient's sign fixed by SIGNS
    (projected Newton) and an L2 penalty of 1/(2c) per unit weight. Labels and file-balanced, class-balanced
    weights are the ones `combine.fit` uses."""
    unknown = [n for n in names if n not in SIGNS]
    if unknown:
        raise ValueError(f"no sign declared for {unknown}; add them to SIGNS first")
    x, yy, w = _design(rows, names)
    mean, scale = x.mean(0), x.std(0)
    scale[scale < 1e-9] = 1.0
    coef, intercept = _minimise((x - mean) / scale, yy, w, c=c, signs=[SIGNS[name] for name in names],
                                prior=np.zeros(len(names)))
    return LogisticCombiner(names=tuple(names), mean=tuple(mean.tolist()), scale=tuple(scale.tolist()),
                            coef=tuple(float(v) for v in coef), intercept=intercept, meta=meta)


def fit_toward(rows: Sequence[ClaimRow], prior: LogisticCombiner, *, c: float,
               meta: dict[str, object] | None = None) -> LogisticCombiner:
    """The `prior` combiner refitted on `rows` (a domain's labels): same features and standardisation, each
    coefficient kept to its sign (SIGNS; for a feature without one, the prior's) and pulled toward the prior's
    value by an L2 penalty of 1/(2c): with few labels the result stays near the prior, with many it follows them."""
    x, yy, w = _design(rows, prior.names)
    signs = [SIGNS.get(name, int(np.sign(value))) for name, value in zip(prior.names, prior.coef, strict=True)]
    z = (x - np.asarray(prior.mean)) / np.asarray(prior.scale)
    coef, intercept = _minimise(z, yy, w, c=c, signs=signs, prior=np.asarray(prior.coef, dtype=float),
                                start_intercept=prior.intercept)
    return LogisticCombiner(names=prior.names, mean=prior.mean, scale=prior.scale,
                            coef=tuple(float(v) for v in coef), intercept=intercept,
                            meta={**(prior.meta or {}), **(meta or {})})


def _design(rows: Sequence[ClaimRow], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, weights) of the labelled claims: `combine.claim_label`'s labels with file-balanced,
    class-balanced weights averaging 1, each also times its label's weight (a judge's label counts less than a
    person's: ClaimRow.weight)."""
    y, use = claim_label(rows)
    x = feature_matrix([r.features for r, ok in zip(rows, use, strict=True) if ok], names)
    yy = y[use]
    w = (file_weights(rows, use) * np.array([r.weight for r in rows]))[use]
    for label in (0.0, 1.0):  # classes balanced inside the file weights
        mask = yy == label
        w[mask] *= len(yy) / (2 * max(w[mask].sum(), 1e-9)) * (w.sum() / len(yy))
    return x, yy, w / w.mean() if len(w) else w


def _minimise(z: np.ndarray, yy: np.ndarray, w: np.ndarray, *, c: float, signs: Sequence[int], prior: np.ndarray,
              start_intercept: float = 0.0) -> tuple[np.ndarray, float]:
    """Weighted logistic loss + |coef - prior|^2 / (2c), each coefficient bounded to its sign (0: free).

    Projected Newton (Bertsekas 1982) in numpy, so that `groundwire adapt` fits on a core install: the loss is
    convex, so with a handful of features a few exact Newton steps reach its minimum. Each step holds at zero the
    coefficients that sit on their bound with the gradient pushing outward, takes the Newton step in the others and
    projects it onto the bounds, halving it until the loss falls enough (Armijo)."""
    n, count = z.shape[1], max(len(yy), 1)
    design = np.hstack([z, np.ones((len(yy), 1))])
    lower = np.array([0.0 if sign > 0 else -np.inf for sign in signs] + [-np.inf])
    upper = np.array([0.0 if sign < 0 else np.inf for sign in signs] + [np.inf])
    penalty = np.array([1.0 / (c * count)] * n + [0.0])
    target = np.concatenate([prior, [0.0]])

    def loss(params: np.ndarray) -> float:
        logits = design @ params
        shift = params - target
        return float(np.sum(w * (np.logaddexp(0.0, logits) - yy * logits)) / count + shift @ (penalty * shift) / 2)

    params = np.clip(np.concatenate([prior, [start_intercept]]), lower, upper)
    value = loss(params)
    for _ in range(MAX_NEWTON_STEPS):
        p = np.exp(-np.logaddexp(0.0, -(design @ params)))
        grad = design.T @ (w * (p - yy) / count) + penalty * (params - target)
        # On a bound with the gradient pushing outward: held there this step.
        held = ((params <= lower) & (grad > 0)) | ((params >= upper) & (grad < 0))
        if not np.any(np.abs(grad[~held]) > GRADIENT_TOLERANCE):
            break
        free = ~held
        hessian = (design.T * (w * p * (1 - p) / count)) @ design + np.diag(penalty)
        newton = np.zeros_like(params)
        newton[free] = np.linalg.lstsq(hessian[np.ix_(free, free)], -grad[free], rcond=None)[0]
        # Projecting the Newton step onto the bounds can undo its descent where coefficients couple; a projected
        # gradient step (scaled by the Hessian's diagonal) always descends, so it takes over then.
        scaled = np.where(free, -grad / np.maximum(np.diag(hessian), 1e-12), 0.0)
        moved = _descend(loss, params, value, grad, newton, lower, upper) or _descend(
            loss, params, value, grad, scaled, lower, upper)
        if moved is None:
            break  # no step lowers the loss: at its minimum to machine precision
        params, value = moved
    return params[:n], float(params[n])


def _descend(loss: Callable[[np.ndarray], float], params: np.ndarray, value: float, grad: np.ndarray,
             step: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The longest of step, step/2, step/4, ... (projected onto the bounds) that lowers the loss enough (Armijo),
    with the loss there; None when none does."""
    size = 1.0
    for _ in range(60):
        trial = np.clip(params + size * step, lower, upper)
        decrease = float(grad @ (trial - params))
        if decrease < 0 and (trial_value := loss(trial)) <= value + 1e-4 * decrease:
            return trial, trial_value
        size /= 2
    return None
