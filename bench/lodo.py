"""Leave-one-dataset-out (LODO) quality: the figure every model decision is made on.

    .venv/bin/python bench/lodo.py --cache runs/v9/features.jsonl --lexical-cache runs/v9/lexical.jsonl

For each dataset family (groundwire.train.families: RAGTruth qa / summary / data2text, HaluEval, WiCE,
SummEdits, BEGIN, LFQA, ExpertQA, HAGRID), every fitted thing -- the combiner, the routing thresholds, which
calibration keys get their own thresholds -- is fitted on the OTHER families and scored on this one. The
lexical baseline is scored on the same rows, with its thresholds fitted the same way (and at its shipped
0.8 / 0.2). Per family it prints AUROC, balanced accuracy, and the routing rates at the fitted thresholds:
false-accept (hallucinated answers routed ACCEPT), false-reject (faithful answers routed REJECT) and
escalation. The in-sample figure (everything fitted on all rows, scored on the same rows) is printed beside
LODO; the gap is what a choice made on the scored rows would overstate.

Recipes (--recipes): lexical; model (the verifier without a combiner); v4 (the v4 recipe: 14 free features,
per-task combiners); mono (sign-constrained, shape features left out, strong L2: the shipped recipe).
Answers are a seeded sample of at most --limit per file, the same sample the feature cache holds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from groundwire.core.verifier import Verifier  # noqa: E402
from groundwire.data.rows import read_eval_jsonl  # noqa: E402
from groundwire.evaluation.evaluate import row_chunks  # noqa: E402
from groundwire.evaluation.metrics import detection_metrics  # noqa: E402
from groundwire.evaluation.operating import routing_rates  # noqa: E402
from groundwire.scoring.onnx import bundled_path  # noqa: E402
from groundwire.train import combine  # noqa: E402
from groundwire.train.calibrate import features_for  # noqa: E402
from groundwire.train.families import family  # noqa: E402
from groundwire.train.recipe import Fitted, fit_recipe  # noqa: E402
from groundwire.train.thresholds import AnswerPoint, fit_key_thresholds, lookup  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev"
Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Scored:
    """One held-out answer as a recipe routes it."""
    family: str
    hallucinated: bool
    score: float
    accept_at: float
    reject_at: float


def lexical_scores(paths: Sequence[Path], limit: int | None, seed: int, cache: Path | None) -> dict[Key, float]:
    """The lexical baseline's answer score for the same seeded sample the feature cache holds."""
    if cache is not None and cache.is_file():
        return {(d["file"], d["id"]): d["score"] for d in map(json.loads, cache.read_text().splitlines())}
    verifier = Verifier("lexical")
    out: dict[Key, float] = {}
    for path in paths:
        rows = [r for r in read_eval_jsonl(path) if r.hallucinated is not None]
        if limit is not None and len(rows) > limit:
            rows = random.Random(seed).sample(rows, limit)
        for row in rows:
            report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
            out[(path.stem, row.id)] = float(report.score)
    if cache is not None:
        cache.write_text("".join(json.dumps({"file": f, "id": i, "score": s}) + "\n" for (f, i), s in out.items()))
    return out


def answers_of(rows: Sequence[combine.ClaimRow]) -> dict[Key, combine.ClaimRow]:
    return {(r.file, r.row_id): r for r in reversed(rows)}


def fixed_score_recipe(scores: Callable[[combine.ClaimRow], float]) -> Callable[..., Fitted]:
    """A recipe with nothing to fit but its thresholds: the answer score is given (lexical, model alone)."""

    def fit(train: Sequence[combine.ClaimRow], **options: object) -> Fitted:
        points = [AnswerPoint(r.key, family(r.file, r.task), r.hallucinated, scores(r))
                  for r in answers_of(train).values()]
        pooled, by_key = fit_key_thresholds(points, **options)  # type: ignore[arg-type]
        return Fitted(None, pooled, by_key, answer_score=lambda rows: {
            k: scores(r) for k, r in answers_of(rows).items()})

    return fit


def route(fitted: Fitted, rows: Sequence[combine.ClaimRow]) -> list[Scored]:
    scores = fitted.score_answers(rows)
    out = []
    for key, r in answers_of(rows).items():
        accept_at, reject_at = lookup(r.key, fitted.pooled, fitted.by_key)
        out.append(Scored(family(r.file, r.task), r.hallucinated, scores[key], accept_at, reject_at))
    return out


def figures(items: Sequence[Scored]) -> dict[str, float | None]:
    y = [a.hallucinated for a in items]
    s = [a.score for a in items]
    m = detection_metrics(y, s, [a.score < a.accept_at for a in items])
    rates = routing_rates(y, s, [a.accept_at for a in items], [a.reject_at for a in items])
    return {"n": len(items), "auroc": m.auroc, "bacc": m.balanced_accuracy, "far": rates.false_accept,
            "frr": rates.false_reject, "esc": rates.escalated}


def lodo(rows: Sequence[combine.ClaimRow], fit: Callable[..., Fitted], **options: object) -> dict[str, dict]:
    by_family: dict[str, list[combine.ClaimRow]] = defaultdict(list)
    for r in rows:
        by_family[family(r.file, r.task)].append(r)
    out = {}
    for held_out, test in sorted(by_family.items()):
        train = [r for r in rows if family(r.file, r.task) != held_out]
        out[held_out] = figures(route(fit(train, **options), test))
    return out


def in_sample(rows: Sequence[combine.ClaimRow], fit: Callable[..., Fitted], **options: object) -> dict[str, dict]:
    scored = route(fit(rows, **options), rows)
    by_family: dict[str, list[Scored]] = defaultdict(list)
    for a in scored:
        by_family[a.family].append(a)
    return {f: figures(items) for f, items in sorted(by_family.items())}


def summary(lodo_figs: dict[str, dict], lexical_figs: dict[str, dict]) -> dict[str, float]:
    fams = sorted(lodo_figs)
    rt = [f for f in fams if f.startswith("ragtruth/")]
    auc = [lodo_figs[f]["auroc"] for f in fams]
    return {
        "mean_auroc": float(np.mean(auc)),
        "families_at_or_above_lexical": sum(lodo_figs[f]["auroc"] >= lexical_figs[f]["auroc"] - 1e-9 for f in fams),
        "families": len(fams),
        "max_far": max(lodo_figs[f]["far"] for f in fams),
        "max_frr": max(lodo_figs[f]["frr"] for f in fams),
        "mean_esc": float(np.mean([lodo_figs[f]["esc"] for f in fams])),
        "ragtruth_macro_bacc": float(np.mean([lodo_figs[f]["bacc"] for f in rt])) if rt else float("nan"),
        "ragtruth_esc": float(np.mean([lodo_figs[f]["esc"] for f in rt])) if rt else float("nan"),
    }


def fmt(v: float | None, width: int = 5) -> str:
    return f"{'n/a':>{width}s}" if v is None else f"{v:{width}.3f}"


def key_size_study(rows: Sequence[combine.ClaimRow], score: Callable[[combine.ClaimRow], float],
                   sizes: Sequence[int], rounds: int = 200, seed: int = 0) -> dict[int, dict[str, float]]:
    """How many answers per class a key needs: per family, draw n hallucinated + n faithful answers, set the
    thresholds on them at the targets, and measure the rates on the family's other answers. Reports the 90th
    percentile of the achieved false-accept and false-reject rates over draws and families."""
    from groundwire.evaluation.operating import thresholds_for_targets

    rng = np.random.default_rng(seed)
    by_family: dict[str, list[combine.ClaimRow]] = defaultdict(list)
    for r in answers_of(rows).values():
        by_family[family(r.file, r.task)].append(r)
    out = {}
    for n in sizes:
        fars, frrs = [], []
        for items in by_family.values():
            y = np.array([r.hallucinated for r in items])
            s = np.array([score(r) for r in items])
            pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
            if min(len(pos), len(neg)) < n + 20:
                continue
            for _ in range(rounds // len(by_family) + 1):
                fit_idx = np.concatenate([rng.choice(pos, n, replace=False), rng.choice(neg, n, replace=False)])
                rest = np.setdiff1d(np.arange(len(items)), fit_idx)
                a, r_ = thresholds_for_targets(y[fit_idx], s[fit_idx])
                rates = routing_rates(y[rest], s[rest], a, r_)
                fars.append(rates.false_accept)
                frrs.append(rates.false_reject)
        if fars:
            out[n] = {"far_p90": float(np.quantile(fars, 0.9)), "frr_p90": float(np.quantile(frrs, 0.9)),
                      "draws": len(fars)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--bundle", type=Path, default=bundled_path())
    parser.add_argument("--limit", type=int, default=300, help="answers per file (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None, help="claim-feature cache (JSONL), reused if present")
    parser.add_argument("--lexical-cache", type=Path, default=None, help="lexical answer scores, reused if present")
    parser.add_argument("--recipes", default="lexical,model,v4,mono")
    parser.add_argument("--show", default="mono", help="the recipe whose per-family table is printed")
    parser.add_argument("--target-far", type=float, default=0.10)
    parser.add_argument("--target-frr", type=float, default=0.10)
    parser.add_argument("--key-sizes", default="", help="e.g. 20,40,60,80,120: study the minimum key size")
    parser.add_argument("--json", type=Path, default=None, help="also write all figures here")
    args = parser.parse_args()

    paths = sorted(args.dev.glob("*.jsonl"))
    rows = features_for(args.bundle, paths, limit=args.limit, cache=args.cache, seed=args.seed, workers=2)
    lex = lexical_scores(paths, args.limit, args.seed, args.lexical_cache)
    options = {"target_far": args.target_far, "target_frr": args.target_frr}
    recipes: dict[str, Callable[..., Fitted]] = {
        "lexical": fixed_score_recipe(lambda r: lex[(r.file, r.row_id)]),
        "model": fixed_score_recipe(lambda r: r.answer_score),
        "v4": lambda train, **o: fit_recipe(train, kind="v4", **o),
        "mono": lambda train, **o: fit_recipe(train, kind="mono", **o),
    }
    chosen = [name for name in args.recipes.split(",") if name]
    results = {name: {"lodo": lodo(rows, recipes[name], **options), "in_sample": in_sample(rows, recipes[name],
                                                                                         **options)}
               for name in chosen}
    lexical_lodo = results["lexical"]["lodo"] if "lexical" in results else lodo(rows, recipes["lexical"], **options)

    # Lexical at its shipped thresholds (0.8 / 0.2), on the same rows.
    shipped_lex = {}
    for fam in sorted(lexical_lodo):
        items = [Scored(fam, r.hallucinated, lex[k], 0.8, 0.2) for k, r in answers_of(rows).items()
                 if family(r.file, r.task) == fam]
        shipped_lex[fam] = figures(items)

    show = args.show if args.show in results else chosen[-1]
    fig, ins = results[show]["lodo"], results[show]["in_sample"]
    print(f"LODO, recipe '{show}' (targets: false-accept {args.target_far:.0%}, false-reject {args.target_frr:.0%})")
    head = (f"{'family':20s} {'n':>4s} | {'AUROC':>5s} {'lex':>5s} | {'bacc':>5s} {'FAR':>5s} {'FRR':>5s} {'esc':>5s} |"
            f" lexical@LODO {'FAR':>5s} {'FRR':>5s} {'esc':>5s} | lex@0.8/0.2 {'FAR':>5s} {'FRR':>5s} {'esc':>5s} |"
            f" in-sample {'AUROC':>5s} {'FAR':>5s} {'FRR':>5s}")
    print(head)
    for fam in sorted(fig):
        f, lx, sl, i = fig[fam], lexical_lodo[fam], shipped_lex[fam], ins[fam]
        print(f"{fam:20s} {f['n']:4d} | {fmt(f['auroc'])} {fmt(lx['auroc'])} | {fmt(f['bacc'])} {fmt(f['far'])} "
              f"{fmt(f['frr'])} {fmt(f['esc'])} | {'':12s} {fmt(lx['far'])} {fmt(lx['frr'])} {fmt(lx['esc'])} | "
              f"{'':11s} {fmt(sl['far'])} {fmt(sl['frr'])} {fmt(sl['esc'])} | {'':9s} {fmt(i['auroc'])} "
              f"{fmt(i['far'])} {fmt(i['frr'])}")
    print()
    print(f"{'recipe':10s} {'AUROC lodo':>10s} {'in-sample':>9s} {'gap':>6s} {'>=lex':>6s} {'maxFAR':>6s} "
          f"{'maxFRR':>6s} {'esc':>5s} {'RT bacc':>7s} {'RT esc':>6s}")
    summaries = {}
    for name in chosen:
        s = summary(results[name]["lodo"], lexical_lodo)
        s_in = summary(results[name]["in_sample"], lexical_lodo)
        summaries[name] = {"lodo": s, "in_sample": s_in}
        print(f"{name:10s} {s['mean_auroc']:10.3f} {s_in['mean_auroc']:9.3f} {s_in['mean_auroc'] - s['mean_auroc']:6.3f} "
              f"{s['families_at_or_above_lexical']:3d}/{s['families']:<2d} {s['max_far']:6.3f} {s['max_frr']:6.3f} "
              f"{s['mean_esc']:5.3f} {s['ragtruth_macro_bacc']:7.3f} {s['ragtruth_esc']:6.3f}")
    study = {}
    if args.key_sizes:
        study = key_size_study(rows, lambda r: r.answer_score, [int(n) for n in args.key_sizes.split(",")])
        print("\nkey size (answers per class) -> 90th percentile of held-out rates at 10%/10% targets")
        for n, v in study.items():
            print(f"  {n:4d}: FAR p90 {v['far_p90']:.3f}  FRR p90 {v['frr_p90']:.3f}  ({v['draws']} draws)")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "lexical_shipped": shipped_lex,
                                         "summaries": summaries, "key_sizes": study, "options": options},
                                        indent=2) + "\n")
    s = summaries.get(show, {}).get("lodo", {})
    if s:
        print(f"lodo: {show} mean AUROC {s['mean_auroc']:.3f}, >= lexical on {s['families_at_or_above_lexical']}/"
              f"{s['families']} families, max FAR {s['max_far']:.3f}, max FRR {s['max_frr']:.3f}, mean escalation "
              f"{s['mean_esc']:.3f}; RAGTruth macro bacc {s['ragtruth_macro_bacc']:.3f}, escalation "
              f"{s['ragtruth_esc']:.3f}; n_answers={len(answers_of(rows))}")


if __name__ == "__main__":
    main()
