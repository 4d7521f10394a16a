"""Calibrate a bundle: claim features on dev files -> cross-validated combiner report -> shipped combiner
and default thresholds written into the bundle's config.json."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from groundwire.train import combine
from groundwire.train.export import write_config

COMBINER_FILE = "combiner.json"


def features_for(bundle: Path, dev: Sequence[Path], *, limit: int | None, cache: Path | None,
                 seed: int = 0, workers: int = 1) -> list[combine.ClaimRow]:
    """Claim rows for the dev files (from `cache` when it exists). With several workers, files are scored in
    parallel processes of one thread each; the rows are the same as with one."""
    if cache is not None and cache.is_file():
        return combine.load_rows(cache)
    jobs = [(Path(bundle), Path(path), limit, seed, 1 if workers > 1 else 0) for path in dev]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        # Heaviest files first (long contexts), so one slow file does not run alone at the end.
        order = sorted(range(len(jobs)), key=lambda i: -Path(jobs[i][1]).stat().st_size)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = dict(zip(order, pool.map(_collect_file, [jobs[i] for i in order]), strict=True))
        parts = [done[i] for i in range(len(jobs))]
    else:
        parts = [_collect_file(job) for job in jobs]
    rows = [row for part in parts for row in part]
    if cache is not None:
        combine.save_rows(rows, cache)
    return rows


def _collect_file(job: tuple[Path, Path, int | None, int, int]) -> list[combine.ClaimRow]:
    from groundwire.scoring.onnx import OnnxScorer
    from groundwire.core.verifier import Verifier

    bundle, path, limit, seed, threads = job
    scorer = OnnxScorer(bundle, threads=threads or None)
    scorer.combiner = None  # features and the plain answer score must not depend on an older combiner
    return combine.collect([path], Verifier(scorer, accept_at=0.5, reject_at=0.1), limit=limit, seed=seed)


def calibrate_bundle(bundle: Path, dev: Sequence[Path], *, limit: int | None = None, cache: Path | None = None,
                     folds: int = 5, workers: int = 1) -> dict:
    rows = features_for(bundle, dev, limit=limit, cache=cache, workers=workers)
    cv = combine.cross_validate(rows, folds=folds)
    final = combine.fit_tasks(rows, meta={"features_from": str(bundle), "files": sorted({r.file for r in rows}),
                                          "claims": len(rows)})
    claim_scores = combine.claim_scores(final, rows)
    (accept_at, reject_at), per_task = combine.task_thresholds(rows, claim_scores, combine.eligible_tasks(rows))
    # Baselines on the same rows, each at its own best macro-balanced-accuracy threshold (in-sample: generous).
    model = combine.model_only_scores(rows, 0.0)
    model_t = combine.best_threshold([a.hallucinated for a in model], [a.score for a in model], [a.file for a in model])
    plain = combine.verifier_scores(rows, 0.0)
    plain_t = combine.best_threshold([a.hallucinated for a in plain], [a.score for a in plain], [a.file for a in plain])
    (Path(bundle) / COMBINER_FILE).write_text(final.to_json() + "\n")
    write_config(Path(bundle), {"combiner": COMBINER_FILE, "accept_at": accept_at, "reject_at": reject_at,
                                "task_thresholds": {t: list(pair) for t, pair in per_task.items()},
                                "model_accept_at": round(model_t, 4)})
    return {
        "accept_at": accept_at, "reject_at": reject_at, "model_accept_at": model_t, "verifier_accept_at": plain_t,
        "hybrid_cv": combine.report(cv),
        "model_alone": combine.report(combine.model_only_scores(rows, model_t)),
        "verifier_plain": combine.report(combine.verifier_scores(rows, plain_t)),
        "task_thresholds": per_task,
        "coefficients": {task: dict(zip(c.names, [round(v, 3) for v in c.coef], strict=True))
                         for task, c in {"pooled": final.default, **final.by_task}.items()},
    }


def main_json(result: dict, path: Path) -> None:
    path.write_text(json.dumps(result, indent=2) + "\n")
