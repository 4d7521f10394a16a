"""Quality per dev file and per ragtruth task: lexical baseline / model alone / full verifier / hybrid.

    .venv/bin/python bench/quality.py --limit 300 --cache runs/features.jsonl

- lexical:  Verifier("lexical") at its default thresholds (the floor to beat).
- model:    the bundled model alone: min over claims of the raw support, at the bundle's model_accept_at.
- verifier: the full verifier without the combiner (support after the deterministic checks).
- hybrid:   the combiner (one per task type with enough answers, plus a pooled one), cross-validated with
            folds grouped by source document (out-of-fold scores, each fold's per-task thresholds chosen on
            its training folds): the honest figure.
- shipped:  the shipped combiner and default thresholds on the same rows (in-sample: it was fitted on them).
Answers are a seeded sample of at most --limit per file. The last line is a one-line summary.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from groundwire.core.combiner import load_combiner  # noqa: E402
from groundwire.data.rows import read_eval_jsonl  # noqa: E402
from groundwire.evaluation.evaluate import evaluate  # noqa: E402
from groundwire.evaluation.metrics import auroc_interval  # noqa: E402
from groundwire.scoring.onnx import bundled_path  # noqa: E402
from groundwire.train import combine  # noqa: E402
from groundwire.train.calibrate import features_for  # noqa: E402
from groundwire.core.verifier import Verifier  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev"


def sample(path: Path, limit: int | None, seed: int) -> list:
    rows = [r for r in read_eval_jsonl(path) if r.hallucinated is not None]
    return random.Random(seed).sample(rows, limit) if limit is not None and len(rows) > limit else rows


def lexical_report(paths: list[Path], limit: int | None, seed: int) -> dict[str, dict]:
    verifier = Verifier("lexical")
    out: dict[str, dict] = {}
    for path in paths:
        summary = evaluate(sample(path, limit, seed), verifier, file=path.stem)
        out[path.stem] = summary.overall.to_dict()
        if len(summary.per_task) > 1:
            out.update({f"{path.stem}/{t}": m.to_dict() for t, m in summary.per_task.items()})
    return out


def shipped_report(rows: list[combine.ClaimRow], bundle: Path) -> dict[str, dict]:
    """The bundle's combiner and thresholds per calibration key, with verify()'s check caps."""
    config = json.loads((bundle / "config.json").read_text())
    if not config.get("combiner"):
        return {}
    comb = load_combiner(bundle / config["combiner"])
    pooled = (config["accept_at"], config["reject_at"])
    by_key = {key: tuple(pair) for key, pair in config.get("task_thresholds", {}).items()}
    scores = combine.checked_scores(rows, combine.claim_scores(comb, rows), lambda key: by_key.get(key, pooled))
    answers = combine.answer_scores(rows, scores)
    first = {(r.file, r.row_id): r for r in reversed(rows)}
    return combine.report([combine.AnswerScore(first[k].file, first[k].task, first[k].hallucinated, s,
                                               s >= by_key.get(first[k].key, pooled)[0])
                           for k, s in answers.items()])


def fmt(m: dict | None) -> str:
    if not m:
        return "   -     -     -  "
    f = lambda v: " n/a " if v is None else f"{v:.3f}"  # noqa: E731
    return f"{f(m['auroc'])} {f(m['balanced_accuracy'])} {f(m['f1_hallucinated'])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--bundle", type=Path, default=bundled_path())
    parser.add_argument("--limit", type=int, default=300, help="answers per file (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None, help="claim-feature cache (JSONL), reused if present")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="also write all figures here")
    args = parser.parse_args()

    paths = sorted(args.dev.glob("*.jsonl"))
    config = json.loads((args.bundle / "config.json").read_text())
    rows = features_for(args.bundle, paths, limit=args.limit, cache=args.cache, seed=args.seed)
    model_t = float(config.get("model_accept_at", 0.5))
    cv = combine.cross_validate(rows, folds=args.folds)
    results = {
        "lexical": lexical_report(paths, args.limit, args.seed),
        "model": combine.report(combine.model_only_scores(rows, model_t)),
        "verifier": combine.report(combine.verifier_scores(rows, model_t)),
        "hybrid_cv": combine.report(cv),
        "shipped": shipped_report(rows, args.bundle),
    }
    # How far each RAGTruth task's figure can move by chance: qa has 53 answers, 5 of them hallucinated.
    intervals = {task: auroc_interval([a.hallucinated for a in cv if a.file == "ragtruth_dev" and a.task == task],
                                      [a.score for a in cv if a.file == "ragtruth_dev" and a.task == task])
                 for task in sorted({a.task for a in cv if a.file == "ragtruth_dev"})}
    systems = list(results)
    print(f"{'file / task':28s} " + " ".join(f"{s:^17s}" for s in systems))
    print(f"{'':28s} " + " ".join(f"{'auroc  bacc  f1':^17s}" for _ in systems))
    keys = sorted(set().union(*[set(r) for r in results.values()]))
    for key in keys:
        print(f"{key:28s} " + " ".join(fmt(results[s].get(key)) for s in systems))
    for task, interval in intervals.items():
        if interval:
            print(f"ragtruth_dev/{task}: hybrid_cv auroc 95% bootstrap interval {interval[0]:.3f}-{interval[1]:.3f}")
    if args.json:
        args.json.write_text(json.dumps({**results, "hybrid_cv_auroc_interval": intervals}, indent=2))

    files = [k for k in keys if "/" not in k]
    beat_auc = sum((results["hybrid_cv"][k]["auroc"] or 0) > (results["lexical"][k]["auroc"] or 0) for k in files)
    beat_ba = sum((results["hybrid_cv"][k]["balanced_accuracy"] or 0) > (results["lexical"][k]["balanced_accuracy"] or 0)
                  for k in files)
    tasks = [k for k in keys if k.startswith("ragtruth_dev/")]
    rt = results["hybrid_cv"]
    task_auc = " ".join(f"{k.split('/')[1]}={rt[k]['auroc']:.3f}" for k in tasks)
    macro_ba = np.mean([rt[k]["balanced_accuracy"] for k in tasks]) if tasks else float("nan")
    print(f"quality: hybrid_cv beats lexical on auroc {beat_auc}/{len(files)} files, balanced_accuracy "
          f"{beat_ba}/{len(files)}; ragtruth cv auroc {task_auc}; ragtruth macro balanced_accuracy={macro_ba:.3f}; "
          f"n_answers={len({(r.file, r.row_id) for r in rows})} limit={args.limit}")


if __name__ == "__main__":
    main()
