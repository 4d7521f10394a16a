"""The cascade of issue 19, leave-one-dataset-out: the small model, the larger one, and the two in a cascade.

    .venv/bin/python bench/cascade.py --large-bundle runs/mpnet-bundle --limit 100 \\
        --cache runs/cascade/small.jsonl --large-cache runs/cascade/large.jsonl --lexical-cache runs/cascade/lexical.jsonl

Both models score the same seeded sample of answers (--limit per dev file). Each stage's recipe (combiner and
thresholds at the target false-accept / false-reject rates) is fitted on the other families only; stage 2's on
the answers stage 1 escalates there (groundwire.train.cascade). Per family it prints the lexical baseline's LODO
AUROC beside each model's, each stage's routing alone, the cascade's false-accept, false-reject and escalation,
the share of answers that reach the larger model (its cost), and a control: the small model as its own second
stage, whose escalation shows what a second set of thresholds alone would buy. A cascade has no single score,
so it has no AUROC.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from groundwire.calibration import lodo
from groundwire.calibration.combine import ClaimRow
from groundwire.calibration.recipe import Fitted, fit_given, fit_recipe
from groundwire.calibration.thresholds import Routing
from groundwire.scoring.onnx import bundled_path
from groundwire.train.calibrate import features_for
from groundwire.train.cascade import accept_only, cascade_lodo
from lodo import DEV, lexical_scores


def _rate(value: float | None) -> str:
    return "  -  " if value is None else f"{float(value):5.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--small-bundle", type=Path, default=bundled_path())
    parser.add_argument("--large-bundle", type=Path, required=True, help="the larger model's exported bundle")
    parser.add_argument("--limit", type=int, default=100, help="answers per file (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=None, help="small model's claim features (JSONL), reused")
    parser.add_argument("--large-cache", type=Path, default=None, help="larger model's claim features, reused")
    parser.add_argument("--lexical-cache", type=Path, default=None)
    parser.add_argument("--recipe", choices=("mono", "v4", "model"), default="mono")
    parser.add_argument("--target-far", type=float, default=0.10)
    parser.add_argument("--target-frr", type=float, default=0.10)
    parser.add_argument("--stage-two", choices=("full", "accept-only"), default="full",
                        help="accept-only: stage 2 never rejects (its reject thresholds at 0)")
    parser.add_argument("--stage-one-share", type=float, default=1.0,
                        help="share of the FAR and FRR budgets stage 1 may spend; stage 2 gets the rest")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    paths = sorted(args.dev.glob("*.jsonl"))
    if not paths:
        parser.error(f"--dev {args.dev}: no *.jsonl files (the shared data's dev/ folder)")
    small = features_for(args.small_bundle, paths, limit=args.limit, cache=args.cache, seed=args.seed,
                         workers=args.workers)
    large = features_for(args.large_bundle, paths, limit=args.limit, cache=args.large_cache, seed=args.seed,
                         workers=args.workers)
    lex = lexical_scores(paths, args.limit, args.seed, args.lexical_cache)
    routing: Routing = {"target_far": args.target_far, "target_frr": args.target_frr}

    def fit(train: Sequence[ClaimRow], targets: Routing) -> Fitted:
        if args.recipe == "model":
            return fit_given(train, lambda r: r.answer_score, **targets)
        return fit_recipe(train, kind=args.recipe, **targets)

    lexical = lodo.lodo(small, lambda train: fit_given(train, lambda r: lex[(r.file, r.row_id)], **routing))
    small_in = lodo.in_sample(small, lambda train: fit(train, routing))
    large_in = lodo.in_sample(large, lambda train: fit(train, routing))
    second = accept_only(fit) if args.stage_two == "accept-only" else None
    figs = cascade_lodo(small, large, fit, routing, fit_second=second, first_share=args.stage_one_share)
    # The control: the small model as its own second stage. What the cascade gains over this is the larger
    # model's, not the second set of thresholds'.
    control = cascade_lodo(small, small, fit, routing, fit_second=second, first_share=args.stage_one_share)

    print(f"LODO, recipe '{args.recipe}' per stage, stage 2 {args.stage_two}, stage 1 spends {args.stage_one_share:.0%} of the budgets (targets: FAR {args.target_far:.0%}, FRR {args.target_frr:.0%}); "
          f"AUROC: lexical / small / large; routing: FAR FRR esc")
    print(f"{'family':18s} {'n':>4s} {'lex':>5s} {'small':>5s} {'large':>5s} | {'small FAR FRR esc':>17s} | "
          f"{'large FAR FRR esc':>17s} | {'cascade FAR FRR esc':>19s} | {'to large':>8s} | {'control esc':>11s}")
    for fam, f in figs.items():
        print(f"{fam:18s} {f.small['n']:4d} {_rate(lexical[fam]['auroc'])} {_rate(f.small['auroc'])} "
              f"{_rate(f.large['auroc'])} | {_rate(f.small['far'])} {_rate(f.small['frr'])} {_rate(f.small['esc'])} | "
              f"{_rate(f.large['far'])} {_rate(f.large['frr'])} {_rate(f.large['esc'])} | "
              f"{_rate(f.cascade['far'])} {_rate(f.cascade['frr'])} {_rate(f.cascade['esc'])}   | {f.sent_to_large:8.3f} | "
              f"{_rate(control[fam].cascade['esc']):>11s}")

    def mean(values: Sequence[float | None]) -> float:
        return float(np.mean([float(v or 0.0) for v in values]))

    fams = list(figs)
    summary = {
        "lexical_auroc": mean([lexical[f]["auroc"] for f in fams]),
        "small_auroc": mean([figs[f].small["auroc"] for f in fams]),
        "large_auroc": mean([figs[f].large["auroc"] for f in fams]),
        "small_auroc_in_sample": mean([small_in[f]["auroc"] for f in fams]),
        "large_auroc_in_sample": mean([large_in[f]["auroc"] for f in fams]),
        "small_esc": mean([figs[f].small["esc"] for f in fams]),
        "large_esc": mean([figs[f].large["esc"] for f in fams]),
        "cascade_esc": mean([figs[f].cascade["esc"] for f in fams]),
        "control_esc": mean([control[f].cascade["esc"] for f in fams]),
        "cascade_max_far": max(float(figs[f].cascade["far"] or 0.0) for f in fams),
        "cascade_max_frr": max(float(figs[f].cascade["frr"] or 0.0) for f in fams),
        "sent_to_large": mean([figs[f].sent_to_large for f in fams]),
    }
    print("cascade: " + ", ".join(f"{k} {v:.3f}" for k, v in summary.items()) + f"; families={len(fams)}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "families": {
            f: {"cascade": c.cascade, "small": c.small, "large": c.large, "sent_to_large": c.sent_to_large,
                "lexical": lexical[f]} for f, c in figs.items()}}, indent=2) + "\n")


if __name__ == "__main__":
    main()
