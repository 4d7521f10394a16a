"""Calibrate a bundle: claim features on dev files -> the recipe's leave-one-dataset-out report -> the
combiner and routing thresholds written into the bundle's config.json."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypedDict

from groundwire.config import CheckSettings
from groundwire.evaluation.operating import DEFAULT_TARGET_FAR, DEFAULT_TARGET_FRR
from groundwire.pipeline import build_verifier
from groundwire.scoring.combiner import LogisticCombiner
from groundwire.scoring.onnx import OnnxScorer
from groundwire.train import combine, lodo
from groundwire.train.export import write_config
from groundwire.train.families import family
from groundwire.train.lodo import Figures
from groundwire.train.recipe import Fitted, fit_recipe
from groundwire.train.thresholds import Routing, Thresholds

COMBINER_FILE = "combiner.json"
_FEATURE_SETTINGS = CheckSettings(accept_at=0.5, reject_at=0.1)
"""Features are collected with wide, explicit thresholds (explicit: no task thresholds of an older calibration)."""


class CalibrationReport(TypedDict):
    """What `calibrate_bundle` returns (and `groundwire train combiner` prints)."""

    accept_at: float
    reject_at: float
    task_thresholds: dict[str, Thresholds]
    routing: Routing
    lodo: dict[str, Figures]
    in_sample: dict[str, Figures]
    verifier_plain_auroc: dict[str, float | int | None]
    coefficients: dict[str, float]


def features_for(bundle: Path, dev: Sequence[Path], *, limit: int | None, cache: Path | None,
                 seed: int = 0, workers: int = 1, canonical_figures: bool = False) -> list[combine.ClaimRow]:
    """Claim rows for the dev files (from `cache` when it exists). With several workers, files are scored in
    parallel processes of one thread each; the rows are the same as with one."""
    if cache is not None and cache.is_file():
        return combine.load_rows(cache)
    jobs = [(Path(bundle), Path(path), limit, seed, 1 if workers > 1 else 0, canonical_figures) for path in dev]
    if workers > 1:
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


def _collect_file(job: tuple[Path, Path, int | None, int, int, bool]) -> list[combine.ClaimRow]:
    bundle, path, limit, seed, threads, canonical_figures = job
    scorer = OnnxScorer(bundle, threads=threads or None)
    scorer.combiner = None  # features and the plain answer score must not depend on an older combiner
    verifier = build_verifier(_FEATURE_SETTINGS.model_copy(update={"canonical_figures": canonical_figures}), scorer=scorer)
    return combine.collect([path], verifier, limit=limit, seed=seed)


def calibrate_bundle(bundle: Path, dev: Sequence[Path], *, limit: int | None = None, cache: Path | None = None,
                     workers: int = 1, target_far: float = DEFAULT_TARGET_FAR,
                     target_frr: float = DEFAULT_TARGET_FRR) -> CalibrationReport:
    """Fit the shipped recipe (train.recipe, kind "mono") on every dev family but the evaluation-only ones
    (train.families.EVALUATION_ONLY) and write its combiner and
    thresholds into the bundle; return the recipe's leave-one-dataset-out figures beside its in-sample ones,
    and the plain verifier's, on the same rows."""
    rows = features_for(bundle, dev, limit=limit, cache=cache, workers=workers)
    routing: Routing = {"target_far": target_far, "target_frr": target_frr}

    def recipe(train: Sequence[combine.ClaimRow]) -> Fitted:
        return fit_recipe(train, kind="mono", **routing)

    fitted_on = lodo.fittable(rows)
    final = fit_recipe(fitted_on, kind="mono", meta={"features_from": str(bundle), "claims": len(fitted_on),
                                                "files": sorted({r.file for r in fitted_on})}, **routing)
    assert isinstance(final.combiner, LogisticCombiner)  # the mono recipe fits one pooled combiner
    (Path(bundle) / COMBINER_FILE).write_text(final.combiner.to_json() + "\n")
    write_config(Path(bundle), {"combiner": COMBINER_FILE, "accept_at": final.pooled[0], "reject_at": final.pooled[1],
                                "task_thresholds": {key: list(pair) for key, pair in sorted(final.by_key.items())},
                                "routing": {"recipe": "mono", **routing}})
    plain = [lodo.Routed(family(r.file, r.task), r.hallucinated, r.answer_score, 1.0, 0.0, r.claim_index >= 0)
             for r in combine.answers_of(rows).values()]
    return {
        "accept_at": final.pooled[0], "reject_at": final.pooled[1], "task_thresholds": dict(final.by_key),
        "routing": routing,
        "lodo": lodo.lodo(rows, recipe),
        "in_sample": lodo.in_sample(rows, recipe),
        "verifier_plain_auroc": {fam: lodo.figures([a for a in plain if a.family == fam])["auroc"]
                                 for fam in sorted({a.family for a in plain})},
        "coefficients": dict(zip(final.combiner.names, [round(v, 3) for v in final.combiner.coef], strict=True)),
    }


def main_json(result: CalibrationReport, path: Path) -> None:
    path.write_text(json.dumps(result, indent=2) + "\n")
