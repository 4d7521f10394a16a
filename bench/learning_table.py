"""Issue 56 item 6's tables: `bench/learning_loop.py` on every file given, teach against arrival order, human
against judge labels, week by week, and what a fit on the file's labels could reach.

    .venv/bin/python bench/learning_table.py ../shared/data/dev/*.jsonl --cache-dir runs/loop --seeds 5 \
        --out results/learning_loop.md

Each file's claim features are collected once into `--cache-dir/<file stem>.jsonl` (the same cache
`bench/learning_loop.py --cache` reads). A quarter of each week is reviewed (`--review-share`), as issue 56's target
asks. For each file it prints, then writes as markdown (a summary table first):

- the week-by-week means over `--seeds` of escalation, false accept and false reject for each arm (`ARMS`): teach
  and arrival order with a reviewer's labels, and a judge wrong `--judge` of the time (default 0.1) at weight 0.3
  (the default `serve --judge-weight`), at weight 1, and at weight 1 with its error rate corrected for
  (`--judge-error`), each labelling the week's reviews; and the service's case with a judge, where it settles
  every escalated answer (weight 1, error corrected) and people label the audit items within the week's reviews
  (learning_loop --people-audit); each week's rates measured on answers routed before their labels were seen
  (learning_loop.run);
- `reachable`: thresholds fitted on all the file's labels, cross-validated by source (adapt's own figure, with its
  90% confidence margin). Issue 56's week-6 target (escalation <= 0.40 at false accept and false reject <= 0.10)
  applies where this reaches it;
- `on the budget`: the same on as many labels as five weeks of reviews give (what week 6 is routed by), drawn at
  random from the file, whole sources at a time, over the seeds: what any order of review could reach by week 6
  with the labels it gets, when they are representative;
- the week by which teach order reaches arrival order's week-6 escalation;
- the lexical baseline learning on the same answers (teach order, human labels; its claim rows cached as
  `--cache-dir/<file stem>.lexical.jsonl`): its default thresholds in week 1, refitted as the bundled model's are.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from groundwire.calibration import combine
from groundwire.calibration.adapt import Targets, shipped
from groundwire.calibration.guard import guarded_refit
from groundwire.core.settings import CheckSettings
from groundwire.data.rows import EvalRow, read_eval_jsonl
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration, calibration_of
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.calibrate import features_for
from learning_loop import Week, run

Cell = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    order: str
    judge_weight: float | None
    """None: a reviewer's labels; else a judge's, at this weight."""
    corrected: bool = False
    """The judge's error rate told to the fit (--judge-error)."""
    people_audit: bool = False
    """The service's case with a judge (learning_loop --people-audit): the judge settles every escalated answer and
    its label is kept, people label the audit items within the week's reviews."""


ARMS = (Arm("teach, human", "teach", None), Arm("arrival, human", "arrival", None),
        Arm("teach, judge w0.3", "teach", 0.3), Arm("teach, judge w1", "teach", 1.0),
        Arm("teach, judge w1 corrected", "teach", 1.0, True), Arm("arrival, judge w1 corrected", "arrival", 1.0, True),
        Arm("teach, judge on every escalation, people audit", "teach", 1.0, True, True))
LEXICAL = "teach, human, lexical baseline"


@dataclass(frozen=True, slots=True)
class Reach:
    escalation: float | None
    far: float | None
    frr: float | None
    why_not: str | None = None

    def text(self) -> str:
        if self.escalation is None:
            return f"refused ({self.why_not})"
        return f"{self.escalation:.2f} / {self.far:.2f} / {self.frr:.2f}"


def reachable(rows: Sequence[combine.ClaimRow], scorer: OnnxScorer) -> Reach:
    """Thresholds fitted on these labels as a refit fits them, cross-validated by source (adapt's validation)."""
    base = shipped(scorer.calibration)
    try:
        refit = guarded_refit(rows, base, base, targets=Targets(), base_model=scorer.model_id,
                              calibration=scorer.calibration)
    except InputError as error:
        return Reach(None, None, None, str(error).split(":")[0])
    if refit.adapted is None:
        return Reach(None, None, None, refit.reason.split(":")[0].removeprefix("adapt refused the labels "))
    figures = refit.adapted.validation["profile"]
    value = lambda name: figures[name]["value"]  # noqa: E731
    return Reach(value("escalated"), value("false_accept"), value("false_reject"))


def on_budget(rows: Sequence[combine.ClaimRow], scorer: OnnxScorer, *, labels: int, seeds: int) -> Reach:
    """`reachable` on `labels` answers drawn at random, whole sources at a time, averaged over `seeds` draws (a
    refused draw counts as the shipped routing's escalation: it changes nothing)."""
    by_source: dict[str, list[combine.ClaimRow]] = defaultdict(list)
    for row in rows:
        by_source[row.group].append(row)
    answers_of_source = {source: len(combine.answers_of(group)) for source, group in by_source.items()}
    reached: list[Reach] = []
    for seed in range(seeds):
        sources = sorted(by_source)
        random.Random(seed).shuffle(sources)
        drawn: list[combine.ClaimRow] = []
        taken = 0
        for source in sources:
            if taken >= labels:
                break
            drawn += by_source[source]
            taken += answers_of_source[source]
        reached.append(reachable(drawn, scorer))
    fitted = [r for r in reached if r.escalation is not None]
    if not fitted:
        return Reach(None, None, None, f"every draw refused: {reached[0].why_not}")
    return Reach(statistics.fmean(r.escalation or 0.0 for r in fitted), statistics.fmean(r.far or 0.0 for r in fitted),
                 statistics.fmean(r.frr or 0.0 for r in fitted),
                 None if len(fitted) == len(reached) else f"{len(reached) - len(fitted)} of {len(reached)} refused")


def means(runs: Sequence[Sequence[Week]]) -> list[Cell]:
    weeks = min(len(r) for r in runs)
    return [(statistics.fmean(r[w].escalation for r in runs), statistics.fmean(r[w].far for r in runs),
             statistics.fmean(r[w].frr for r in runs)) for w in range(weeks)]


def catches_up(teach: Sequence[Cell], arrival: Sequence[Cell]) -> int | None:
    """The first week whose teach-order escalation is at or below arrival order's last week's."""
    target = arrival[-1][0]
    return next((w + 1 for w, (esc, _, _) in enumerate(teach) if esc <= target + 1e-9), None)


def cell(figure: Cell) -> str:
    return f"{figure[0]:.2f} / {figure[1]:.2f} / {figure[2]:.2f}"


@dataclass(frozen=True, slots=True)
class FileTable:
    summary: str
    lines: list[str]


@dataclass(frozen=True, slots=True)
class Lexical:
    """The lexical baseline as learning_loop.run reads a scorer: its model id and its calibration (none: the
    default thresholds, no combiner, so a refit fits thresholds only)."""

    model_id: str
    calibration: Calibration


def lexical_rows(path: Path, cache: Path) -> tuple[list[combine.ClaimRow], Lexical]:
    """The file's claim rows scored by the lexical baseline (cached), and the baseline as a scorer."""
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    if cache.is_file():
        rows = combine.load_rows(cache)
    else:
        rows = combine.collect_rows([r for r in read_eval_jsonl(path) if isinstance(r, EvalRow)], verifier,
                                    file=path.stem)
        combine.save_rows(rows, cache)
    return rows, Lexical(verifier.scorer.model_id, calibration_of(verifier.scorer))


def table_of(path: Path, cache: Path, scorer: OnnxScorer, *, seeds: int, weeks: int, share: float,
             judge: float) -> FileTable:
    rows = [r for r in features_for(bundled_path(), [path], limit=None, cache=cache) if r.file == path.stem]
    n = len(combine.answers_of(rows))
    per_week = min(200, n // 6)
    reviews = max(1, round(per_week * share))
    base = shipped(scorer.calibration)
    arms: dict[str, list[Cell]] = {}
    for arm in ARMS:
        arms[arm.name] = means([run(rows, base, scorer, per_week=per_week, weeks=weeks, reviews=reviews,
                                    order=arm.order, noise=None if arm.judge_weight is None else judge, seed=s,
                                    targets=Targets(), judge_weight=arm.judge_weight or 1.0,
                                    judge_error=judge if arm.corrected else 0.0, people_audit=arm.people_audit)
                                for s in range(seeds)])
    # The lexical baseline learning on the same answers, weeks and reviews (teach order, human labels).
    lexical, baseline = lexical_rows(path, cache.with_name(f"{path.stem}.lexical.jsonl"))
    arms[LEXICAL] = means([run(lexical, shipped(baseline.calibration), baseline, per_week=per_week, weeks=weeks,
                               reviews=reviews, order="teach", noise=None, seed=s, targets=Targets())
                           for s in range(seeds)])
    reach = reachable(rows, scorer)
    budget = on_budget(rows, scorer, labels=reviews * (weeks - 1), seeds=seeds)
    teach, arrival = arms["teach, human"], arms["arrival, human"]
    last = teach[-1]
    met = last[0] <= 0.40 and last[1] <= 0.10 and last[2] <= 0.10
    applies = reach.escalation is not None and reach.escalation <= 0.40
    worst_far = max(f for arm in ARMS for _, f, _ in arms[arm.name])
    caught = catches_up(teach, arrival)
    lines = [f"### {path.stem}: {n} answers, {per_week} a week, {reviews} reviewed a week, {seeds} seeds", "",
             "| week | " + " | ".join(name for name in arms) + " |", "|---" * (len(arms) + 1) + "|"]
    for w in range(len(teach)):
        lines.append(f"| {w + 1} | " + " | ".join(cell(cells[w]) for cells in arms.values()) + " |")
    lines += ["", f"- reachable (fitted on all {n} labels, cross-validated by source): {reach.text()}",
              f"- on the week-6 budget ({reviews * (weeks - 1)} labels drawn at random, {seeds} draws): "
              f"{budget.text()}" + (f" ({budget.why_not})" if budget.why_not and budget.escalation is not None else ""),
              f"- week-6 target (teach, human: escalation <= 0.40, false accept and false reject <= 0.10): "
              f"{'met' if met else 'not met'} ({cell(last)})" + ("" if applies else "; does not apply (reachable "
                                                                   "escalation above 0.40)"),
              f"- teach reaches arrival's last-week escalation ({arrival[-1][0]:.2f}) in week {caught or '-'}"]
    for arm in ARMS[2:]:
        if arm.order == "teach":
            lines.append(f"- judge:{judge:g} ({arm.name.removeprefix('teach, judge ')}) costs "
                         f"{arms[arm.name][-1][0] - last[0]:+.2f} of week-6 escalation against human labels")
    lines += [f"- worst weekly mean false accept over all arms: {worst_far:.2f}", ""]
    summary = (f"| {path.stem} | {n} | {reviews} | {reach.text()} | {budget.text()} | {cell(last)} | "
               f"{cell(arms[LEXICAL][-1])} | {cell(arrival[-1])} | {caught or '-'} | "
               + " | ".join(cell(arms[arm.name][-1]) for arm in (*ARMS[2:5], ARMS[6])) + " |")
    return FileTable(summary, lines)


SUMMARY_HEAD = ("| family | answers | reviewed a week | reachable | on the week-6 budget | week 6 teach, human | "
                "week 6 teach, human, lexical baseline | week 6 arrival, human | teach reaches arrival's week 6 in week "
                "| week 6 teach, judge w0.3 | week 6 teach, judge w1 | week 6 teach, judge w1 corrected | week 6 teach, "
                "judge on every escalation (w1 corrected), people audit |\n|---|---:|---:|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+", help="labelled grounding-eval JSONL files")
    parser.add_argument("--cache-dir", type=Path, required=True, help="per-file claim-feature caches")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--weeks", type=int, default=6)
    parser.add_argument("--review-share", type=float, default=0.25, help="share of each week's answers reviewed")
    parser.add_argument("--judge", type=float, default=0.1, help="the simulated judge's error rate")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables here (markdown)")
    args = parser.parse_args()
    scorer = OnnxScorer(bundled_path())
    tables: list[FileTable] = []
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    for path in args.files:
        table = table_of(path, args.cache_dir / f"{path.stem}.jsonl", scorer, seeds=args.seeds, weeks=args.weeks,
                         share=args.review_share, judge=args.judge)
        print("\n".join(table.lines), flush=True)
        tables.append(table)
    summary = [SUMMARY_HEAD, *(t.summary for t in tables)]
    print("\n".join(summary))
    if args.out is not None:
        body = ["## Summary", "", *summary, "", "## Week by week", "", *(line for t in tables for line in t.lines)]
        args.out.write_text("\n".join(body) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
