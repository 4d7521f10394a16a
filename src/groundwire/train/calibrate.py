"""Calibrate a bundle: claim features on dev files -> cross-validated combiner report -> shipped combiner
and default thresholds written into the bundle's config.json."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from groundwire.train import combine
from groundwire.train.export import write_config

COMBINER_FILE = "combiner.json"


def features_for(bundle: Path, dev: Sequence[Path], *, limit: int | None, cache: Path | None,
                 seed: int = 0) -> list[combine.ClaimRow]:
    if cache is not None and cache.is_file():
        return combine.load_rows(cache)
    from groundwire.scoring.onnx import OnnxScorer
    from groundwire.verifier import Verifier

    scorer = OnnxScorer(bundle)
    scorer.combiner = None  # features and the plain answer score must not depend on an older combiner
    rows = combine.collect(dev, Verifier(scorer, accept_at=0.5, reject_at=0.1), limit=limit, seed=seed)
    if cache is not None:
        combine.save_rows(rows, cache)
    return rows


def reject_threshold(labels: Sequence[bool], scores: Sequence[float], accept_at: float,
                     *, precision: float = 0.9) -> float:
    """The highest score at or below which at least `precision` of answers are hallucinated (the reject band)."""
    order = np.argsort(scores)
    y = np.asarray(labels, dtype=float)[order]
    s = np.asarray(scores)[order]
    best = float(min(s[0], accept_at / 2)) if len(s) else 0.0
    hits = np.cumsum(y) / np.arange(1, len(y) + 1)
    for i in range(len(s)):
        if hits[i] >= precision and i >= 9 and s[i] < accept_at:
            best = float(s[i])
    return round(min(best, accept_at - 0.05), 4)


def calibrate_bundle(bundle: Path, dev: Sequence[Path], *, limit: int | None = None, cache: Path | None = None,
                     folds: int = 5) -> dict:
    rows = features_for(bundle, dev, limit=limit, cache=cache)
    cv = combine.cross_validate(rows, folds=folds)
    final = combine.fit(rows, meta={"features_from": str(bundle), "files": sorted({r.file for r in rows}),
                                    "claims": len(rows)})
    claim_scores = np.ones(len(rows))
    scored = [i for i, r in enumerate(rows) if r.claim_index >= 0]
    claim_scores[scored] = final.predict([rows[i].features for i in scored])
    answers = combine.answer_scores(rows, claim_scores)
    first = {(r.file, r.row_id): r for r in reversed(rows)}
    labels = [first[k].hallucinated for k in answers]
    scores = list(answers.values())
    accept_at = round(combine.best_threshold(labels, scores, [first[k].file for k in answers]), 4)
    reject_at = reject_threshold(labels, scores, accept_at)
    # Baselines on the same rows, each at its own best macro-balanced-accuracy threshold (in-sample: generous).
    model = combine.model_only_scores(rows, 0.0)
    model_t = combine.best_threshold([a.hallucinated for a in model], [a.score for a in model], [a.file for a in model])
    plain = combine.verifier_scores(rows, 0.0)
    plain_t = combine.best_threshold([a.hallucinated for a in plain], [a.score for a in plain], [a.file for a in plain])
    (Path(bundle) / COMBINER_FILE).write_text(final.to_json() + "\n")
    write_config(Path(bundle), {"combiner": COMBINER_FILE, "accept_at": accept_at, "reject_at": reject_at,
                                "model_accept_at": round(model_t, 4)})
    return {
        "accept_at": accept_at, "reject_at": reject_at, "model_accept_at": model_t, "verifier_accept_at": plain_t,
        "hybrid_cv": combine.report(cv),
        "model_alone": combine.report(combine.model_only_scores(rows, model_t)),
        "verifier_plain": combine.report(combine.verifier_scores(rows, plain_t)),
        "coefficients": dict(zip(final.names, [round(c, 3) for c in final.coef], strict=True)),
    }


def main_json(result: dict, path: Path) -> None:
    path.write_text(json.dumps(result, indent=2) + "\n")
