"""Issue 56 item 6's tables: `bench/learning_loop.py` on every file given, teach against arrival order, human
against judge labels, week by week, and what thresholds fitted on all of a file's labels reach.

    .venv/bin/python bench/learning_table.py ../shared/data/dev/*.jsonl --cache-dir runs/loop --seeds 5 \
        --out results/learning_loop.md

Each file's claim features are collected once into `--cache-dir/<file stem>.jsonl` (the same cache
`bench/learning_loop.py --cache` reads). A quarter of each week is reviewed (`--review-share`), as issue 56's target
asks. For each file it prints, then writes as markdown:

- the week-by-week means over `--seeds` of escalation, false accept and false reject for teach/human,
  arrival/human, teach/judge:P and arrival/judge:P (`--judge`, default 0.1; its labels weigh `--judge-weight`, as
  `serve --judge-labels` keeps them), each week's rates measured on answers routed before their labels were seen
  (learning_loop.run);
- `reachable`: thresholds fitted on all the file's labels, cross-validated by source (adapt's own figure, with its
  90% confidence margin): the escalation a profile could reach on this family at the targets. Issue 56's week-6
  target (escalation <= 0.40 at false accept and false reject <= 0.10) applies where this reaches it;
- the week by which teach order reaches arrival order's week-6 escalation (`teach_catches_up`).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from groundwire.calibration import combine
from groundwire.calibration.adapt import DEFAULT_JUDGE_WEIGHT, Targets, shipped
from groundwire.calibration.guard import guarded_refit
from groundwire.foundation.errors import InputError
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.calibrate import features_for
from learning_loop import Week, run

ARMS = (("teach", "human"), ("arrival", "human"), ("teach", "judge"), ("arrival", "judge"))


@dataclass(frozen=True, slots=True)
class Reach:
    escalation: float | None
    far: float | None
    frr: float | None
    why_not: str | None = None


def reachable(rows: Sequence[combine.ClaimRow], scorer: OnnxScorer) -> Reach:
    """Thresholds fitted on every label of the file, cross-validated by source (adapt's validation)."""
    base = shipped(scorer.calibration)
    try:
        refit = guarded_refit(rows, base, base, targets=Targets(), base_model=scorer.model_id,
                              calibration=scorer.calibration)
    except InputError as error:
        return Reach(None, None, None, str(error).split(":")[0])
    if refit.adapted is None:
        return Reach(None, None, None, refit.reason.split(":")[0])
    figures = refit.adapted.validation["profile"]
    value = lambda name: figures[name]["value"]  # noqa: E731
    return Reach(value("escalated"), value("false_accept"), value("false_reject"))


def means(runs: Sequence[Sequence[Week]]) -> list[tuple[float, float, float]]:
    weeks = min(len(r) for r in runs)
    return [(statistics.fmean(r[w].escalation for r in runs), statistics.fmean(r[w].far for r in runs),
             statistics.fmean(r[w].frr for r in runs)) for w in range(weeks)]


def catches_up(teach: Sequence[tuple[float, float, float]], arrival: Sequence[tuple[float, float, float]]) -> int | None:
    """The first week whose teach-order escalation is at or below arrival order's last week's."""
    target = arrival[-1][0]
    return next((w + 1 for w, (esc, _, _) in enumerate(teach) if esc <= target + 1e-9), None)


def cell(figure: tuple[float, float, float]) -> str:
    return f"{figure[0]:.2f} / {figure[1]:.2f} / {figure[2]:.2f}"


def table_of(path: Path, cache: Path, scorer: OnnxScorer, *, seeds: int, weeks: int, share: float,
             judge: float, judge_weight: float, judge_error: float) -> list[str]:
    rows = [r for r in features_for(bundled_path(), [path], limit=None, cache=cache) if r.file == path.stem]
    n = len(combine.answers_of(rows))
    per_week = min(200, n // 6)
    reviews = max(1, round(per_week * share))
    base = shipped(scorer.calibration)
    arms = {}
    for order, labels in ARMS:
        noise = judge if labels == "judge" else None  # None: a reviewer's labels
        arms[(order, labels)] = means([run(rows, base, scorer, per_week=per_week, weeks=weeks, reviews=reviews,
                                           order=order, noise=noise, seed=s, targets=Targets(),
                                           judge_weight=judge_weight, judge_error=judge_error)
                                       for s in range(seeds)])
    reach = reachable(rows, scorer)
    head = (f"### {path.stem}: {n} answers, {per_week} a week, {reviews} reviewed a week, {seeds} seeds\n\n"
            f"escalation / false accept / false reject of each week's answers, routed before their labels were "
            f"seen (means over seeds)\n")
    judged = f"judge:{judge:g} (weight {judge_weight:g}" + (f", error {judge_error:g} corrected)" if judge_error else ")")
    lines = [head, f"| week | teach, human | arrival, human | teach, {judged} | arrival, {judged} |",
             "|---|---|---|---|---|"]
    for w in range(len(arms[ARMS[0]])):
        lines.append(f"| {w + 1} | " + " | ".join(cell(arms[arm][w]) for arm in ARMS) + " |")
    if reach.escalation is None:
        reach_text = f"not reachable ({reach.why_not})"
    else:
        reach_text = f"escalation {reach.escalation:.2f} at false accept {reach.far:.2f}, false reject {reach.frr:.2f}"
    last = arms[("teach", "human")][-1]
    met = last[0] <= 0.40 and last[1] <= 0.10 and last[2] <= 0.10
    worst_far = max(f for arm in ARMS for _, f, _ in arms[arm])
    judge_cost = arms[("teach", "judge")][-1][0] - last[0]
    lines += ["", f"- reachable (fitted on all {n} labels, cross-validated by source): {reach_text}",
              f"- week-6 target (teach, human: escalation <= 0.40, false accept and false reject <= 0.10): "
              f"{'met' if met else 'not met'} ({cell(last)})",
              f"- teach reaches arrival's last-week escalation ({arms[('arrival', 'human')][-1][0]:.2f}) in week "
              f"{catches_up(arms[('teach', 'human')], arms[('arrival', 'human')]) or '-'}",
              f"- judge:{judge:g} costs {judge_cost:+.2f} of last-week escalation against human labels; "
              f"worst weekly mean false accept over all four arms {worst_far:.2f}", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+", help="labelled grounding-eval JSONL files")
    parser.add_argument("--cache-dir", type=Path, required=True, help="per-file claim-feature caches")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--weeks", type=int, default=6)
    parser.add_argument("--review-share", type=float, default=0.25, help="share of each week's answers reviewed")
    parser.add_argument("--judge", type=float, default=0.1, help="the simulated judge's error rate")
    parser.add_argument("--judge-weight", type=float, default=DEFAULT_JUDGE_WEIGHT,
                        help="what a judge's label counts against a person's (serve --judge-weight)")
    parser.add_argument("--judge-error", type=float, default=0.0,
                        help="the judge error rate the fit corrects for (serve --judge-error)")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables here (markdown)")
    args = parser.parse_args()
    scorer = OnnxScorer(bundled_path())
    out: list[str] = []
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    for path in args.files:
        lines = table_of(path, args.cache_dir / f"{path.stem}.jsonl", scorer, seeds=args.seeds, weeks=args.weeks,
                         share=args.review_share, judge=args.judge, judge_weight=args.judge_weight,
                         judge_error=args.judge_error)
        print("\n".join(lines), flush=True)
        out += lines
    if args.out is not None:
        args.out.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
