"""`groundwire adapt --fine-tune`: a domain profile whose model is fine-tuned on the labels too.

The model is tuned on the labels' (window, claim) pairs (train.finetune) in each of TUNE_FOLDS folds, the held-out
fold checked with the model tuned without it; the recipe of calibration.adapt is fitted and cross-validated on those
out-of-fold claim rows (same folds), and the model the profile keeps is tuned on all the labels. Here rather than in
calibration.adapt because it trains a model (torch, the [train] extra): the service fits profiles without it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from groundwire.calibration import combine
from groundwire.calibration.adapt import (
    PRIOR_C,
    Adapted,
    Recipe,
    Targets,
    adapt_rows,
    group_folds,
    labelled_of,
    rate,
    require_enough,
    require_within_target,
    shipped,
)
from groundwire.calibration.recipe import Fitted
from groundwire.core.verifier import Verifier
from groundwire.data.rows import EvalRow
from groundwire.foundation.extras import require_extra
from groundwire.scoring.base import Calibration, calibration_of
from groundwire.scoring.profile import MODEL_DIR, TUNED_FORMAT
from groundwire.train import finetune
from groundwire.train.finetune import TuneSettings

TUNE_FOLDS = 3
"""Folds of a fine-tuned profile's cross-validation: each fold costs a fine-tune, and 3 + the final one keep `adapt
--fine-tune` on 200 answers within 10 minutes on 2 cores (bench/adapt_curve.py --time-adapt --fine-tune)."""


def adapt_fine_tuned(rows: Sequence[EvalRow], verifier: Verifier, *, tune: TuneSettings, recipe: Recipe = "combiner",
                     targets: Targets | None = None, c: float = PRIOR_C, folds: int = TUNE_FOLDS,
                     source: str = "labels", scope: str | None = None) -> Adapted:
    """calibration.adapt.adapt with the model fine-tuned too (`folds` folds), with these settings."""
    labelled = labelled_of(rows, source)
    require_extra("train", *finetune.NEEDS, needed_by="groundwire adapt --fine-tune")
    finetune.base_bundle(verifier.scorer)  # refuse a scorer that cannot be tuned before checking anything
    calibration = calibration_of(verifier.scorer)
    checked = finetune.check_labelled(labelled, verifier, file=Path(source).stem)
    return adapt_tuned(checked, verifier, shipped(calibration), recipe=recipe, targets=targets or Targets(), c=c,
                       folds=folds, calibration=calibration, scope=scope, tune=tune, skipped=len(rows) - len(labelled))


def adapt_tuned(checked: Sequence[finetune.Checked], verifier: Verifier, base: Fitted, *, recipe: Recipe,
                targets: Targets, c: float, folds: int, calibration: Calibration, tune: TuneSettings,
                scope: str | None = None, skipped: int = 0, auroc_rounds: int = 500) -> Adapted:
    """`adapt` with a fine-tune, on answers checked already by the base `verifier`: the recipe is fitted and
    cross-validated on out-of-fold claim rows (each fold checked by the model tuned on the other folds), the
    profile's model tuned on all the pairs. Its Adapted holds the model in a temporary directory that
    `write_profile` moves into the profile (`discard` removes it)."""
    started = time.monotonic()
    bundle = finetune.base_bundle(verifier.scorer)
    base_model = verifier.scorer.model_id
    claim_rows = [r for answer in checked for r in answer.claim_rows]
    require_enough(claim_rows, targets, both=True)  # the tune changes the claim scores: no side can be kept
    # Hallucinated answers without a checkable claim are accepted whatever the model and thresholds: where they
    # alone put the false-accept rate above the target by more than its interval, refuse before tuning anything.
    answers = combine.answers_of(claim_rows).values()
    unroutable = sum(r.hallucinated and r.claim_index < 0 for r in answers)
    require_within_target(rate(unroutable, sum(r.hallucinated for r in answers)), targets, unroutable=unroutable,
                          fitted=False)
    pairs = finetune.claim_pairs(checked, verifier)
    # The recipe's cross-validation (adapt_rows) makes the same folds from the same claim rows' groups.
    held = group_folds([r.group for r in claim_rows], folds)
    work = Path(tempfile.mkdtemp(prefix="groundwire-adapt-"))
    try:
        start = finetune.start_checkpoint(bundle, work)
        out_of_fold: dict[int, list[combine.ClaimRow]] = {}
        for k, test in enumerate(held):
            keys = {(r.file, r.row_id) for r, held_out in zip(claim_rows, test, strict=True) if held_out}
            tuned = finetune.fine_tune([p for p in pairs if p.answer not in keys], start=start,
                                       base_bundle=bundle, base_model=base_model, out=work / f"fold-{k}",
                                       settings=tune)
            fold_verifier = finetune.tuned_verifier(verifier, tuned.bundle)
            for i, answer in enumerate(checked):
                if (answer.claim_rows[0].file, answer.row.id) in keys:
                    out_of_fold[i] = finetune.recheck(answer, fold_verifier)
            shutil.rmtree(tuned.bundle)
        rows = [r for i in range(len(checked)) for r in out_of_fold[i]]
        adapted = adapt_rows(rows, base, recipe=recipe, targets=targets, c=c, folds=folds, base_model=base_model,
                             calibration=calibration, scope=scope, skipped=skipped, auroc_rounds=auroc_rounds,
                             shipped_rows=claim_rows)
        final = finetune.fine_tune(pairs, start=start, base_bundle=bundle, base_model=base_model,
                                   out=work / MODEL_DIR, settings=tune)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(start, ignore_errors=True)
    document = dict(adapted.document)
    document["format"] = TUNED_FORMAT
    document["recipe"] = f"{document['recipe']}+fine-tune"
    document["model"] = {
        "dir": MODEL_DIR, "model_id": final.model_id, "tuned_from": base_model,
        "pairs": final.pairs, "pairs_available": finetune.pair_counts(pairs),
        "claim_labels": finetune.CLAIM_RULE, "settings": asdict(tune), "steps": final.steps,
        "tuned_in_folds": folds, "minutes": round((time.monotonic() - started) / 60, 2),
    }
    validation = dict(document["validation"])  # type: ignore[call-overload]
    validation["profile_model"] = "each fold checked by the model fine-tuned on the other folds"
    document["validation"] = validation
    return Adapted(adapted.fitted, adapted.decide_at, document, model=final.bundle, sides=adapted.sides,
                   cross_validated=adapted.cross_validated)
