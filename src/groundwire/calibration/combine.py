"""Fit and cross-validate the hybrid combiner on claim features from the dev files.

Steps: run a Verifier over grounding-eval rows and keep every claim's features (`collect`); label claims
(`claim_label`); fit a file-balanced logistic regression (`fit`), one per task type with enough answers
plus a pooled one (`fit_tasks`); measure it with cross-validation grouped by source document
(`cross_validate`), where an answer's score is the min over its claims after the figure-check cap, as in
verify(), and each calibration key's thresholds are chosen on the training folds.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from groundwire.core.claim_state import window_caps
from groundwire.core.verdicts import best_window
from groundwire.core.verifier import Verifier
from groundwire.data.rows import EvalRow, read_eval_jsonl
from groundwire.evaluation.evaluate import row_chunks
from groundwire.evaluation.metrics import detection_metrics
from groundwire.foundation.types import Report
from groundwire.pipeline import CheckItem, check
from groundwire.scoring.combiner import LogisticCombiner, TaskCombiner, calibration_key, feature_matrix

FEATURES: tuple[str, ...] = (
    "logit:support", "logit:support_second", "logit:contradiction", "logit:contradiction_at_best",
    "best_window_recall", "novel_word_share", "log1p:novel_names", "figures_not_in_context", "figure_conflicts",
    "fabricated_citation", "log1p:claim_words", "position", "log1p:n_claims", "lexical_support",
)
LabelKind = Literal["human", "judge"]
MIN_TASK_ANSWERS = 80
"""A task type gets its own combiner and threshold only with at least this many labelled answers."""


@dataclass(frozen=True, slots=True)
class ClaimRow:
    file: str
    row_id: str
    task: str
    group: str
    hallucinated: bool
    answer_score: float
    """The verifier's own answer score (min over claims after checks), for the 'full verifier' line."""
    claim_index: int
    span: tuple[int, int]
    gold_overlap: bool | None
    """True when a gold hallucination span overlaps the claim (only where the file has spans)."""
    features: dict[str, float]
    """The features of the reading the claim's score came from (its cited window's; `ClaimResult.features`)."""
    other_windows: tuple[dict[str, float], ...] = ()
    """The features of its other readings (`ClaimResult.other_windows`): a replay takes the max over all of them,
    each capped by its own findings, as verify() does. Empty in caches from before they were recorded."""
    label_kind: LabelKind = "human"
    """Who labelled the answer: a person (a reviewer's verdict, a labelled file) or the LLM judge (`serve
    --judge-labels`). Counted apart wherever labels are counted (`label_kinds`)."""
    weight: float = 1.0
    """How much the answer's label counts in a fit, as a share of a person's: 1 for a human label, the judge weight
    (`--judge-weight`) for a judge's (`weighted_by_kind`)."""
    label_error: float = 0.0
    """The probability that the label is wrong, which the thresholds' fit corrects for: 0 for a human label, the
    judge's stated error rate (`--judge-error`) for a judge's."""

    @property
    def readings(self) -> list[dict[str, float]]:
        """The claim read at each window verify() scored it at: the cited one first."""
        return [self.features, *self.other_windows]

    @property
    def key(self) -> str:
        """The calibration key verify() uses for this claim's answer: its task, "/long" for long-form."""
        return calibration_key(self.task, int(self.features.get("n_claims", 0))) or ""


def weighted_by_kind(rows: Sequence[ClaimRow], judged: Iterable[str], *, judge_weight: float,
                     judge_error: float = 0.0) -> list[ClaimRow]:
    """The rows of the answers whose ids are in `judged` marked as judge labels of weight `judge_weight` and label
    error `judge_error`; the others stay human labels of weight 1 and error 0."""
    ids = frozenset(judged)
    return [replace(r, label_kind="judge", weight=judge_weight, label_error=judge_error) if r.row_id in ids else r
            for r in rows]


def label_kinds(rows: Sequence[ClaimRow]) -> dict[str, int]:
    """Labelled answers per kind: {"human": n, "judge": m}."""
    answers = answers_of(rows).values()
    return {kind: sum(r.label_kind == kind for r in answers) for kind in ("human", "judge")}


def judge_terms(rows: Sequence[ClaimRow]) -> tuple[float | None, float | None]:
    """The weight and the stated error rate the judge's labels had in a fit (None, None: it had none)."""
    judged = [r for r in rows if r.label_kind == "judge"]
    if not judged:
        return None, None
    return max(r.weight for r in judged), max(r.label_error for r in judged)


def answer_weights(rows: Sequence[ClaimRow]) -> dict[tuple[str, str], float]:
    """Each answer's label weight, keyed as `answers_of` keys them."""
    return {key: r.weight for key, r in answers_of(rows).items()}


def _group(context: Sequence[str]) -> str:
    return hashlib.sha1(context[0][:2000].encode()).hexdigest()[:12] if context else ""


def sample_rows(path: Path, limit: int | None, seed: int = 0) -> list[EvalRow]:
    """The labelled rows of a dev file, or a seeded sample of `limit` of them: the sample every bench and
    calibration of the same (limit, seed) scores."""
    rows = [r for r in read_eval_jsonl(path) if r.hallucinated is not None]
    return random.Random(seed).sample(rows, limit) if limit is not None and len(rows) > limit else rows


def collect(paths: Iterable[Path], verifier: Verifier, *, limit: int | None = None, seed: int = 0) -> list[ClaimRow]:
    """Claim rows for a seeded sample of at most `limit` answers per file (an answer with no claims is kept
    as one row with empty features, so answer-level metrics still count it)."""
    return [row for path in paths for row in collect_rows(sample_rows(path, limit, seed), verifier, file=Path(path).stem)]


def collect_rows(rows: Iterable[EvalRow], verifier: Verifier, *, file: str) -> list[ClaimRow]:
    """Claim rows for labelled answers read already (`groundwire adapt`'s), as `collect` makes them for a file."""
    return [claim_row for row, report in reports(rows, verifier) for claim_row in claim_rows_of(row, report, file=file)]


def reports(rows: Iterable[EvalRow], verifier: Verifier) -> Iterator[tuple[EvalRow, Report]]:
    """Each labelled answer with its report, checked as `eval` checks it."""
    for row in rows:
        yield row, check(verifier, CheckItem(row.answer, row_chunks(row), question=row.question, task=row.task))


def claim_rows_of(row: EvalRow, report: Report, *, file: str) -> list[ClaimRow]:
    """One labelled answer's claim rows from its report (one row with empty features when it has no claims)."""
    return _claim_rows(row, float(report.score), [(c.claim.span, dict(c.features), c.other_windows)
                                                  for c in report.claims], file=file)


def claim_rows_of_logged(row: EvalRow, report: Mapping[str, object], *, file: str,
                         model_id: str) -> list[ClaimRow] | None:
    """`claim_rows_of` from a report as logged (`Report.to_dict()`, the request log's): its claims' features, not a
    check again. None when the report cannot give them: scored by another model than `model_id`, or logged without
    claim features."""
    claims = report.get("claims")
    score = report.get("score")
    if report.get("model_id") != model_id or not isinstance(claims, list) or not isinstance(score, int | float):
        return None
    readings: list[tuple[tuple[int, int], dict[str, float], tuple[dict[str, float], ...]]] = []
    for claim in claims:
        try:
            span = claim["claim"]["span"]
            features = {str(k): float(v) for k, v in claim["features"].items()}
            others = tuple({str(k): float(v) for k, v in w.items()} for w in claim.get("other_windows", ()))
            readings.append(((int(span[0]), int(span[1])), features, others))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
    if claims and not all(features for _, features, _ in readings):
        return None
    return _claim_rows(row, float(score), readings, file=file)


def _claim_rows(row: EvalRow, score: float,
                claims: Sequence[tuple[tuple[int, int], dict[str, float], tuple[dict[str, float], ...]]], *,
                file: str) -> list[ClaimRow]:
    answer = (file, row.id, row.task, _group(row.context), bool(row.hallucinated), score)
    if not claims:
        return [ClaimRow(*answer, claim_index=-1, span=(0, 0), gold_overlap=None, features={})]
    out: list[ClaimRow] = []
    for i, (span, features, others) in enumerate(claims):
        overlap = (any(s < span[1] and e > span[0] for s, e, _ in row.spans) if row.spans or
                   row.source == "ragtruth" else None)
        out.append(ClaimRow(*answer, claim_index=i, span=span, gold_overlap=overlap, features=features,
                            other_windows=others))
    return out


def save_rows(rows: Sequence[ClaimRow], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(asdict(row)) + "\n")


def load_rows(path: Path) -> list[ClaimRow]:
    with path.open() as fh:
        return [ClaimRow(**{**d, "span": tuple(d["span"]), "other_windows": tuple(d.get("other_windows", ()))})
                for d in map(json.loads, fh)]


def claim_label(rows: Sequence[ClaimRow]) -> tuple[np.ndarray, np.ndarray]:
    """(supported 0/1, usable) per claim row.

    With gold spans: a claim is unsupported iff a span overlaps it. Without: every claim of a faithful answer
    is supported; a hallucinated answer with one claim is unsupported; with several, only the claim the model
    and the lexical baseline together support least is labelled unsupported and the others are left out (we
    do not know which are fine).
    """
    y = np.ones(len(rows))
    use = np.ones(len(rows), dtype=bool)
    by_answer: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_answer[(row.file, row.row_id)].append(i)
    for members in by_answer.values():
        first = rows[members[0]]
        if first.claim_index < 0:
            use[members] = False
            continue
        if first.gold_overlap is not None:
            for i in members:
                y[i] = 0.0 if rows[i].gold_overlap else 1.0
            if first.hallucinated and all(y[i] == 1 for i in members):
                use[members] = False  # the hallucinated part fell outside every claim (e.g. a skipped sentence)
        elif first.hallucinated:
            weakest = min(members, key=lambda i: combined_support(rows[i]))
            y[weakest] = 0.0
            use[[i for i in members if i != weakest]] = False
    return y, use


def combined_support(row: ClaimRow) -> float:
    """The support by which `claim_label` picks a hallucinated answer's suspect claim (the least supported): the
    model's and the lexical baseline's together, so neither one's blind spots set the labels."""
    return row.features.get("support", 0.0) + row.features.get("lexical_support", 0.0)


def file_weights(rows: Sequence[ClaimRow], use: np.ndarray) -> np.ndarray:
    """Each file weighs the same in total, so the 2,000-row HaluEval file cannot drown RAGTruth.

    The weights average 1 over the rows in use, so the regularisation strength C means the same whatever
    the number of rows or files. (v2 was first calibrated with weights summing to the number of files: a
    one-file task's combiner then saw a total weight of 1, C=0.5 flattened its coefficients to about 0.02,
    and RAGTruth's cross-validated AUROC was 0.717 instead of 0.798.)
    """
    counts: dict[str, int] = defaultdict(int)
    for row, ok in zip(rows, use, strict=True):
        counts[row.file] += int(ok)
    weights = np.array([1.0 / counts[row.file] if counts[row.file] else 0.0 for row in rows])
    used = weights[np.asarray(use, dtype=bool)]
    return weights / used.mean() if used.size and used.mean() > 0 else weights


def fit(rows: Sequence[ClaimRow], *, names: Sequence[str] = FEATURES, c: float = 0.5,
        meta: Mapping[str, object] | None = None) -> LogisticCombiner:
    from sklearn.linear_model import LogisticRegression

    y, use = claim_label(rows)
    feats = [r.features for r, ok in zip(rows, use, strict=True) if ok]
    x = feature_matrix(feats, names)
    mean, scale = x.mean(0), x.std(0)
    scale[scale < 1e-9] = 1.0
    w = file_weights(rows, use)[use]
    yy = y[use]
    # Balance the classes inside the file weights.
    for label in (0.0, 1.0):
        mask = yy == label
        w[mask] *= len(yy) / (2 * max(w[mask].sum(), 1e-9)) * (w.sum() / len(yy))
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, yy, sample_weight=w)
    return LogisticCombiner(names=tuple(names), mean=tuple(mean.tolist()), scale=tuple(scale.tolist()),
                            coef=tuple(model.coef_[0].tolist()), intercept=float(model.intercept_[0]), meta=meta)


def answers_of(rows: Sequence[ClaimRow]) -> dict[tuple[str, str], ClaimRow]:
    """One row per answer (its first claim row), keyed by (file, answer id)."""
    return {(r.file, r.row_id): r for r in reversed(rows)}


def answer_scores(rows: Sequence[ClaimRow], claim_scores: np.ndarray) -> dict[tuple[str, str], float]:
    """min over an answer's claims; an answer with no claims scores 1.0, as in verify()."""
    out: dict[tuple[str, str], float] = {}
    for row, score in zip(rows, claim_scores, strict=True):
        key = (row.file, row.row_id)
        value = 1.0 if row.claim_index < 0 else float(score)
        out[key] = min(out.get(key, 1.0), value)
    return out


def best_threshold(labels: Sequence[bool], scores: Sequence[float], files: Sequence[str]) -> float:
    """The accept threshold that maximises balanced accuracy averaged over files."""
    from sklearn.metrics import balanced_accuracy_score

    labels_a, scores_a, files_a = np.asarray(labels), np.asarray(scores), np.asarray(files)
    candidates = np.unique(np.quantile(scores_a, np.linspace(0.02, 0.98, 97)))
    best, best_value = 0.5, -1.0
    for t in candidates:
        values = [balanced_accuracy_score(labels_a[files_a == f], scores_a[files_a == f] < t)
                  for f in np.unique(files_a) if len(set(labels_a[files_a == f])) == 2]
        if np.mean(values) > best_value:
            best, best_value = float(t), float(np.mean(values))
    return best


@dataclass(frozen=True, slots=True)
class AnswerScore:
    file: str
    task: str
    hallucinated: bool
    score: float
    accepted: bool


def eligible_tasks(rows: Sequence[ClaimRow], min_answers: int = MIN_TASK_ANSWERS) -> list[str]:
    """Calibration keys (task types, "qa/long" for long-form answers) with at least `min_answers` labelled
    answers of both labels: they get their own threshold, and may get their own combiner."""
    out = []
    for task in sorted({r.key for r in rows}):
        labels = {(r.file, r.row_id): r.hallucinated for r in rows if r.key == task}
        if len(labels) >= min_answers and len(set(labels.values())) == 2:
            out.append(task)
    return out


def fit_tasks(rows: Sequence[ClaimRow], *, names: Sequence[str] = FEATURES, c: float = 0.5,
              min_answers: int = MIN_TASK_ANSWERS, select: bool = True, meta: Mapping[str, object] | None = None) -> TaskCombiner:
    """A pooled combiner, plus one per eligible task type. With `select`, a task keeps its own combiner only
    where an inner cross-validation on these rows says it ranks that task's answers better than the pooled
    one (a task's own combiner sees fewer answers, and on some tasks that costs more than it gains)."""
    by_task: dict[str, LogisticCombiner] = {}
    tasks = eligible_tasks(rows, min_answers)
    gains = _own_combiner_gains(rows, tasks, names=names, c=c) if select else {}
    for task in tasks:
        if select and gains[task] <= 0:
            continue
        subset = [r for r in rows if r.key == task]
        by_task[task] = fit(subset, names=names, c=c,
                            meta={"task": task, "answers": len({(r.file, r.row_id) for r in subset})})
    return TaskCombiner(default=fit(rows, names=names, c=c, meta=meta), by_task=by_task)


def _own_combiner_gains(rows: Sequence[ClaimRow], tasks: Sequence[str], *, names: Sequence[str], c: float,
                        folds: int = 3) -> dict[str, float]:
    """Per task: out-of-fold AUROC on its answers of a combiner fitted on that task alone, minus the pooled
    combiner's (fitted once per fold for all tasks)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    groups = np.array([f"{r.file}/{r.group}" for r in rows])
    own = {task: np.ones(len(rows)) for task in tasks}
    pooled = np.ones(len(rows))
    for train_idx, test_idx in GroupKFold(n_splits=folds).split(np.zeros(len(rows)), groups=groups):
        train = [rows[i] for i in train_idx]
        pooled_fit = fit(train, names=names, c=c)
        scored = [i for i in test_idx if rows[i].claim_index >= 0]
        if scored:
            pooled[scored] = pooled_fit.predict([rows[i].features for i in scored])
        for task in tasks:
            subset = [r for r in train if r.key == task]
            test = [i for i in scored if rows[i].key == task]
            labels, usable = claim_label(subset)
            if test and len(set(labels[usable])) == 2:
                own[task][test] = fit(subset, names=names, c=c).predict([rows[i].features for i in test])
            else:
                own[task][test] = pooled[test]  # no own fit possible here: no gain either way
    gains: dict[str, float] = {}
    for task in tasks:
        keys = [i for i, r in enumerate(rows) if r.key == task]
        task_rows = [rows[i] for i in keys]
        answer_labels = {(r.file, r.row_id): r.hallucinated for r in task_rows}
        aucs = [roc_auc_score([answer_labels[k] for k in answers], [-v for v in answers.values()])
                for answers in (answer_scores(task_rows, s[keys]) for s in (own[task], pooled))]
        gains[task] = float(aucs[0] - aucs[1])
    return gains


ReadingScores = list[np.ndarray]
"""Per claim row, the combiner's score of each of its readings (`ClaimRow.readings`), in that order."""


def claim_scores(combiner: LogisticCombiner | TaskCombiner, rows: Sequence[ClaimRow]) -> ReadingScores:
    """Each claim row's readings scored by its calibration key's combiner (a row of an answer with no claims: 1.0)."""
    scores = [np.ones(len(r.readings) if r.claim_index >= 0 else 1) for r in rows]
    by_key: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r.claim_index >= 0:
            by_key.setdefault(r.key, []).append(i)
    for task, idx in by_key.items():
        flat = combiner.predict([features for i in idx for features in rows[i].readings], task=task)
        at = 0
        for i in idx:
            scores[i] = flat[at : at + len(scores[i])]
            at += len(scores[i])
    return scores


def chosen_readings(rows: Sequence[ClaimRow], scores: ReadingScores, thresholds: Callable[[str], tuple[float, float]],
                    *, gate: bool = False) -> tuple[np.ndarray, list[dict[str, float]]]:
    """Claim scores as verify() gives them, and the features of the reading each comes from: each reading's score
    capped by its own findings (a missing figure, a negation flip; the paraphrase gate's lift) at its key's
    thresholds, the max over the claim's readings (core.verdicts.best_window, read with core.claim_state.window_caps
    as the verifier reads them). Feature caches from before the negation flag (or the meaning layer) was recorded
    count no flips (and no gate). `gate`: apply the gate (a recipe with the meaning layer on)."""
    capped, chosen = np.ones(len(rows)), []
    for i, (row, values) in enumerate(zip(rows, scores, strict=True)):
        readings = row.readings
        capped[i], best = best_window([float(v) for v in values], [window_caps(f, gate=gate) for f in readings],
                                      thresholds(row.key))
        chosen.append(readings[best])
    return capped, chosen


def capped_scores(rows: Sequence[ClaimRow], scores: ReadingScores,
                  thresholds: Callable[[str], tuple[float, float]], *, gate: bool = False) -> np.ndarray:
    """The claim scores of `chosen_readings`."""
    return chosen_readings(rows, scores, thresholds, gate=gate)[0]


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


def task_thresholds(rows: Sequence[ClaimRow], scores: ReadingScores,
                    tasks: Sequence[str]) -> tuple[tuple[float, float], dict[str, tuple[float, float]]]:
    """(accept_at, reject_at), pooled and per key in `tasks`, for uncapped claim scores.

    accept_at maximises balanced accuracy averaged over the files of the key's answers, with the claims the
    checks cap (a missing figure, a negation flip) put below it: verify() caps them under accept_at, and
    any cap under it gives the same choice. reject_at is then the highest score at or below which 90% of
    the other answers are hallucinated: the checks decide their answers' route whatever reject_at is, so
    the band is set by the answers the model decides.
    """
    meta = {(r.file, r.row_id): r for r in rows}
    capped, chosen = chosen_readings(rows, scores, lambda _key: (0.0, 0.0))
    floor = answer_scores(rows, capped)
    checked = {(r.file, r.row_id) for r, features in zip(rows, chosen, strict=True)
               if r.claim_index >= 0 and window_caps(features).kind != "none"}
    keys = list(floor)

    def pair(selected: list[tuple[str, str]]) -> tuple[float, float]:
        labels = [meta[k].hallucinated for k in selected]
        accept_at = best_threshold(labels, [floor[k] for k in selected], [meta[k].file for k in selected])
        model_decided = [k for k in selected if k not in checked]
        return round(accept_at, 4), reject_threshold([meta[k].hallucinated for k in model_decided],
                                                     [floor[k] for k in model_decided], accept_at)

    return pair(keys), {task: pair([k for k in keys if meta[k].key == task]) for task in tasks}


def cross_validate(rows: Sequence[ClaimRow], *, folds: int = 5, names: Sequence[str] = FEATURES,
                   c: float = 0.5, per_task: bool = True) -> list[AnswerScore]:
    """Out-of-fold answer scores, as verify() would give them: folds group rows by source document; each
    fold's combiners and thresholds (per calibration key with `per_task`) come from its training folds, and
    the test claims are capped by the figure checks at those thresholds."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([f"{r.file}/{r.group}" for r in rows])
    oof = np.ones(len(rows))
    accept_at = np.zeros(len(rows))
    for train_idx, test_idx in GroupKFold(n_splits=folds).split(np.zeros(len(rows)), groups=groups):
        train_rows = [rows[i] for i in train_idx]
        min_answers = MIN_TASK_ANSWERS if per_task else 10**9
        combiner = fit_tasks(train_rows, names=names, c=c, min_answers=min_answers)
        pooled, by_key = task_thresholds(train_rows, claim_scores(combiner, train_rows),
                                         eligible_tasks(train_rows, min_answers))
        test_rows = [rows[i] for i in test_idx]
        oof[test_idx] = capped_scores(test_rows, claim_scores(combiner, test_rows),
                                       _thresholds_or(by_key, pooled))
        accept_at[test_idx] = [by_key.get(r.key, pooled)[0] for r in test_rows]
    answers = answer_scores(rows, oof)
    first: dict[tuple[str, str], tuple[ClaimRow, float]] = {}
    for i, r in enumerate(rows):
        first.setdefault((r.file, r.row_id), (r, accept_at[i]))
    return [AnswerScore(r.file, r.task, r.hallucinated, s, s >= first[k][1])
            for k, s in answers.items() for r in [first[k][0]]]


def _thresholds_or(by_key: Mapping[str, tuple[float, float]],
                   pooled: tuple[float, float]) -> Callable[[str], tuple[float, float]]:
    """A key's own thresholds where it has them, else the pooled ones."""
    return lambda key: by_key.get(key, pooled)


def metrics(answers: Sequence[AnswerScore]) -> dict[str, float | int | None]:
    m = detection_metrics([a.hallucinated for a in answers], [a.score for a in answers],
                          [not a.accepted for a in answers])
    return m.to_dict()


def report(answers: Sequence[AnswerScore]) -> dict[str, dict[str, float | int | None]]:
    """Metrics per file, and per task for files with several tasks (ragtruth)."""
    out: dict[str, dict[str, float | int | None]] = {}
    by_file: dict[str, list[AnswerScore]] = defaultdict(list)
    for a in answers:
        by_file[a.file].append(a)
    for file, items in sorted(by_file.items()):
        out[file] = metrics(items)
        tasks = sorted({a.task for a in items})
        if len(tasks) > 1:
            for task in tasks:
                out[f"{file}/{task}"] = metrics([a for a in items if a.task == task])
    return out
