"""A scope's profile refitted from the request log's labels, guarded, and written or refused (`serve --learn`).

`refit_scope` reads the scope's reviewed answers as `groundwire adapt --from-log DB --scope S` reads them
(data.labelled), takes each one's claim features from its logged report (`logged_claim_rows`: no check again) and checks
only those whose report cannot give them (scored by another model, or logged without features) with the base model as
adapt does (adapt.base_settings, sharing the loaded model). Each label is weighted by how likely the review queue was to
show it (calibration.selection), as `adapt --from-log` weighs them. It hands the claim rows to guard.guarded_refit and
guard.settle: adapt's fit on every label, then the guard against the routing in force, out of fold (adapt's folds of
whole source documents). The service calls it off the request path (service/learning.py); it is plain code over a store,
a verifier and a folder, so a bench can call it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from groundwire.calibration import combine, guard
from groundwire.calibration.adapt import (
    DEFAULT_JUDGE_WEIGHT,
    Recipe,
    Targets,
    base_settings,
    check_judge_weight,
    labelled_of,
    log_source,
    shipped,
)
from groundwire.calibration.judge_error import JudgeError, resolve_judge_error
from groundwire.calibration.selection import queue_weights, weighted_by_selection
from groundwire.calibration.versions import current_version
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.data.labelled import SOURCE_PREFIX, LabelUse, label_strata, labels_in_force, reviewed_record
from groundwire.data.rows import EvalRow, parse_record
from groundwire.data.store.records import JudgeLabel
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import calibration_of
from groundwire.scoring.profile import unprofiled

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import Store


LOG_FILE = "request_log"
"""The `file` of the claim rows read from the log (ClaimRow.file; answers are keyed by (file, request id))."""


class LoggedLabels(NamedTuple):
    """A scope's labelled answers as a refit reads them (`logged_claim_rows`)."""

    rows: list[combine.ClaimRow]
    """Claim rows from the features logged with the reports, each weighted (kind, then queue selection)."""
    unchecked: list[EvalRow]
    """Labelled rows whose report cannot give them: to be checked, then weighted by `weigh`."""
    judged: frozenset[str]
    """The ids of the judge's labels."""
    selection: dict[str, float]
    """Each labelled request's selection weight (calibration.selection), by request id."""
    routed_by: dict[str, str | None]
    """The profile version that routed each labelled request (its report's meta.profile_version), by request id."""

    def weigh(self, rows: Sequence[combine.ClaimRow], *, judge_weight: float,
              judge_error: float) -> list[combine.ClaimRow]:
        """Rows checked from `unchecked`, weighted as `rows` were."""
        return weighted_by_selection(combine.weighted_by_kind(rows, self.judged, judge_weight=judge_weight,
                                                              judge_error=judge_error), self.selection)


def logged_claim_rows(store: Store, *, scope: str, model_id: str, use: LabelUse = "human",
                      judge_weight: float = DEFAULT_JUDGE_WEIGHT, judge_error: float = 0.0) -> LoggedLabels:
    """The scope's labelled answers (`use`: the reviewers' verdicts in force, the judge's labels, or both, as
    `data.labelled.labels_in_force` gives them): claim rows from the features logged with the reports `model_id`
    scored (a judge's labels marked so, at `judge_weight` and `judge_error`), the labelled rows whose report cannot
    give them, to be checked, and the ids of the judge's among those. Every label is weighted by how likely the review
    queue was to show it (calibration.selection: the share of its (week, route) stratum of the scope's log that was
    labelled). Rows that do not parse are left out, as adapt leaves them."""
    rows: list[combine.ClaimRow] = []
    unchecked: list[EvalRow] = []
    judged: set[str] = set()
    routed_by: dict[str, str | None] = {}
    labels = labels_in_force(store, scope=scope, use=use)
    selection = queue_weights(store, scope=scope, strata=label_strata(record for record, _ in labels))
    for record, label in labels:
        row = parse_record(reviewed_record(record, label), source=SOURCE_PREFIX + scope)
        if not isinstance(row, EvalRow) or row.hallucinated is None:
            continue
        if isinstance(label, JudgeLabel):
            judged.add(row.id)
        meta = (record.report or {}).get("meta")
        routed_by[row.id] = meta.get("profile_version") if isinstance(meta, dict) else None
        logged = combine.claim_rows_of_logged(row, record.report or {}, file=LOG_FILE, model_id=model_id)
        if logged is None:
            unchecked.append(row)
        else:
            rows.extend(logged)
    found = LoggedLabels([], unchecked, frozenset(judged), selection, routed_by)
    return found._replace(rows=found.weigh(rows, judge_weight=judge_weight, judge_error=judge_error))


@dataclass(frozen=True, slots=True)
class Learned:
    """What a refit of a scope did: the version it put in force (None: refused) and why."""

    scope: str
    version: str | None
    reason: str


def refit_scope(store: Store, *, scope: str, folder: Path, in_force: Verifier, settings: CheckSettings,
                targets: Targets | None = None, recipe: Recipe = "combiner", by: str = "service refit",
                use: LabelUse = "human", judge_weight: float = DEFAULT_JUDGE_WEIGHT,
                judge_error: JudgeError = 0.0) -> Learned:
    """Refit `scope`'s profile in `folder` from its logged labels and put it in force if the guard lets it, else
    record the refusal there. `in_force`: the verifier routing the scope now (its profile's, or the service's);
    `settings`: the service's check settings, of which the base model is kept; `use`: which labels (human, judge,
    both), a judge's counting as `judge_weight` of a person's, its error rate `judge_error` corrected for: stated, or
    "auto", measured now on the scope's answers a reviewer also labelled (calibration.judge_error; recorded with
    the profile and in its history)."""
    source = log_source("the request log", scope)
    base = build_verifier(base_settings(settings), scorer=unprofiled(in_force.scorer))
    calibration = calibration_of(base.scorer)
    check_judge_weight(judge_weight)
    resolved = resolve_judge_error(judge_error, store, scope=scope)
    error_from = resolved.record if use != "human" else None
    found = logged_claim_rows(store, scope=scope, model_id=base.scorer.model_id, use=use,
                              judge_weight=judge_weight, judge_error=resolved.rate)
    try:
        if not found.rows:
            labelled_of(found.unchecked, source)  # adapt's refusal of a log with no labels
    except InputError as refused:
        refit = guard.Refit(None, None, f"adapt refused the labels ({refused.code.value}): {refused}",
                            {"human": 0, "judge": 0, "judge_error_from": error_from})
    else:
        checked = found.weigh(combine.collect_rows(found.unchecked, base, file=LOG_FILE), judge_weight=judge_weight,
                              judge_error=resolved.rate)
        # The answers the version in force routed are the ones it was not fitted on (calibration.guard).
        version = current_version(folder)
        fresh = None if version is None else {(LOG_FILE, rid) for rid, by in found.routed_by.items() if by == version}
        refit = guard.guarded_refit(found.rows + checked, shipped(calibration_of(in_force.scorer)), shipped(calibration),
                                    recipe=recipe, targets=targets, base_model=base.scorer.model_id,
                                    calibration=calibration, scope=scope, use=use,
                                    judge_error_from=resolved.record, fresh=fresh)
    return Learned(scope, guard.settle(folder, refit, by=by), refit.reason)
