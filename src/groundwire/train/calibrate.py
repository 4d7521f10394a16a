"""Calibrate a bundle: claim features on dev files -> the recipe's leave-one-dataset-out report -> the
combiner and routing thresholds written into the bundle's config.json."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Literal, TypedDict

from groundwire.calibration import combine, lodo
from groundwire.calibration.families import family
from groundwire.calibration.lodo import Figures
from groundwire.calibration.recipe import Fitted, fit_recipe
from groundwire.calibration.thresholds import Routing, Thresholds
from groundwire.config import CheckSettings
from groundwire.evaluation.operating import DEFAULT_TARGET_FAR, DEFAULT_TARGET_FRR
from groundwire.pipeline import build_verifier
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner
from groundwire.scoring.onnx import OnnxScorer, model_id_of
from groundwire.train.cascade import cascade_lodo, cascade_route, fit_stages, same_answers
from groundwire.train.export import write_config

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
                 seed: int = 0, workers: int = 1, canonical_figures: bool = True,
                 meaning: bool = False) -> list[combine.ClaimRow]:
    """Claim rows for the dev files (from `cache` when it exists). With several workers, files are scored in
    parallel processes of one thread each; the rows are the same as with one.

    With a cache, each file's rows are also kept as they finish (`part_path`), so a run that is stopped (a larger
    model's features take hours on a CPU) resumes at the first file not yet done."""
    if cache is not None and cache.is_file():
        return combine.load_rows(cache)
    jobs = [(Path(bundle), Path(path), limit, seed, 1 if workers > 1 else 0, canonical_figures, meaning)
            for path in dev]
    done: dict[int, list[combine.ClaimRow]] = {}
    if cache is not None:
        done = {i: combine.load_rows(part_path(cache, path)) for i, path in enumerate(dev)
                if part_path(cache, path).is_file()}
    # Heaviest files first (long contexts), so one slow file does not run alone at the end.
    todo = sorted((i for i in range(len(jobs)) if i not in done), key=lambda i: -Path(jobs[i][1]).stat().st_size)

    def keep(i: int, rows: list[combine.ClaimRow]) -> None:
        done[i] = rows
        if cache is not None:
            combine.save_rows(rows, part_path(cache, dev[i]))

    if workers > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_collect_file, jobs[i]): i for i in todo}
            for future in as_completed(futures):
                keep(futures[future], future.result())
    else:
        for i in todo:
            keep(i, _collect_file(jobs[i]))
    rows = [row for i in range(len(jobs)) for row in done[i]]
    if cache is not None:
        combine.save_rows(rows, cache)
        for path in dev:
            part_path(cache, path).unlink(missing_ok=True)
    return rows


def part_path(cache: Path, dev_file: Path) -> Path:
    """Where one dev file's rows wait until every file of a cached feature run is done."""
    return cache.with_name(f"{cache.name}.part-{Path(dev_file).stem}")


def _collect_file(job: tuple[Path, Path, int | None, int, int, bool, bool]) -> list[combine.ClaimRow]:
    bundle, path, limit, seed, threads, canonical_figures, meaning = job
    scorer = OnnxScorer(bundle, threads=threads or None)
    scorer.combiner = None  # features and the plain answer score must not depend on an older combiner
    settings = _FEATURE_SETTINGS.model_copy(update={"canonical_figures": canonical_figures, "meaning": meaning})
    verifier = build_verifier(settings, scorer=scorer)
    return combine.collect([path], verifier, limit=limit, seed=seed)


def calibrate_bundle(bundle: Path, dev: Sequence[Path], *, limit: int | None = None, cache: Path | None = None,
                     workers: int = 1, target_far: float = DEFAULT_TARGET_FAR,
                     target_frr: float = DEFAULT_TARGET_FRR, after: Path | None = None,
                     after_cache: Path | None = None, canonical_figures: bool = True,
                     recipe: Literal["mono", "meaning"] = "mono") -> CalibrationReport:
    """Fit the shipped recipe (calibration.recipe: `recipe` "mono", or "meaning" with the meaning layer's features and
    paraphrase gate, core.meaning) on every dev family but the evaluation-only ones
    (calibration.families.EVALUATION_ONLY) and write its combiner and
    thresholds into the bundle; return the recipe's leave-one-dataset-out figures beside its in-sample ones,
    and the plain verifier's, on the same rows.

    With `after` (the first stage's bundle), `bundle` is calibrated as the second stage of a cascade
    (`[verify] cascade`): fitted only on the answers the first stage escalates, at the false-accept and
    false-reject budget it leaves unspent (train.cascade.fit_stages). The figures are then the cascade's."""
    meaning = recipe == "meaning"
    rows = features_for(bundle, dev, limit=limit, cache=cache, workers=workers, canonical_figures=canonical_figures,
                        meaning=meaning)
    routing: Routing = {"target_far": target_far, "target_frr": target_frr}
    meta: dict[str, object] = {"features_from": str(bundle), "claims": len(lodo.fittable(rows)),
                               "files": sorted({r.file for r in lodo.fittable(rows)})}

    # The reject guard is a declared rule of the bundle (config.json `reject_needs_finding`), kept as it is by a refit:
    # the LODO figures route by it as verify() will.
    guard = frozenset(json.loads((Path(bundle) / "config.json").read_text()).get("reject_needs_finding", ()))

    def stage(train: Sequence[combine.ClaimRow], targets: Routing) -> Fitted:
        return replace(fit_recipe(train, kind=recipe, meta=meta, **targets), reject_needs_finding=guard)

    if after is None:
        final = stage(lodo.fittable(rows), routing)
        report_lodo = lodo.lodo(rows, lambda train: stage(train, routing))
        report_in_sample = lodo.in_sample(rows, lambda train: stage(train, routing))
        shipped_routing: dict[str, object] = {"recipe": recipe, **routing}
    else:
        first_rows = features_for(after, dev, limit=limit, cache=after_cache, workers=workers, meaning=meaning)
        same_answers(first_rows, rows)
        report_lodo = {fam: figs.cascade for fam, figs in cascade_lodo(first_rows, rows, stage, routing).items()}
        # Stage 2 ships behind the first stage as it ships: its own combiner and thresholds route (the LODO
        # figures above refit stage 1 without each held-out family instead).
        shipped = OnnxScorer(after).calibration
        shipped_first = None
        if isinstance(shipped.combiner, LogisticCombiner | TaskCombiner) and shipped.thresholds is not None:
            shipped_first = Fitted(shipped.combiner, shipped.thresholds, dict(shipped.task_thresholds))
        stage1, final, targets = fit_stages(lodo.fittable(first_rows), lodo.fittable(rows), stage, routing,
                                            first=shipped_first)
        _, in_sample = cascade_route(stage1, final, first_rows, rows)
        report_in_sample = lodo.per_family(in_sample)
        shipped_routing = {"recipe": recipe, **routing, "stage": 2, "stage_targets": targets}
    assert isinstance(final.combiner, LogisticCombiner)  # the mono recipe fits one pooled combiner
    block = {"accept_at": final.pooled[0], "reject_at": final.pooled[1],
             "task_thresholds": {key: list(pair) for key, pair in sorted(final.by_key.items())},
             "routing": shipped_routing, "canonical_figures": canonical_figures, "meaning": meaning}
    if after is None:
        (Path(bundle) / COMBINER_FILE).write_text(final.combiner.to_json() + "\n")
        write_config(Path(bundle), {"combiner": COMBINER_FILE, **block})
    else:
        # Beside the stand-alone calibration, which the bundle keeps for use on its own.
        first_id = model_id_of(after)
        combiner_file = f"combiner-after-{re.sub(r'[^A-Za-z0-9._-]+', '_', first_id)}.json"
        (Path(bundle) / combiner_file).write_text(final.combiner.to_json() + "\n")
        stages = json.loads((Path(bundle) / "config.json").read_text()).get("stage_two", {})
        write_config(Path(bundle), {"stage_two": {**stages, first_id: {"combiner": combiner_file, **block}}})
    plain = [lodo.Routed(family(r.file, r.task), r.hallucinated, r.answer_score, 1.0, 0.0, r.claim_index >= 0)
             for r in combine.answers_of(rows).values()]
    return {
        "accept_at": final.pooled[0], "reject_at": final.pooled[1], "task_thresholds": dict(final.by_key),
        "routing": routing,
        "lodo": report_lodo,
        "in_sample": report_in_sample,
        "verifier_plain_auroc": {fam: lodo.figures([a for a in plain if a.family == fam])["auroc"]
                                 for fam in sorted({a.family for a in plain})},
        "coefficients": dict(zip(final.combiner.names, [round(v, 3) for v in final.combiner.coef], strict=True)),
    }

