"""The eval loop's labels section, made by `groundwire adapt`'s own fit: what `adapt --from-log DB --scope S` would
write on a scope's reviewed answers (or the refusal it would give), set beside the thresholds in force.

`groundwire eval-loop --db DB --scope S` and the service's /v1/eval both call `labels_section`. The labels are read
as adapt reads them (`data.labelled.read_labelled`), checked by the verifier adapt builds (`adapt.base_settings`, on
the model in force: no second model is loaded) and fitted by `adapt.adapt`, so the thresholds, the cross-validated
rates and the refusal are exactly the profile.json `adapt` writes (tests/train/test_refit.py checks it). Nothing is
written: the section names the command that writes it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from groundwire.calibration.adapt import Targets, TooFewLabels, adapt, base_settings, log_source
from groundwire.calibration.selection import queue_weights
from groundwire.calibration.thresholds import lookup
from groundwire.core.cancel import Cancelled
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.data.labelled import read_labelled
from groundwire.data.rows import EvalRow, RowError
from groundwire.evaluation.labels import POOLED, LabelsSection, Refit, count_judge_labels, count_labels
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Thresholds
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import calibration_of
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner
from groundwire.scoring.profile import unprofiled

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.data.store import Store

REFUSALS = frozenset({ErrorCode.TOO_FEW_LABELS, ErrorCode.PROFILE_MISSES_TARGET, ErrorCode.NO_ROWS})
"""adapt's refusals of the labels themselves: status "refused". Any other error adapt would stop with (the `train`
extra missing for the combiner's fit, settings adapt cannot check with) is status "not_computed", with its code."""


def labels_section(store: Store, *, scope: str, in_force: Verifier, settings: CheckSettings, db: str,
                   targets: Targets | None = None, scorer: str | None = None) -> LabelsSection:
    """Count the scope's labelled answers and run adapt's fit on them as `groundwire adapt --from-log DB --scope S`
    would (`settings`: the check settings in force, of which adapt keeps the base model; `in_force`: the verifier
    that routes the scope's answers now, whose loaded model adapt's checks share). `db` and `scorer` are named in the
    command the section prints; `db` is the log's name as that command should give it."""
    targets = targets or Targets()
    read = read_labelled(store, scope=scope)  # the reviewers' verdicts, as read_reviewed reads them, and their strata
    rows = read.rows
    command = adapt_command(db, scope, targets=targets, scorer=scorer)

    def not_computed(code: str, message: str) -> Refit:
        return Refit("not_computed", command, _targets(targets), _in_force(rows, in_force),
                     refusal={"code": code, "message": message})

    try:
        base = build_verifier(base_settings(settings), scorer=unprofiled(in_force.scorer))
        refit = refit_of(rows, in_force=in_force, base=base, targets=targets, source=log_source(db, scope),
                         scope=scope, command=command, selection=queue_weights(store, scope=scope, strata=read.strata))
    except InputError as error:  # adapt would stop with it too
        refit = not_computed(error.code.value, str(error))
    except Cancelled as stop:  # the service's time budget (core.cancel): the count stands, the refit is not made
        if stop.reason != "deadline":
            raise
        refit = not_computed(ErrorCode.TIME_BUDGET_EXCEEDED.value,
                             f"the call's time budget ran out before adapt's checks of the {len(rows)} reviewed "
                             "answers were done; run the command to fit them, or `groundwire eval-loop --db DB "
                             "--scope S`")
    counts = replace(count_labels(rows),
                     judge=count_judge_labels([label.faithful for _, label in store.judged(scope=scope)]))
    return LabelsSection(scope, counts, refit)


def refit_of(rows: Sequence[EvalRow | RowError], *, in_force: Verifier, base: Verifier, targets: Targets,
             source: str, scope: str, command: str, selection: Mapping[str, float] | None = None) -> Refit:
    """adapt's profile on these rows (checked by `base`), or its refusal, beside `in_force`'s thresholds.
    `selection`: each row's weight by how likely the review queue was to show it (calibration.selection), as
    `adapt --from-log` weighs them."""
    readable = [row for row in rows if isinstance(row, EvalRow)]
    now = _in_force(readable, in_force)
    document_targets = _targets(targets)
    try:
        adapted = adapt(readable, base, targets=targets, source=source, scope=scope, selection=selection)
    except InputError as refused:
        if refused.code not in REFUSALS:
            raise
        needed = (refused.needed if isinstance(refused, TooFewLabels)
                  else dict(zip(("hallucinated", "faithful"), targets.needed(), strict=True))
                  if refused.code == ErrorCode.NO_ROWS else {})
        return Refit("refused", command, document_targets, now,
                     refusal={"code": refused.code.value, "message": str(refused)}, needed=needed)
    fitted = adapted.fitted
    refit: dict[str, Thresholds] = {key: lookup("" if key == POOLED else key, fitted.pooled, dict(fitted.by_key))
                                    for key in now}
    combiner_changes = bool(adapted.document["calibration"]["combiner"]) and (  # type: ignore[index]
        _as_json(calibration_of(in_force.scorer).combiner) != _as_json(fitted.combiner))
    unchanged = all(_same(now[key], refit[key]) for key in now) and not combiner_changes
    return Refit("unchanged" if unchanged else "would_change", command, document_targets, now, refit,
                 combiner_changes=combiner_changes, profile=adapted.document, needed=adapted.sides.short())


def adapt_command(db: str, scope: str, *, targets: Targets, scorer: str | None = None) -> str:
    """The `groundwire adapt` command line that fits this refit (options at their defaults left out), quoted for a
    POSIX shell."""
    words = ["groundwire", "adapt", "--from-log", db, "--scope", scope, "--out", "PROFILE"]
    default = Targets()
    for flag, value, usual in (("--target-far", targets.far, default.far), ("--target-frr", targets.frr, default.frr),
                               ("--confidence", targets.confidence, default.confidence)):
        if value != usual:
            words += [flag, f"{value:g}"]
    if scorer is not None:
        words += ["--scorer", scorer]
    return shlex.join(words)


def _in_force(rows: Sequence[EvalRow | RowError], verifier: Verifier) -> dict[str, Thresholds]:
    """The pairs `verifier` routes the labelled answers by: the pooled one and each task's the requests named."""
    tasks = sorted({row.task for row in rows if isinstance(row, EvalRow) and row.given_task is not None})
    return {POOLED: verifier.thresholds_for(None), **{task: verifier.thresholds_for(task) for task in tasks}}


def _as_json(combiner: object) -> str | None:
    return combiner.to_json() if isinstance(combiner, LogisticCombiner | TaskCombiner) else None


def _targets(targets: Targets) -> dict[str, float]:
    return {"false_accept": targets.far, "false_reject": targets.frr, "confidence": targets.confidence}


def _same(a: Thresholds, b: Thresholds) -> bool:
    """Equal as reported (4 decimals): a pair that moves by less than that is not a change to act on."""
    return all(round(x, 4) == round(y, 4) for x, y in zip(a, b, strict=True))
