"""A sign-constrained, strongly regularised logistic combiner: the fit that generalises across datasets.

The v4 combiner had 14 free coefficients per task, and its largest was the claim count (+2.06): an artefact of
which datasets have long answers, not of grounding. Here each feature may only move the score the way it
means (more model support can only raise it, more novel words can only lower it), features that describe the
answer's shape rather than its grounding are left out, and the weights are shrunk hard. The result is applied
by the same `LogisticCombiner` as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from groundwire.scoring.combiner import LogisticCombiner, feature_matrix
from groundwire.train.combine import ClaimRow, claim_label, file_weights

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


def fit_monotone(rows: Sequence[ClaimRow], *, names: Sequence[str], c: float = 0.05,
                 meta: dict[str, object] | None = None) -> LogisticCombiner:
    """Weighted logistic regression on standardised features with each coefficient's sign fixed by SIGNS
    (L-BFGS-B with bounds) and an L2 penalty of 1/(2c) per unit weight. Labels and file-balanced, class-balanced
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
    class-balanced weights averaging 1."""
    y, use = claim_label(rows)
    x = feature_matrix([r.features for r, ok in zip(rows, use, strict=True) if ok], names)
    yy = y[use]
    w = file_weights(rows, use)[use]
    for label in (0.0, 1.0):  # classes balanced inside the file weights
        mask = yy == label
        w[mask] *= len(yy) / (2 * max(w[mask].sum(), 1e-9)) * (w.sum() / len(yy))
    return x, yy, w / w.mean() if len(w) else w


def _minimise(z: np.ndarray, yy: np.ndarray, w: np.ndarray, *, c: float, signs: Sequence[int], prior: np.ndarray,
              start_intercept: float = 0.0) -> tuple[np.ndarray, float]:
    """Weighted logistic loss + |coef - prior|^2 / (2c), each coefficient bounded to its sign (0: free)."""
    from scipy.optimize import minimize

    n, count = z.shape[1], max(len(yy), 1)

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        coef, intercept = params[:n], params[n]
        logits = z @ coef + intercept
        p = np.exp(-np.logaddexp(0.0, -logits))
        shift = coef - prior
        value = float(np.sum(w * (np.logaddexp(0.0, logits) - yy * logits)) / count + shift @ shift / (2 * c * count))
        residual = w * (p - yy) / count
        grad = np.concatenate([z.T @ residual + shift / (c * count), [residual.sum()]])
        return value, grad

    bounds = [(0.0, None) if sign > 0 else (None, 0.0) if sign < 0 else (None, None) for sign in signs]
    lower = np.array([-np.inf if sign <= 0 else 0.0 for sign in signs])
    upper = np.array([np.inf if sign >= 0 else 0.0 for sign in signs])
    start = np.concatenate([np.clip(prior, lower, upper), [start_intercept]])
    result = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=[*bounds, (None, None)])
    return result.x[:n], float(result.x[n])
