"""Leave-one-dataset-out (LODO) quality: the figure every model decision is made on.

    .venv/bin/python bench/lodo.py --cache runs/v9/features.jsonl --lexical-cache runs/v9/lexical.jsonl

For each dataset family (groundwire.calibration.families: RAGTruth qa / summary / data2text, HaluEval, WiCE,
SummEdits, BEGIN, LFQA, ExpertQA, HAGRID), every fitted thing -- the combiner, the routing thresholds, which
calibration keys get their own thresholds -- is fitted on the OTHER families and scored on this one
(groundwire.calibration.lodo). The lexical baseline is scored on the same rows, its thresholds fitted the same way,
and also at its shipped 0.8 / 0.2. Per family: AUROC, balanced accuracy (flag = not accepted, as `groundwire
eval`), false-accept (hallucinated answers routed ACCEPT), false-reject (faithful answers routed REJECT) and
escalation rates, and the in-sample figures (fitted on every row, the scored ones included) beside them.

Decided verdicts (`[verify] route = "decide"`, for users without a judge): for the shown recipe and the lexical
baseline, one threshold at the best balanced accuracy (evaluation.operating.decide_threshold) fitted on the other
families' answers as the recipe scores them, and per family its balanced accuracy, false-accept and false-reject
rates at it; then the threshold fitted on all rows (the `decide_at` a bundle's config.json would ship) with its
in-sample balanced accuracy, and the balanced accuracy HHEM-2.1 publishes on RAGTruth for comparison. All of it
goes to --json under "decide".

Recipes (--recipes): lexical; model (the verifier without a combiner); v4 (14 free features, per-task
combiners: the recipe shipped before); mono (sign-constrained, shape features left out: the shipped recipe).
Answers are a seeded sample of at most --limit per file, the same sample the feature cache holds.

Every recipe routes with the reject guard (`--reject-needs-finding`, default the bundle's: calibration v8 names
"data2text"): on those keys an answer is rejected only where a deciding check's finding stands against one of its
claims, and the scorer's low score alone escalates it (core.routing.Router.reject_needs_finding).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from groundwire.calibration import adapt, lodo
from groundwire.calibration.combine import ClaimRow, answers_of, sample_rows
from groundwire.calibration.recipe import Fitted, fit_given, fit_recipe
from groundwire.calibration.thresholds import Routing
from groundwire.config import CheckSettings
from groundwire.evaluation.evaluate import row_chunks
from groundwire.evaluation.operating import routing_rates, thresholds_for_targets
from groundwire.pipeline import build_verifier
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.calibrate import features_for
from shared_data import DEV


def lexical_scores(paths: Sequence[Path], limit: int | None, seed: int, cache: Path | None) -> dict[lodo.Key, float]:
    """The lexical baseline's answer score for the same seeded sample the feature cache holds."""
    if cache is not None and cache.is_file():
        records = [json.loads(line) for line in cache.read_text().splitlines()]
        if records and "score" not in records[0]:
            # bench/adapt_curve.py's --lexical-cache holds claim rows scored at other thresholds (0.5 / 0.1), and
            # the mid-band cap moves answer scores with the thresholds: reading it here would skew the baseline.
            sys.exit(f"--lexical-cache {cache}: not this script's cache ({{file, id, score}} per answer, the lexical "
                     "scorer at its shipped thresholds); it looks like bench/adapt_curve.py's claim rows. Give a new "
                     "path: this script writes it")
        return {(d["file"], d["id"]): d["score"] for d in records}
    verifier = build_verifier(CheckSettings(scorer="lexical"))
    out: dict[lodo.Key, float] = {}
    for path in paths:
        for row in sample_rows(path, limit, seed):
            report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
            out[(path.stem, row.id)] = float(report.score)
    if cache is not None:
        cache.write_text("".join(json.dumps({"file": f, "id": i, "score": s}) + "\n" for (f, i), s in out.items()))
    return out


def key_size_study(rows: Sequence[ClaimRow], sizes: Sequence[int], rounds: int = 200,
                   seed: int = 0) -> dict[int, dict[str, float]]:
    """How many answers per class a calibration key needs: within each family, set thresholds at the 10% / 10%
    targets on n hallucinated + n faithful answers (the model's own answer score), and measure the rates on the
    family's other answers. The 90th percentile over draws and families is the noise a key of that size adds."""
    rng = np.random.default_rng(seed)
    out = {}
    for n in sizes:
        fars, frrs = [], []
        for items in lodo.by_family(list(answers_of(rows).values())).values():
            y = np.array([r.hallucinated for r in items])
            s = np.array([r.answer_score for r in items])
            pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
            if min(len(pos), len(neg)) < n + 20:
                continue
            for _ in range(rounds // 10 + 1):
                fit_idx = np.concatenate([rng.choice(pos, n, replace=False), rng.choice(neg, n, replace=False)])
                rest = np.setdiff1d(np.arange(len(items)), fit_idx)
                accept_at, reject_at = thresholds_for_targets(y[fit_idx], s[fit_idx])
                rates = routing_rates(y[rest], s[rest], accept_at, reject_at)
                fars.append(rates.false_accept)
                frrs.append(rates.false_reject)
        if fars:
            out[n] = {"far_p90": float(np.quantile(fars, 0.9)), "frr_p90": float(np.quantile(frrs, 0.9)),
                      "draws": len(fars)}
    return out


def fmt(v: object) -> str:
    return "  n/a" if v is None else f"{float(v):5.3f}"  # type: ignore[arg-type]


def print_family_table(name: str, figs: dict, inside: dict, lexical: dict, lexical_shipped: dict) -> None:
    print(f"{'family':19s} {'n':>4s} | {'AUROC':>5s} {'lex':>5s} {'AUC-c':>5s} {'lex':>5s} | {'bacc':>5s} {'FAR':>5s} {'FRR':>5s} {'esc':>5s}"
          f" {'FAR0':>5s} | lex@LODO {'FAR':>5s} {'FRR':>5s} {'esc':>5s} | lex@.8/.2 {'FAR':>5s} {'FRR':>5s}"
          f" {'esc':>5s} | in-sample {'AUROC':>5s} {'FAR':>5s} {'FRR':>5s}")
    for fam in sorted(figs):
        f, lx, sl, i = figs[fam], lexical[fam], lexical_shipped[fam], inside[fam]
        print(f"{fam:19s} {f['n']:4d} | {fmt(f['auroc'])} {fmt(lx['auroc'])} {fmt(f['auroc_claims'])} "
              f"{fmt(lx['auroc_claims'])} | {fmt(f['bacc'])} {fmt(f['far'])} "
              f"{fmt(f['frr'])} {fmt(f['esc'])} {fmt(f['far_no_claims'])} | {'':8s} {fmt(lx['far'])} {fmt(lx['frr'])} "
              f"{fmt(lx['esc'])} | {'':9s} {fmt(sl['far'])} {fmt(sl['frr'])} {fmt(sl['esc'])} | {'':9s} "
              f"{fmt(i['auroc'])} {fmt(i['far'])} {fmt(i['frr'])}")
    print("AUC-c: AUROC on answers with a checkable claim. FAR0: hallucinated answers with no checkable claim,"
          " escalated since issue 56 (the claim rows cannot tell the refusals, which verify() accepts)")


def print_shipped_table(figs: dict, lexical_shipped: dict) -> None:
    """The bundle's shipped combiner and thresholds on these rows, nothing refitted (what a user gets today; in
    sample for the families the bundle was calibrated on), beside the lexical baseline at its shipped 0.8 / 0.2."""
    print("\nShipped calibration (the bundle's combiner and thresholds, nothing refitted) | lexical at 0.8 / 0.2")
    print(f"{'family':19s} {'n':>4s} | {'AUROC':>5s} {'FAR':>5s} {'FRR':>5s} {'esc':>5s} | {'AUROC':>5s} {'FAR':>5s} "
          f"{'FRR':>5s} {'esc':>5s}")
    for fam in sorted(figs):
        f, sl = figs[fam], lexical_shipped[fam]
        print(f"{fam:19s} {f['n']:4d} | {fmt(f['auroc'])} {fmt(f['far'])} {fmt(f['frr'])} {fmt(f['esc'])} | "
              f"{fmt(sl['auroc'])} {fmt(sl['far'])} {fmt(sl['frr'])} {fmt(sl['esc'])}")


HHEM_REFERENCE = {"model": "HHEM-2.1", "source": "published by Vectara", "ragtruth/qa": 0.743,
                  "ragtruth/summary": 0.644}
"""Balanced accuracy HHEM-2.1 publishes on RAGTruth, a decided (yes/no) detector: the comparison line."""


def decide_figures(rows: Sequence[ClaimRow], fit: Callable[[Sequence[ClaimRow]], Fitted]) -> dict[str, object]:
    """Decided verdicts for one recipe: per family, the decide threshold fitted LODO and the rates at it; and the
    threshold fitted on all rows (the value a bundle's config.json `decide_at` would ship) with its in-sample figures."""
    return {"lodo": lodo.decide_lodo(rows, fit), "in_sample": lodo.decide_in_sample(rows, fit)}


def print_decide_table(name: str, decided: dict, lexical: dict) -> None:
    print(f"\nDecided verdicts (route = \"decide\"), recipe '{name}' beside lexical: one threshold at the best balanced"
          " accuracy, fitted on the other families' answers")
    print(f"{'family':19s} {'n':>4s} | {'decide':>6s} {'bacc':>5s} {'FAR':>5s} {'FRR':>5s} | lexical {'decide':>6s} "
          f"{'bacc':>5s} {'FAR':>5s} {'FRR':>5s}")
    for fam in sorted(decided["lodo"]):
        f, lx = decided["lodo"][fam], lexical["lodo"][fam]
        print(f"{fam:19s} {f['n']:4d} | {f['decide_at']:6.4f} {fmt(f['bacc'])} {fmt(f['far'])} {fmt(f['frr'])} | "
              f"{'':7s} {lx['decide_at']:6.4f} {fmt(lx['bacc'])} {fmt(lx['far'])} {fmt(lx['frr'])}")
    print("FAR: hallucinated answers accepted; FRR: faithful answers rejected; nothing is escalated")
    inside, lexical_inside = decided["in_sample"], lexical["in_sample"]
    print(f"in-sample decide_at (fitted on all rows, the value to ship): {name} {inside['decide_at']:.4f} "
          f"(bacc {fmt(inside['all']['bacc'])}), lexical {lexical_inside['decide_at']:.4f} "
          f"(bacc {fmt(lexical_inside['all']['bacc'])})")
    ours = ", ".join(f"{fam} {fmt(decided['lodo'][fam]['bacc'])}" for fam in ("ragtruth/qa", "ragtruth/summary")
                     if fam in decided["lodo"])
    print(f"reference: {HHEM_REFERENCE['model']} publishes balanced accuracy {HHEM_REFERENCE['ragtruth/qa']:.3f} "
          f"(RAGTruth qa) and {HHEM_REFERENCE['ragtruth/summary']:.3f} (RAGTruth summary); "
          f"{name} decided LODO: {ours or 'n/a'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--bundle", type=Path, default=bundled_path())
    parser.add_argument("--limit", type=int, default=300, help="answers per file (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="processes collecting features")
    parser.add_argument("--cache", type=Path, default=None, help="claim-feature cache (JSONL), reused if present")
    parser.add_argument("--lexical-cache", type=Path, default=None, help="lexical answer scores, reused if present")
    parser.add_argument("--recipes", default="lexical,model,v4,mono,meaning")
    parser.add_argument("--show", default="mono", help="the recipe whose per-family table is printed")
    parser.add_argument("--target-far", type=float, default=0.10)
    parser.add_argument("--target-frr", type=float, default=0.10)
    parser.add_argument("--key-sizes", default="", help="e.g. 20,40,60,80,120: study the minimum key size")
    parser.add_argument("--canonical-figures", action=argparse.BooleanOptionalAction,
                        default=CheckSettings().canonical_figures,
                        help="the model and the overlap features read figures in one spelling (core.figures); the "
                             "default since calibration v6")
    parser.add_argument("--meaning", action=argparse.BooleanOptionalAction, default=True,
                        help="collect the meaning layer's features (core.meaning) with the others; the model line then "
                             "includes the paraphrase gate")
    parser.add_argument("--accept-margin", default=None,
                        help="cold start (issue 56): add this margin to every accept threshold, and let a key's own "
                             "lower accept threshold stand only where it holds leave-one-family-out; 'auto': each "
                             "recipe's own margin, the largest any family needed when left out (calibration.lodo."
                             "unseen_margin), with the nested LODO figure of that choice")
    parser.add_argument("--reject-needs-finding", default=None,
                        help="the reject guard (core.routing.Router.reject_needs_finding): calibration keys, comma-"
                             "separated, where REJECT needs a deciding check's finding, for every recipe; default: the "
                             "bundle's config.json; '': none (the rule before calibration v8)")
    parser.add_argument("--json", type=Path, default=None, help="also write all figures here")
    args = parser.parse_args()

    paths = sorted(args.dev.glob("*.jsonl"))
    rows = features_for(args.bundle, paths, limit=args.limit, cache=args.cache, seed=args.seed, workers=args.workers,
                        canonical_figures=args.canonical_figures, meaning=args.meaning)
    chosen = [name for name in args.recipes.split(",") if name]
    scored = [r for r in rows if r.claim_index >= 0]
    if "meaning" in chosen and scored and "meaning_similarity" not in scored[0].features:
        # A cache collected without the meaning layer (--no-meaning) would fit the meaning recipe on absent
        # features: its figures would be the mono recipe's under another name.
        sys.exit(f"--recipes names meaning, but the claim rows{f' in {args.cache}' if args.cache else ''} have no "
                 "meaning features (collected with --no-meaning): drop meaning from --recipes, or give a cache "
                 "collected with --meaning")
    lex = lexical_scores(paths, args.limit, args.seed, args.lexical_cache)
    routing: Routing = {"target_far": args.target_far, "target_frr": args.target_frr}
    shipped_calibration = OnnxScorer(args.bundle).calibration
    guard = (shipped_calibration.reject_needs_finding if args.reject_needs_finding is None
             else frozenset(key for key in args.reject_needs_finding.split(",") if key))
    print(f"reject guard (REJECT needs a deciding finding) on keys: {', '.join(sorted(guard)) or 'none'}")

    def recipe_at(name: str, margin: float | None) -> Callable[[Sequence[ClaimRow]], Fitted]:
        plain = recipe_without_guard(name, margin)
        return lambda train: replace(plain(train), reject_needs_finding=guard)

    def recipe_without_guard(name: str, margin: float | None) -> Callable[[Sequence[ClaimRow]], Fitted]:
        at: Routing = {**routing, "accept_margin": margin}
        return {
            "lexical": lambda train: fit_given(train, lambda r: lex[(r.file, r.row_id)], **at),
            "model": lambda train: fit_given(train, lambda r: r.answer_score, **at),
            "v4": lambda train: fit_recipe(train, kind="v4", **at),
            "mono": lambda train: fit_recipe(train, kind="mono", **at),
            "meaning": lambda train: fit_recipe(train, kind="meaning", **at),
        }[name]

    names = list(dict.fromkeys(["lexical", *chosen]))
    margins: dict[str, float | None] = {name: None for name in names}
    if args.accept_margin == "auto":
        print("Cold start: the accept margin each family needed when left out (and the nested LODO of that choice)")
        for name in names:
            needed = lodo.unseen_margin(rows, recipe_at(name, 0.0), args.target_far)
            margins[name] = max(needed.values())
            print(f"  {name:8s} margin {margins[name]:.4f}: " + ", ".join(f"{f} {m:.3f}" for f, m in needed.items()))
        for name in dict.fromkeys(["lexical", args.show if args.show in names else chosen[-1]]):
            nested = lodo.nested_margin_lodo(rows, lambda m, name=name: recipe_at(name, m), args.target_far)
            print(f"  nested LODO, {name}: " + "; ".join(
                f"{f} FAR {fmt(v['far'])} esc {fmt(v['esc'])} (margin {float(v['margin'] or 0):.3f})"
                for f, v in nested.items()))
            worst = max(float(v["far"] or 0) for v in nested.values())
            mean_esc = sum(float(v["esc"] or 0) for v in nested.values()) / len(nested)
            print(f"  nested LODO, {name}: max FAR {worst:.3f}, mean escalation {mean_esc:.3f}")
    elif args.accept_margin is not None:
        margins = {name: float(args.accept_margin) for name in names}
    recipes = {name: recipe_at(name, margins.get(name)) for name in ("lexical", "model", "v4", "mono", "meaning")}
    results = {name: {"lodo": lodo.lodo(rows, recipes[name]), "in_sample": lodo.in_sample(rows, recipes[name])}
               for name in dict.fromkeys(["lexical", *chosen])}
    lexical = results["lexical"]["lodo"]
    shipped = {fam: lodo.figures([lodo.Routed(fam, r.hallucinated, lex[(r.file, r.row_id)],
                                              0.8 if r.claim_index >= 0 else lodo.CLAIMLESS_ACCEPT_AT, 0.2,
                                              r.claim_index >= 0) for r in items])
               for fam, items in lodo.by_family(list(answers_of(rows).values())).items()}
    bundle_shipped = lodo.per_family(lodo.route(replace(adapt.shipped(shipped_calibration), reject_needs_finding=guard),
                                                rows))

    show = args.show if args.show in results else chosen[-1]
    print(f"LODO, recipe '{show}' (targets: false accept {args.target_far:.0%}, false reject {args.target_frr:.0%})")
    print_family_table(show, results[show]["lodo"], results[show]["in_sample"], lexical, shipped)
    print(f"\n{'recipe':8s} {'AUROC lodo':>10s} {'in-sample':>9s} {'gap':>6s} {'>=lex':>6s} {'maxFAR':>6s} "
          f"{'maxFRR':>6s} {'>15%':>4s} {'esc':>5s} {'RT bacc':>7s} {'RT esc':>6s}")
    summaries = {}
    for name in results:
        s = lodo.summary(results[name]["lodo"], lexical)
        s_in = lodo.summary(results[name]["in_sample"], lexical)
        summaries[name] = {"lodo": s, "in_sample": s_in}
        print(f"{name:8s} {s['mean_auroc']:10.3f} {s_in['mean_auroc']:9.3f} {s_in['mean_auroc'] - s['mean_auroc']:6.3f} "
              f"{s['families_at_or_above_lexical']:3d}/{s['families']:<2d} {s['max_far']:6.3f} {s['max_frr']:6.3f} "
              f"{s['families_over_limit']:4d} {s['mean_esc']:5.3f} {s['ragtruth_macro_bacc']:7.3f} {s['ragtruth_esc']:6.3f}")
    decide = {name: decide_figures(rows, recipes[name]) for name in dict.fromkeys(["lexical", show])}
    print_decide_table(show, decide[show], decide["lexical"])
    print_shipped_table(bundle_shipped, shipped)
    study = key_size_study(rows, [int(n) for n in args.key_sizes.split(",")]) if args.key_sizes else {}
    if study:
        print("\nkey size (answers per class) -> 90th percentile of held-out rates at 10% / 10% targets")
        for n, v in study.items():
            print(f"  {n:4d}: FAR p90 {v['far_p90']:.3f}  FRR p90 {v['frr_p90']:.3f}  ({v['draws']} draws)")
    if args.json:
        args.json.write_text(json.dumps({"reject_needs_finding": sorted(guard),
                                         "results": results, "lexical_at_shipped_thresholds": shipped,
                                         "bundle_shipped": bundle_shipped,
                                         "summaries": summaries, "key_sizes": study, "routing": routing,
                                         "decide": {"recipes": decide, "reference": HHEM_REFERENCE}},
                                        indent=2) + "\n")
    s = summaries[show]["lodo"]
    print(f"lodo: {show} mean AUROC {s['mean_auroc']:.3f} (in-sample {summaries[show]['in_sample']['mean_auroc']:.3f}),"
          f" >= lexical on {s['families_at_or_above_lexical']}/{s['families']} families, max FAR {s['max_far']:.3f},"
          f" max FRR {s['max_frr']:.3f}, mean escalation {s['mean_esc']:.3f}; RAGTruth macro bacc "
          f"{s['ragtruth_macro_bacc']:.3f}, escalation {s['ragtruth_esc']:.3f}; n_answers={len(answers_of(rows))}")


if __name__ == "__main__":
    main()
