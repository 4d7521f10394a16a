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
    from scipy.optimize import minimize

    unknown = [n for n in names if n not in SIGNS]
    if unknown:
        raise ValueError(f"no sign declared for {unknown}; add them to SIGNS first")
    y, use = claim_label(rows)
    feats = [r.features for r, ok in zip(rows, use, strict=True) if ok]
    x = feature_matrix(feats, names)
    mean, scale = x.mean(0), x.std(0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    yy = y[use]
    w = file_weights(rows, use)[use]
    for label in (0.0, 1.0):  # classes balanced inside the file weights
        mask = yy == label
        w[mask] *= len(yy) / (2 * max(w[mask].sum(), 1e-9)) * (w.sum() / len(yy))
    w = w / w.mean()
    n = len(names)

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        coef, intercept = params[:n], params[n]
        logits = z @ coef + intercept
        p = np.exp(-np.logaddexp(0.0, -logits))
        value = float(np.sum(w * (np.logaddexp(0.0, logits) - yy * logits)) / len(yy) + coef @ coef / (2 * c * len(yy)))
        residual = w * (p - yy) / len(yy)
        grad = np.concatenate([z.T @ residual + coef / (c * len(yy)), [residual.sum()]])
        return value, grad

    bounds = [(0.0, None) if SIGNS[name] > 0 else (None, 0.0) for name in names] + [(None, None)]
    result = minimize(loss, np.zeros(n + 1), jac=True, method="L-BFGS-B", bounds=bounds)
    coef, intercept = result.x[:n], float(result.x[n])
    return LogisticCombiner(names=tuple(names), mean=tuple(mean.tolist()), scale=tuple(scale.tolist()),
                            coef=tuple(float(v) for v in coef), intercept=intercept, meta=meta)
