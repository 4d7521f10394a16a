"""A scope's profile refitted from the request log's labels, guarded, and written or refused (`serve --learn`).

`refit_scope` reads the scope's reviewed answers as `groundwire adapt --from-log DB --scope S` reads them
(data.labelled.read_reviewed), checks them with the base model as adapt does (adapt.base_settings, sharing the loaded
model), and hands the claim rows to guard.guarded_refit and guard.settle: adapt's fit on all but a held-back share of
whole source documents, then the guard against the routing in force on that share. The service calls it off the
request path (service/learning.py); it is plain code over a store, a verifier and a folder, so a bench can call it
too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from groundwire.calibration import combine, guard
from groundwire.calibration.adapt import Recipe, Targets, base_settings, labelled_of, log_source, shipped
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.data.labelled import read_reviewed
from groundwire.data.rows import EvalRow
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import calibration_of
from groundwire.scoring.profile import unprofiled

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import Store


@dataclass(frozen=True, slots=True)
class Learned:
    """What a refit of a scope did: the version it put in force (None: refused) and why."""

    scope: str
    version: str | None
    reason: str


def refit_scope(store: Store, *, scope: str, folder: Path, in_force: Verifier, settings: CheckSettings,
                targets: Targets | None = None, recipe: Recipe = "combiner", by: str = "service refit",
                seed: int = 0) -> Learned:
    """Refit `scope`'s profile in `folder` from its logged labels and put it in force if the guard lets it, else
    record the refusal there. `in_force`: the verifier routing the scope now (its profile's, or the service's);
    `settings`: the service's check settings, of which the base model is kept."""
    source = log_source("the request log", scope)
    rows = [row for row in read_reviewed(store, scope=scope) if isinstance(row, EvalRow)]
    base = build_verifier(base_settings(settings), scorer=unprofiled(in_force.scorer))
    calibration = calibration_of(base.scorer)
    try:
        labelled = labelled_of(rows, source)
    except InputError as refused:
        refit = guard.Refit(None, None, f"adapt refused the labels ({refused.code.value}): {refused}",
                            {"human": 0, "judge": 0})
    else:
        claim_rows = combine.collect_rows(labelled, base, file="request_log")
        refit = guard.guarded_refit(claim_rows, shipped(calibration_of(in_force.scorer)), shipped(calibration),
                                    recipe=recipe, targets=targets, base_model=base.scorer.model_id,
                                    calibration=calibration, scope=scope, seed=seed)
    return Learned(scope, guard.settle(folder, refit, by=by), refit.reason)
