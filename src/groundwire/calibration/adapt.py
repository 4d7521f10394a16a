"""Domain adaptation (`groundwire adapt`): a deployment's labelled answers -> a profile (scoring.profile).

From the answers' claim features (`combine.collect_rows`, one check each), fit what the labels support:
- "thresholds": the routing thresholds from target error rates (`thresholds.fit_key_thresholds`, the code
  `eval --target-far/--target-frr` and the shipped calibration use), pooled and per task with enough labels;
- "combiner": first the shipped combiner refitted with its coefficients as the prior and their signs kept
  (`monotone.fit_toward`), then the thresholds on the scores it gives;
- with a fine-tune (`adapt --fine-tune`, train.adapt_tuned), the model itself, and the recipe above on the claim
  rows it gives.
Every figure the profile records is cross-validated within the labels, folds grouped by source document, so no
profile is reported on the rows it was fitted on. When the labels of one class only are enough (a skewed domain),
the fit is one-sided (calibration.sides): the threshold that class certifies is fitted on the base model's claim
scores, the other stays the base's. `adapt` refuses (an InputError) when neither class has labels enough to meet
its target with confidence, and when the cross-validated false-accept rate exceeds the target by more than its
interval.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from groundwire.calibration import combine, lodo, versions
from groundwire.calibration.clusters import class_sources
from groundwire.calibration.monotone import fit_toward
from groundwire.calibration.recipe import Fitted, answer_points
from groundwire.calibration.selection import weighted_by_selection
from groundwire.calibration.sides import BOTH, Sides, class_weights, fit_one_side
from groundwire.calibration.thresholds import fit_key_thresholds
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import DEFAULT_ACCEPT_AT, DEFAULT_REJECT_AT, Verifier
from groundwire.data.labelled import LabelUse
from groundwire.data.rows import EvalRow
from groundwire.evaluation.metrics import auroc_interval, detection_metrics, wilson_interval
from groundwire.evaluation.operating import DEFAULT_TARGET_FAR, DEFAULT_TARGET_FRR, answers_needed
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Route
from groundwire.scoring.base import Calibration, calibration_of
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner
from groundwire.scoring.profile import COMBINER_FILE, MODEL_DIR, PROFILE_FILE, PROFILE_FORMAT
from groundwire.version import __version__

Recipe = Literal["thresholds", "combiner"]
RECIPES: tuple[Recipe, ...] = ("thresholds", "combiner")
PRIOR_C = 0.05
"""How far the refitted combiner may move from the shipped one: the L2 pull toward its coefficients is 1/(2c) per
unit, summed over the labelled claims' losses (the shipped recipe's own strength, calibration.recipe.MONO_C, so the
prior counts as much as it did when it was fitted). Chosen on the dev learning curves (bench/adapt_curve.py)."""
DEFAULT_CONFIDENCE = 0.9
"""The thresholds meet the targets with this confidence on answers like the labelled ones (operating.allowed_errors)."""
MIN_KEY_CLASS_ANSWERS = 40
"""A task gets thresholds of its own with at least this many labelled answers of each class (with a checkable
claim); otherwise it routes by the pooled pair."""
FOLDS = 5
DEFAULT_JUDGE_WEIGHT = 1.0
"""How much an LLM judge's label counts against a person's in a fit (`--judge-weight`): in the combiner's loss, in
the thresholds' rates and in the count of labels their confidence rests on (0.3: ten judge labels weigh as three
reviewers' verdicts). Kept apart from people's labels whatever the weight (counts, the guard's human labels). 1 by
measure (results/learning_loop.md): a judge wrong 10% of the time labelling every reviewed answer cost +0.59 of
week-6 escalation against human labels on HaluEval dev at weight 0.3 and +0.38 at 1 (+0.16 told its error rate,
`--judge-error`), false accept at most 0.06 in each: a lower weight made the fit no safer, only slower (its
confidence rests on fewer labels)."""

IDENTITY = LogisticCombiner(names=("logit:support",), mean=(0.0,), scale=(1.0,), coef=(1.0,), intercept=0.0,
                            meta={"identity": True})
"""The claim score of a scorer without a combiner (its support), as a combiner, so that one replay serves both."""


@dataclass(frozen=True, slots=True)
class Targets:
    far: float = DEFAULT_TARGET_FAR
    frr: float = DEFAULT_TARGET_FRR
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self) -> None:
        if not (0.0 < self.far < 1.0 and 0.0 < self.frr < 1.0):
            raise InputError(f"target rates must be strictly between 0 and 1, got false accept {self.far:g} and "
                             f"false reject {self.frr:g}", code=ErrorCode.INVALID_OPTION)
        if not 0.5 <= self.confidence < 1.0:
            raise InputError(f"--confidence must be in [0.5, 1), got {self.confidence:g}",
                             code=ErrorCode.INVALID_OPTION)

    def needed(self) -> tuple[int, int]:
        """Labelled (hallucinated, faithful) answers with a checkable claim the thresholds need at the least."""
        return answers_needed(self.far, self.confidence), answers_needed(self.frr, self.confidence)


def base_settings(settings: CheckSettings) -> CheckSettings:
    """The settings `adapt` checks the labels with: the base model as `settings` name it, without a profile, fixed
    thresholds, a judge or a cascade (the profile replaces those)."""
    return settings.model_copy(update={"profile": None, "accept_at": None, "reject_at": None, "route": "three-way",
                                       "decide_at": None, "judge": False, "cascade": None})


def log_source(db: str, scope: str) -> str:
    """What `adapt --from-log DB --scope S` names its labels' source in its messages (profile.json keeps no path nor
    database URL: `labels_from`)."""
    return f"{db} (scope {scope})"


def shipped(calibration: Calibration) -> Fitted:
    """The base scorer's own calibration, as a recipe replays it (no combiner: the claim score is the support)."""
    combiner = calibration.combiner
    if combiner is not None and not isinstance(combiner, LogisticCombiner | TaskCombiner):
        raise InputError(f"the scorer's combiner ({type(combiner).__name__}) cannot be refitted: adapt knows the "
                         "logistic combiners of groundwire.scoring.combiner", code=ErrorCode.INVALID_SETTINGS)
    pooled = calibration.thresholds or (DEFAULT_ACCEPT_AT, DEFAULT_REJECT_AT)
    return Fitted(combiner or IDENTITY, pooled, dict(calibration.task_thresholds),
                  reject_needs_finding=calibration.reject_needs_finding)


def check_judge_weight(weight: float) -> float:
    """A judge weight in (0, 1]: a judge's label counts at most as much as a person's."""
    if not 0.0 < weight <= 1.0:
        raise InputError(f"--judge-weight must be in (0, 1] (how much a judge's label counts against a person's), "
                         f"got {weight:g}", code=ErrorCode.INVALID_OPTION)
    return weight


def check_judge_error(error: float) -> float:
    """A judge's stated error rate in [0, 0.5): the share of its labels that are wrong (above a half, its labels
    would say more by their opposite)."""
    if not 0.0 <= error < 0.5:
        raise InputError(f"--judge-error must be in [0, 0.5) (the share of the judge's labels that are wrong), "
                         f"got {error:g}", code=ErrorCode.INVALID_OPTION)
    return error


def labels_from(scope: str | None, *, answers: int, skipped: int, kinds: Mapping[str, int] | None = None,
                use: LabelUse = "human", judge_weight: float | None = None, judge_error: float | None = None,
                judge_error_from: str | dict[str, object] = "stated") -> dict[str, object]:
    """profile.json's record of where its labels came from: a labelled file or a scope of the request log, never the
    file's path nor the log's URL (a profile is shared and shipped; a URL may hold a password); which labels it was
    fitted on (`labels`: human, judge or both), how many of each kind (`label_kinds`), and the weight a judge's
    label had and the error rate its fit corrected for (None when none was used), and how that rate was obtained
    (`judge_error_from`: "stated", or what `--judge-error auto` measured it on: calibration.judge_error)."""
    return {"kind": "file" if scope is None else "request_log", "scope": scope, "answers": answers,
            "unlabelled_skipped": skipped, "labels": use,
            "label_kinds": dict(kinds) if kinds is not None else {"human": answers, "judge": 0},
            "judge_weight": judge_weight if use != "human" else None,
            "judge_error": judge_error if use != "human" else None,
            "judge_error_from": judge_error_from if use != "human" else None}


def refits_combiner(base: Fitted, recipe: Recipe) -> bool:
    return recipe == "combiner" and base.combiner is not IDENTITY


def fit_profile(rows: Sequence[combine.ClaimRow], base: Fitted, *, recipe: Recipe, targets: Targets,
                c: float = PRIOR_C, min_key_answers: int = MIN_KEY_CLASS_ANSWERS, sides: Sides = BOTH) -> Fitted:
    """The recipe fitted on these claim rows (one domain: no per-family thresholds). With one of `sides` only
    (`require_enough`'s decision), that threshold alone, on the base's claim scores whatever the recipe: the one
    kept must go on meaning what the base was certified for (calibration.sides.fit_one_side)."""
    if not sides.both:
        return fit_one_side(rows, base, sides, target_far=targets.far, target_frr=targets.frr,
                            confidence=targets.confidence)
    combiner = base.combiner
    if refits_combiner(base, recipe):
        assert combiner is not None
        prior = combiner.default if isinstance(combiner, TaskCombiner) else combiner
        combiner = fit_toward(rows, prior, c=c, meta={"adapted_on": len(combine.answers_of(rows))})
    assert combiner is not None
    pooled, own = fit_key_thresholds(answer_points(rows, combine.claim_scores(combiner, rows)),
                                     target_far=targets.far, target_frr=targets.frr, confidence=targets.confidence,
                                     min_class_answers=min_key_answers, per_family=False, min_families=1)
    return Fitted(combiner, pooled, own, reject_needs_finding=base.reject_needs_finding)  # the guard is the base's


def group_folds(groups: Sequence[str], folds: int, *, seed: int = 0) -> list[np.ndarray]:
    """Test-row masks of `folds` folds that never split a group (a source document): groups shuffled by `seed`,
    each put in the fold with the fewest rows so far."""
    names = sorted(set(groups))
    rng = np.random.default_rng(seed)
    rng.shuffle(names)
    sizes = Counter(groups)
    fold_of: dict[str, int] = {}
    load = [0] * folds
    for name in sorted(names, key=lambda g: -sizes[g]):  # stable: biggest first, shuffled order among equals
        fold = int(np.argmin(load))
        fold_of[name] = fold
        load[fold] += sizes[name]
    at = np.array([fold_of[g] for g in groups])
    return [at == f for f in range(folds) if (at == f).any()]


def cross_validate(rows: Sequence[combine.ClaimRow], base: Fitted, *, recipe: Recipe, targets: Targets,
                   c: float = PRIOR_C, folds: int = FOLDS, seed: int = 0,
                   sides: Sides = BOTH) -> dict[tuple[str, str], lodo.Routed]:
    """Each answer (by its (file, row id)) routed by the recipe fitted on the other folds (grouped by source
    document), each fold fitting the `sides` decided on all the rows (not on its own, fewer, labels)."""
    out: dict[tuple[str, str], lodo.Routed] = {}
    for test in group_folds([r.group for r in rows], folds, seed=seed):
        train = [r for r, held in zip(rows, test, strict=True) if not held]
        try:
            fitted = fit_profile(train, base, recipe=recipe, targets=targets, c=c, sides=sides)
        except ValueError as error:  # the other folds hold one class only: a document holds most of the other
            raise InputError(f"cannot cross-validate these labels: {error} outside one fold of whole source "
                             "documents; label answers on more documents", code=ErrorCode.TOO_FEW_LABELS) from None
        out.update(lodo.route_by_key(fitted, [r for r, held in zip(rows, test, strict=True) if held]))
    return out


def rate(hits: float, n: float) -> dict[str, float | int | None]:
    """A rate with its 95% Wilson interval (`hits` and `n` weighted counts where labels are weighted)."""
    interval = wilson_interval(hits, n)
    return {"value": hits / n if n else None, "low": interval[0] if interval else None,
            "high": interval[1] if interval else None, "hits": hits, "n": n}


def rates(routed: Sequence[lodo.Routed], *, rounds: int = 500,
          weights: Sequence[float] | None = None) -> dict[str, dict[str, float | int | None]]:
    """AUROC (95% bootstrap interval over `rounds` resamples; none with 0) and the false-accept, false-reject and
    escalation rates (95% Wilson). With `weights` (a judge's label weighing less: ClaimRow.weight), each answer
    counts as its weight in the three rates (the counts are weighted, as the thresholds' are); the AUROC counts
    each once."""
    y = np.array([a.hallucinated for a in routed], dtype=bool)
    s = np.array([a.score for a in routed], dtype=float)
    accepted = np.array([a.route is Route.ACCEPT for a in routed], dtype=bool)
    rejected = np.array([a.route is Route.REJECT for a in routed], dtype=bool)
    auroc = detection_metrics(y.tolist(), s.tolist(), [False] * len(y)).auroc
    interval = auroc_interval(y.tolist(), s.tolist(), rounds=rounds) if rounds else None
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)

    def count(mask: np.ndarray) -> float | int:
        return int(mask.sum()) if weights is None else round(float(w[mask].sum()), 4)

    escalated = ~accepted & ~rejected
    return {
        "auroc": {"value": auroc, "low": interval[0] if interval else None, "high": interval[1] if interval else None,
                  "n": len(y)},
        "false_accept": rate(count(accepted & y), count(y)),
        "false_reject": rate(count(rejected & ~y), count(~y)),
        "escalated": rate(count(escalated), count(np.ones(len(y), dtype=bool))),
    }


def label_counts(rows: Sequence[combine.ClaimRow]) -> dict[str, dict[str, int]]:
    """Labelled answers per task and class, and how many have no checkable claim (always accepted: they count in
    the rates, no threshold can route them), with "all" over tasks."""
    counts: dict[str, Counter[str]] = {}
    for r in combine.answers_of(rows).values():
        for task in (r.task, "all"):
            tally = counts.setdefault(task, Counter())
            tally["hallucinated" if r.hallucinated else "faithful"] += 1
            tally["no_claims"] += r.claim_index < 0
    return {task: {k: tally[k] for k in ("hallucinated", "faithful", "no_claims")}
            for task, tally in sorted(counts.items(), key=lambda item: (item[0] == "all", item[0]))}


class TooFewLabels(InputError):
    """`too_few_labels` from `require_enough`, with how many more labelled answers of each class it needs (what the
    eval loop's labels section reports beside the message)."""

    def __init__(self, message: str, *, needed: dict[str, int]) -> None:
        super().__init__(message, code=ErrorCode.TOO_FEW_LABELS)
        self.needed = needed


def require_enough(rows: Sequence[combine.ClaimRow], targets: Targets, *, both: bool = False,
                   per_document: bool = True) -> Sides:
    """Which thresholds these labels can fit (calibration.sides): each needs `targets.needed()` labels of the class
    that certifies it. Refuse labels too few for either (with `both`, for both: a fit that changes the claim scores
    cannot keep the base's threshold for the other), saying how many more. A class counts no more than the source
    documents its labels come from (calibration.clusters), unless `per_document` is False (a refit replacing a
    routing that misses the false-accept target: calibration.guard)."""
    # A judge's label counts as its weight (ClaimRow.weight): what the thresholds' confidence rests on.
    weights = class_weights(rows)
    sources = class_sources(rows) if per_document else weights
    sides = Sides.of((min(weights[0], sources[0]), min(weights[1], sources[1])), targets.needed())
    if sides.both or (sides.fitted and not both):
        return sides
    have, need = sides.have, sides.need
    needed = sides.short()
    short = [f"{more} more {name}" for name, more in needed.items()]
    answers = [r for r in combine.answers_of(rows).values() if r.claim_index >= 0]
    judge_weights = sorted({r.weight for r in answers if r.label_kind == "judge"})
    counted = (f" (judge labels counted at weight {', '.join(f'{w:g}' for w in judge_weights)})"
               if judge_weights else "")
    if any(s < w - 1e-9 for s, w in zip(sources, weights, strict=True)):
        counted += (f" (of {_count(weights[0])} and {_count(weights[1])} labelled answers: answers of one source "
                    "document score alike and count once; label answers on more documents)")
    raise TooFewLabels(
        f"too few labels to meet false accept <= {targets.far:g} and false reject <= {targets.frr:g} with "
        f"{targets.confidence:.0%} confidence: that needs at least {need[0]} hallucinated and {need[1]} faithful "
        f"labelled answers with a checkable claim, from as many source documents, and there are {_count(have[0])} and "
        f"{_count(have[1])}{counted}. Label "
        f"{' and '.join(short)} answers (from the same domain), or relax the targets", needed=needed)


def _count(weight: float) -> str:
    """A weighted count as a message gives it: whole, or to one decimal."""
    return str(round(weight)) if abs(weight - round(weight)) < 1e-9 else f"{weight:.1f}"


def require_within_target(far: dict[str, float | int | None], targets: Targets, *, unroutable: int = 0,
                          fitted: bool = True) -> None:
    """Refuse a profile whose cross-validated false-accept rate (`rate`'s figure) exceeds the target by more than
    its interval: its 95% interval lies wholly above the target. `unroutable`: hallucinated answers without a
    checkable claim, which verify() accepts whatever the thresholds (the message names them). `fitted` False: the
    rate is theirs alone, before anything is fitted (`adapt --fine-tune` checks it before it tunes)."""
    if far["low"] is None or float(far["low"]) <= targets.far:
        return
    cause = (f" {unroutable} of them have no checkable claim (a question back, a greeting): verify() accepts such an "
             "answer whatever the thresholds, so no profile can route them." if unroutable else "")
    who = "cross-validated within the labels, this profile accepts" if fitted else "whatever it fits, any profile accepts"
    raise InputError(
        f"{who} {_count(float(far['hits'] or 0))} of {_count(float(far['n'] or 0))} hallucinated answers "
        f"({float(far['value'] or 0):.1%}, 95% interval {float(far['low']):.1%}-{float(far['high'] or 0):.1%}): above "
        f"the false-accept target {targets.far:g} by more than its interval, so no profile is written.{cause} Label "
        "more answers of this domain, relax --target-far, or keep the shipped routing",
        code=ErrorCode.PROFILE_MISSES_TARGET)


@dataclass(frozen=True)
class Adapted:
    """A fitted profile before it is written: what it routes by, and what profile.json records."""

    fitted: Fitted
    decide_at: float | None
    document: dict[str, object] = field(default_factory=dict)
    model: Path | None = None
    """A fine-tuned bundle in a temporary directory (`adapt --fine-tune`): write_profile moves it into the profile."""
    sides: Sides = BOTH
    """The thresholds fitted (`require_enough`'s decision; profile.json's "sides" records it)."""
    cross_validated: Mapping[tuple[str, str], lodo.Routed] = field(default_factory=dict)
    """Each labelled answer routed by the profile fitted on the other folds (`cross_validate`): what the validation
    figures are computed on, and what a refit's guard judges it by (calibration.guard)."""

    def discard(self) -> None:
        """Remove the temporary fine-tuned model of a profile not written."""
        if self.model is not None:
            shutil.rmtree(self.model.parent, ignore_errors=True)

    @property
    def validation(self) -> dict[str, dict[str, dict[str, float | int | None]]]:
        return self.document["validation"]  # type: ignore[return-value]


def labelled_of(rows: Sequence[EvalRow], source: str) -> list[EvalRow]:
    """The rows with a label; refuse rows without any (`source` names them)."""
    labelled = [r for r in rows if r.hallucinated is not None]
    if not labelled:
        raise InputError(f"{source}: no labelled rows (a row needs hallucinated: true or false)",
                         code=ErrorCode.NO_ROWS)
    return labelled


def adapt(rows: Sequence[EvalRow], verifier: Verifier, *, recipe: Recipe = "combiner", targets: Targets = Targets(),
          c: float = PRIOR_C, folds: int = FOLDS, source: str = "labels", scope: str | None = None,
          judged: frozenset[str] = frozenset(), use: LabelUse = "human",
          judge_weight: float = DEFAULT_JUDGE_WEIGHT, judge_error: float = 0.0,
          judge_error_from: str | dict[str, object] = "stated",
          selection: Mapping[str, float] | None = None) -> Adapted:
    """Fit a profile on labelled rows, checking each once with `verifier` (the base scorer, its settings, no
    profile); refuse labels too few, and a profile whose cross-validated false-accept rate misses the target.
    `source` names the labels in messages; `scope`: the request log's scope they were read from (None: a labelled
    file). `selection`: labels read from a review queue, weighted by how likely it was to show each (by row id:
    calibration.selection). `judge_error_from`: how `judge_error` was obtained, for profile.json
    (calibration.judge_error). With a fine-tune of the model too: train.adapt_tuned."""
    labelled = labelled_of(rows, source)
    calibration = calibration_of(verifier.scorer)
    claim_rows = combine.weighted_by_kind(combine.collect_rows(labelled, verifier, file=Path(source).stem), judged,
                                          judge_weight=check_judge_weight(judge_weight),
                                          judge_error=check_judge_error(judge_error))
    if selection:
        claim_rows = weighted_by_selection(claim_rows, selection)
    return adapt_rows(claim_rows, shipped(calibration), recipe=recipe, targets=targets, c=c, folds=folds,
                      base_model=verifier.scorer.model_id, calibration=calibration, scope=scope,
                      skipped=len(rows) - len(labelled), use=use, judge_error_from=judge_error_from)


def adapt_rows(claim_rows: Sequence[combine.ClaimRow], base: Fitted, *, recipe: Recipe, targets: Targets,
               c: float, folds: int, base_model: str, calibration: Calibration, scope: str | None = None,
               skipped: int = 0, auroc_rounds: int = 500,
               shipped_rows: Sequence[combine.ClaimRow] | None = None, use: LabelUse = "human",
               judge_error_from: str | dict[str, object] = "stated", per_document: bool = True) -> Adapted:
    """`adapt` on claim rows collected already (the learning curves reuse one feature cache, and skip the AUROC
    intervals with `auroc_rounds` 0). `shipped_rows`: the same answers checked by the base model, where
    `claim_rows` are another model's (a fine-tune's out-of-fold rows): the shipped routing is figured on them.
    Each row's label counts as its `weight` (a judge's label at the judge weight: combine.weighted_by_kind) in the
    fit and in the count of labels; `use` records which labels were read (human, judge or both), and
    `judge_error_from` how the judge's error rate was obtained; `per_document`: require_enough's. The
    cross-validated rates count each label as its weight too (AUROC: once)."""
    sides = require_enough(claim_rows, targets, per_document=per_document)
    cross = cross_validate(claim_rows, base, recipe=recipe, targets=targets, c=c, folds=folds, sides=sides)
    weight = combine.answer_weights(claim_rows)
    weighted = any(w != 1.0 for w in weight.values())
    shipped_routed = lodo.route_by_key(base, shipped_rows or claim_rows)
    validation = {"profile": rates(list(cross.values()), rounds=auroc_rounds,
                                   weights=[weight[k] for k in cross] if weighted else None),
                  "shipped": rates(list(shipped_routed.values()), rounds=auroc_rounds,
                                   weights=[weight.get(k, 1.0) for k in shipped_routed] if weighted else None)}
    unroutable = sum(r.hallucinated and r.claim_index < 0 for r in combine.answers_of(claim_rows).values())
    require_within_target(validation["profile"]["false_accept"], targets, unroutable=unroutable)
    fitted = fit_profile(claim_rows, base, recipe=recipe, targets=targets, c=c, sides=sides)
    # The decide threshold weighs both classes (best balanced accuracy): one-sided, the base's stays.
    decide_at = lodo.fit_decide_at(fitted, claim_rows) if sides.both else calibration.decide_at
    refit = refits_combiner(base, recipe) and sides.both
    judge_weight, judge_error = combine.judge_terms(claim_rows)
    document: dict[str, object] = {
        "format": PROFILE_FORMAT,
        "base_model": base_model,
        "made_by": f"groundwire {__version__} adapt",
        "labels_from": labels_from(scope, answers=len(combine.answers_of(claim_rows)), skipped=skipped,
                                   kinds=combine.label_kinds(claim_rows), use=use, judge_weight=judge_weight,
                                   judge_error=judge_error, judge_error_from=judge_error_from),
        "recipe": recipe if refit else "thresholds",
        "targets": {"false_accept": targets.far, "false_reject": targets.frr, "confidence": targets.confidence},
        "prior_strength": c if refit else None,
        "labels": label_counts(claim_rows),
        "sides": sides.to_dict(),
        "calibration": {
            "thresholds": list(fitted.pooled),
            "task_thresholds": {key: list(pair) for key, pair in sorted(fitted.by_key.items())},
            "decide_at": decide_at,
            "combiner": COMBINER_FILE if refit else None,
            "canonical_figures": calibration.canonical_figures if calibration.canonical_figures is not None else True,
            "meaning": bool(calibration.meaning),
        },
        "validation": {"folds": folds, "grouped_by": "source document (the first context chunk)", **validation},
    }
    return Adapted(fitted, decide_at, document, sides=sides, cross_validated=cross)


def write_profile(adapted: Adapted, out: Path, *, force: bool = False, by: str = "adapt",
                  reason: str | None = None, figures: Mapping[str, object] | None = None,
                  labels: Mapping[str, object] | None = None) -> Path:
    """Write the profile as a new version of folder `out` and put it in force atomically (calibration.versions: the
    version in force is replaced in one rename, the old ones are kept, the replacement is recorded in
    `out/history.jsonl` with the profile's cross-validated figures and label counts, or `figures` and `labels` when
    given). An `out` that holds anything is replaced only with `force`."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise InputError(f"{out} exists: give another --out, or --force to replace it", code=ErrorCode.OUTPUT_EXISTS)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file, not a profile folder", code=ErrorCode.OUTPUT_EXISTS)

    def fill(staging: Path) -> None:
        (staging / PROFILE_FILE).write_text(json.dumps(adapted.document, indent=2) + "\n", encoding="utf-8")
        if adapted.document["calibration"]["combiner"]:  # type: ignore[index]
            assert adapted.fitted.combiner is not None
            (staging / COMBINER_FILE).write_text(adapted.fitted.combiner.to_json() + "\n", encoding="utf-8")
        if adapted.model is not None:
            shutil.copytree(adapted.model, staging / MODEL_DIR)

    try:
        versions.install(out, fill, by=by, reason=reason,
                         figures=figures if figures is not None else {"cross_validated": adapted.validation["profile"]},
                         labels=labels if labels is not None else label_kinds(adapted.document))
    finally:
        adapted.discard()
    return out


def label_kinds(document: Mapping[str, object]) -> dict[str, object]:
    """A profile's label counts as its history records them: human and judge labels apart (`labels_from`'s
    `label_kinds`; a profile written before them: every label a human one), the judge weight and error rate (and how
    that was obtained), and the classes over
    all tasks."""
    labels = document.get("labels")
    every = labels.get("all", {}) if isinstance(labels, Mapping) else {}
    counts = {k: int(v) for k, v in every.items()} if isinstance(every, Mapping) else {}
    source = document.get("labels_from")
    kinds = source.get("label_kinds") if isinstance(source, Mapping) else None
    if not isinstance(kinds, Mapping):
        kinds = {"human": counts.get("hallucinated", 0) + counts.get("faithful", 0), "judge": 0}
    judge = {key: source.get(key) if isinstance(source, Mapping) else None
             for key in ("judge_weight", "judge_error", "judge_error_from")}
    return {"human": int(kinds.get("human", 0)), "judge": int(kinds.get("judge", 0)), **judge, **counts}
