"""Learning curves of domain profiles (`groundwire adapt`): how many labels a deployment needs.

    .venv/bin/python bench/adapt_curve.py --cache runs/adapt/features.jsonl --lexical-cache runs/adapt/lexical.jsonl

For every dev family (groundwire.calibration.families), draw n = 25, 50, 100, 200 and 400 labelled answers, --draws
times, whole source documents at a time (an answer's group is its first context chunk, calibration.combine), so that
no test answer shares a source document with its draw; adapt on the draw exactly as `groundwire adapt` does
(calibration.adapt.adapt_rows: the count rule, the cross-validated refusal, then the fit) and route the rest of the
family. A draw adapt refuses is routed by the shipped calibration, as the user would be, and counted as refused.
Recipes: shipped (the bundle's calibration, no labels), thresholds (only the thresholds refitted), combiner (the
combiner refitted toward the shipped one, then the thresholds), and the lexical baseline at its default 0.8 / 0.2
and with its thresholds adapted the same way. Per (family, n, recipe): mean AUROC, false-accept, false-reject and
escalation rates over the draws, and how many draws adapt refused.

Every dev answer is scored once: the bundled model's claim features are cached (train.calibrate.features_for, the
cache bench/lodo.py reads), the lexical baseline's too; fitting is then cheap.

    --time: the fit on 200 answers' cached features per family (cross-validation included) and the load of the
    profile it writes; with --time-adapt FILE also `adapt` on FILE's first 200 labelled answers, scoring included
    (with --fine-tune: `adapt --fine-tune`, and the load of its profile with the model).

The fine-tuned recipe ("finetune": thresholds + combiner + a fine-tune of the model, `adapt --fine-tune`) costs
minutes of CPU per draw, so it has its own run:

    .venv/bin/python bench/adapt_curve.py --cache C --lexical-cache L --fine-tune-cells runs/adapt/finetune.jsonl \
        --sizes 200 --draws 2 [--test-cap 300]

Per (family, n, draw): the draw is adapted exactly as `groundwire adapt --fine-tune` does
(train.adapt_tuned.adapt_tuned: the base model's check, the count rule, the fine-tune redone in each of its folds,
the cross-validated refusal, the final tune), and the rest of the family (at most --test-cap answers of it, a seeded
sample, the same rows for every recipe) is checked with the fine-tuned model and routed by the profile; every other
recipe is figured on the same test answers from the caches. Each cell is appended to the JSONL as it finishes (a
killed run keeps them); --table-from JSONL prints the table from it. LFQA is evaluation-only (calibration.families):
no model is tuned on it.
--claim-rule prints how often the answer-label claim rule (train.finetune) picks a claim a gold span overlaps, on
the span-annotated files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from groundwire.calibration import combine, lodo
from groundwire.calibration.adapt import (
    PRIOR_C,
    Recipe,
    Targets,
    adapt,
    adapt_rows,
    shipped,
    write_profile,
)
from groundwire.calibration.families import EVALUATION_ONLY
from groundwire.calibration.recipe import Fitted
from groundwire.config import CheckSettings
from groundwire.data.rows import read_eval_jsonl
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration, calibration_of
from groundwire.scoring.onnx import bundled_path
from groundwire.scoring.profile import ProfiledScorer, load_profile
from groundwire.train import finetune
from groundwire.train.adapt_tuned import TUNE_FOLDS, adapt_fine_tuned, adapt_tuned
from groundwire.train.calibrate import features_for, part_path
from shared_data import DEV

SIZES = (25, 50, 100, 200, 400)
MIN_TEST = 50
"""A size is drawn from a family only when at least this many of its answers are left to test on."""
Key = tuple[str, str]


def cached_rows(cache: Path, dev: Sequence[Path]) -> list[combine.ClaimRow]:
    """The cache, or the files finished so far (features_for's part files) while it is being made (--partial)."""
    if cache.is_file():
        return combine.load_rows(cache)
    return [row for path in dev if part_path(cache, path).is_file() for row in combine.load_rows(part_path(cache, path))]


def lexical_rows(dev: Sequence[Path], cache: Path) -> list[combine.ClaimRow]:
    """The lexical baseline's claim rows for every dev answer (seconds: no model)."""
    if cache.is_file():
        return combine.load_rows(cache)
    rows = combine.collect(dev, build_verifier(CheckSettings(scorer="lexical", accept_at=0.5, reject_at=0.1)))
    combine.save_rows(rows, cache)
    return rows


def grouped_draw(answers: Sequence[combine.ClaimRow], n: int, rng: np.random.Generator) -> set[Key]:
    """At least n answers, whole source documents at a time, in random order."""
    by_group: dict[str, list[Key]] = defaultdict(list)
    for a in answers:
        by_group[a.group].append((a.file, a.row_id))
    order = list(by_group)
    rng.shuffle(order)
    drawn: set[Key] = set()
    for group in order:
        if len(drawn) >= n:
            break
        drawn.update(by_group[group])
    return drawn


def figures_of(fitted: Fitted, rows: Sequence[combine.ClaimRow]) -> lodo.Figures:
    return lodo.figures(lodo.route(fitted, rows))


def adapted(rows: Sequence[combine.ClaimRow], base: Fitted, recipe: Recipe, targets: Targets,
            c: float) -> Fitted | None:
    """The profile `groundwire adapt` would write from these rows, None where it refuses."""
    try:
        return adapt_rows(rows, base, recipe=recipe, targets=targets, c=c, folds=5, base_model="bench",
                          calibration=Calibration(), auroc_rounds=0).fitted
    except InputError:
        return None


def curve(model: list[combine.ClaimRow], lexical: list[combine.ClaimRow], *, sizes: Sequence[int], draws: int,
          targets: Targets, c: float, seed: int) -> dict[str, dict[int, dict[str, dict[str, float]]]]:
    base = shipped(calibration_of(build_verifier(CheckSettings()).scorer))
    lexical_base = shipped(calibration_of(build_verifier(CheckSettings(scorer="lexical")).scorer))
    lexical_by_key: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
    for r in lexical:
        lexical_by_key[(r.file, r.row_id)].append(r)
    out: dict[str, dict[int, dict[str, dict[str, float]]]] = {}
    rng = np.random.default_rng(seed)
    for fam, rows in lodo.by_family(model).items():
        answers = list(combine.answers_of(rows).values())
        by_key: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
        for r in rows:
            by_key[(r.file, r.row_id)].append(r)
        out[fam] = {}
        for n in sizes:
            if len(answers) - n < MIN_TEST:
                continue
            results: dict[str, list[lodo.Figures]] = defaultdict(list)
            refused: dict[str, int] = defaultdict(int)
            for _ in range(draws):
                drawn = grouped_draw(answers, n, rng)
                train = [r for k in drawn for r in by_key[k]]
                test = [r for k, members in by_key.items() if k not in drawn for r in members]
                lex_train = [r for k in drawn for r in lexical_by_key[k]]
                lex_test = [r for k in by_key if k not in drawn for r in lexical_by_key[k]]
                results["shipped"].append(figures_of(base, test))
                results["lexical"].append(figures_of(lexical_base, lex_test))
                for name, recipe, fit_rows, test_rows, start in (
                        ("thresholds", "thresholds", train, test, base),
                        ("combiner", "combiner", train, test, base),
                        ("lexical adapted", "thresholds", lex_train, lex_test, lexical_base)):
                    fitted = adapted(fit_rows, start, recipe, targets, c)  # type: ignore[arg-type]
                    refused[name] += fitted is None
                    results[name].append(figures_of(fitted or start, test_rows))
            hallucinated = sum(a.hallucinated for a in answers) * (1 - n / len(answers))  # expected, per draw
            out[fam][n] = {
                name: {**{m: statistics.fmean(float(f[m]) for f in figs if f[m] is not None)
                          for m in ("auroc", "far", "frr", "esc")},
                       "test": statistics.fmean(float(f["n"] or 0) for f in figs),
                       "test_hallucinated": hallucinated, "refused": refused.get(name, 0)}
                for name, figs in results.items()}
    return out


RECIPES = ("shipped", "thresholds", "combiner", "lexical", "lexical adapted")


def print_table(result: dict[str, dict[int, dict[str, dict[str, float]]]], draws: int) -> None:
    print(f"mean over {draws} draws per cell; AUROC / false accept / false reject / escalated; "
          "(r k): adapt refused k draws, routed by the shipped calibration")
    print(f"| family | n | test (halluc.) | {' | '.join(RECIPES)} |")
    print("|---|---:|---|" + "---|" * len(RECIPES))
    for fam, by_n in result.items():
        for n, cells in by_n.items():
            row = [f"{cells['shipped']['test']:.0f} ({cells['shipped']['test_hallucinated']:.0f})"]
            for name in RECIPES:
                f = cells[name]
                refused = f" (r {f['refused']:.0f})" if f["refused"] else ""
                row.append(f"{f['auroc']:.3f} / {f['far']:.2f} / {f['frr']:.2f} / {f['esc']:.2f}{refused}")
            print(f"| {fam} | {n} | " + " | ".join(row) + " |")


def targets_met(result: dict[str, dict[int, dict[str, dict[str, float]]]], n: int = 200) -> None:
    """The issue's target: with n labels, escalation <= 40% at false accept <= 10% and false reject <= 10%, on every
    family with at least 40 hallucinated test answers."""
    print(f"\ntarget at n = {n} (families with >= 40 hallucinated test answers): esc <= 0.40, FAR <= 0.10, FRR <= 0.10")
    for fam, by_n in result.items():
        if n not in by_n or by_n[n]["shipped"]["test_hallucinated"] < 40:
            continue
        for name in ("thresholds", "combiner"):
            f = by_n[n][name]
            met = f["esc"] <= 0.40 and f["far"] <= 0.10 and f["frr"] <= 0.10
            print(f"  {fam:20s} {name:10s} esc {f['esc']:.2f} FAR {f['far']:.3f} FRR {f['frr']:.3f} "
                  f"-> {'met' if met else 'not met'}")


def time_fit(model: list[combine.ClaimRow], out: Path, *, size: int = 200, rounds: int = 5) -> None:
    """Seconds to fit a profile (cross-validation included) on `size` answers' cached features, per family, and to
    load the profile it writes (median of 20 loads). Checking the answers first costs what `eval` costs on them."""
    base = shipped(calibration_of(build_verifier(CheckSettings()).scorer))
    rng = np.random.default_rng(0)
    for fam, rows in lodo.by_family(model).items():
        answers = list(combine.answers_of(rows).values())
        if len(answers) < size:
            continue
        drawn = grouped_draw(answers, size, rng)
        train = [r for r in rows if (r.file, r.row_id) in drawn]
        seconds = []
        result = None
        for _ in range(rounds):
            started = time.perf_counter()
            try:
                result = adapt_rows(train, base, recipe="combiner", targets=Targets(), c=PRIOR_C, folds=5,
                                    base_model="groundwire-verifier-v2", calibration=Calibration())
            except InputError as error:
                print(f"{fam}: adapt refused: {error.code.value}")
                break
            seconds.append(time.perf_counter() - started)
        if result is None or not seconds:
            continue
        write_profile(result, out, force=True)
        loads = []
        for _ in range(20):
            started = time.perf_counter()
            load_profile(out)
            loads.append(time.perf_counter() - started)
        print(f"{fam}: fit on {len(combine.answers_of(train))} answers: median {statistics.median(seconds):.2f} s "
              f"of {len(seconds)}; profile load: median {statistics.median(loads) * 1000:.1f} ms of 20")


def time_adapt(file: Path, out: Path, *, tune: bool = False) -> None:
    """Minutes for `adapt` (bundled model, scoring included; with `tune`, `adapt --fine-tune`) on the first 200
    labelled answers of FILE, and the load of the profile it writes (with its model: load_profile and the scorer
    that routes by it, median of 5)."""
    rows = [r for r in read_eval_jsonl(file) if r.hallucinated is not None][:200]
    started = time.perf_counter()
    base = build_verifier(CheckSettings())
    try:
        result = (adapt_fine_tuned(rows, base, tune=finetune.TuneSettings(), source=str(file)) if tune
                  else adapt(rows, base, source=str(file)))
    except InputError as error:
        print(f"adapt{' --fine-tune' if tune else ''} on {len(rows)} answers of {file.name}: refused "
              f"({error.code.value}) after {(time.perf_counter() - started) / 60:.2f} min")
        return
    print(f"adapt{' --fine-tune' if tune else ''} on {len(rows)} answers of {file.name}: "
          f"{(time.perf_counter() - started) / 60:.2f} min (bundled model, scoring included; load average "
          f"{os.getloadavg()[0]:.1f})")
    if result.model is not None:
        print(f"  model pairs {result.document['model']['pairs']}, steps {result.document['model']['steps']}")
    write_profile(result, out, force=True)
    loads = []
    for _ in range(5):
        started = time.perf_counter()
        ProfiledScorer(base.scorer, load_profile(out))
        loads.append(time.perf_counter() - started)
    print(f"  profile load (load_profile + its scorer{', the model included' if tune else ''}): median "
          f"{statistics.median(loads) * 1000:.0f} ms of 5")


def claim_rule(model: Sequence[combine.ClaimRow]) -> None:
    """The answer-label claim rule measured on the span-annotated files: in a hallucinated answer with spans and
    more than one claim, how often the claim the rule picks (lowest support + lexical support) overlaps a gold span
    (vs picking one of the answer's claims at random); and how many claims of faithful answers a span overlaps."""
    by_answer: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
    for r in model:
        if r.gold_overlap is not None and r.claim_index >= 0:
            by_answer[(r.file, r.row_id)].append(r)
    for name in sorted({k[0] for k in by_answer}):
        answers = [claims for k, claims in by_answer.items() if k[0] == name]
        hallucinated = [c for c in answers if c[0].hallucinated and any(r.gold_overlap for r in c)]
        several = [c for c in hallucinated if len(c) > 1]
        hits = sum(bool(min(c, key=combine.combined_support).gold_overlap) for c in several)
        chance = sum(sum(r.gold_overlap for r in c) / len(c) for c in several)
        faithful = [r for c in answers if not c[0].hallucinated for r in c]
        print(f"{name}: hallucinated answers with a span on a claim: {len(hallucinated)} ({len(several)} with >1 "
              f"claim); the rule's claim overlaps a span in {hits}/{len(several)} = {hits / max(len(several), 1):.3f} "
              f"(a random claim: {chance / max(len(several), 1):.3f}); one-claim answers: always right. "
              f"Faithful answers' claims: {len(faithful)}, overlapping a span: {sum(bool(r.gold_overlap) for r in faithful)}")


def finetune_cells(model: list[combine.ClaimRow], lexical: list[combine.ClaimRow], dev: Sequence[Path], out: Path, *,
                   sizes: Sequence[int], draws: int, targets: Targets, c: float, seed: int, test_cap: int,
                   families: Sequence[str] | None) -> None:
    """Append one JSONL line per (family, n, draw) with every recipe's figures on the same test answers."""
    done = {(d["family"], d["n"], d["draw"]) for d in map(json.loads, out.read_text().splitlines())} \
        if out.is_file() else set()
    verifier = build_verifier(CheckSettings())
    calibration = calibration_of(verifier.scorer)
    base = shipped(calibration)
    lexical_base = shipped(calibration_of(build_verifier(CheckSettings(scorer="lexical")).scorer))
    texts = {(p.stem, r.id): r for p in dev for r in read_eval_jsonl(p) if r.hallucinated is not None}
    lexical_by_key: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
    for r in lexical:
        lexical_by_key[(r.file, r.row_id)].append(r)
    grouped = {fam: rows for fam, rows in lodo.by_family(model).items()
               if fam not in EVALUATION_ONLY and (not families or fam in families)}
    # Draw 0 of every cell first: a run cut short has every family once before any twice.
    for draw, n, fam in ((d, n, f) for d in range(draws) for n in sizes for f in grouped):
        rows = grouped[fam]
        by_key: dict[Key, list[combine.ClaimRow]] = defaultdict(list)
        for r in rows:
            by_key[(r.file, r.row_id)].append(r)
        answers = list(combine.answers_of(rows).values())
        if len(answers) - n < MIN_TEST or (fam, n, draw) in done:
            continue
        started = time.perf_counter()
        rng = np.random.default_rng([seed, n, draw, sum(map(ord, fam))])
        drawn = grouped_draw(answers, n, rng)
        rest = sorted(k for k in by_key if k not in drawn)
        test_keys = set(rest) if len(rest) <= test_cap else \
            {rest[i] for i in rng.choice(len(rest), test_cap, replace=False)}
        train = [r for k in drawn for r in by_key[k]]
        test = [r for k in sorted(test_keys) for r in by_key[k]]
        lex_train = [r for k in drawn for r in lexical_by_key[k]]
        lex_test = [r for k in sorted(test_keys) for r in lexical_by_key[k]]
        figures: dict[str, lodo.Figures] = {"shipped": figures_of(base, test),
                                            "lexical": figures_of(lexical_base, lex_test)}
        refused: dict[str, bool] = {}
        for name, recipe, fit_rows, test_rows, start in (
                ("thresholds", "thresholds", train, test, base),
                ("combiner", "combiner", train, test, base),
                ("lexical adapted", "thresholds", lex_train, lex_test, lexical_base)):
            fitted = adapted(fit_rows, start, recipe, targets, c)  # type: ignore[arg-type]
            refused[name] = fitted is None
            figures[name] = figures_of(fitted or start, test_rows)
        checked = finetune.check_labelled([texts[k] for k in sorted(drawn)], verifier, file="draw")
        checked = [finetune.Checked(a.row, a.report, [replace(r, file=k[0]) for r in a.claim_rows])
                   for a, k in zip(checked, sorted(drawn), strict=True)]
        tune_info: dict[str, object] = {}
        try:
            profile = adapt_tuned(checked, verifier, base, recipe="combiner", targets=targets, c=c,
                                  folds=TUNE_FOLDS, calibration=calibration,
                                  tune=finetune.TuneSettings(), auroc_rounds=0)
        except InputError as error:
            refused["finetune"] = True
            tune_info["refused"] = error.code.value
            figures["finetune"] = figures["shipped"]
        else:
            refused["finetune"] = False
            assert profile.model is not None
            tuned = finetune.tuned_verifier(verifier, profile.model)
            tuned_test = [r for k in sorted(test_keys)
                          for r in combine.collect_rows([texts[k]], tuned, file=k[0])]
            figures["finetune"] = figures_of(profile.fitted, tuned_test)
            tune_info = {"model": profile.document["model"],
                         "cross_validated": profile.document["validation"]["profile"]}  # type: ignore[index]
            profile.discard()
        cell = {"family": fam, "n": n, "draw": draw, "train": len(drawn), "test": len(test_keys),
                "test_hallucinated": sum(by_key[k][0].hallucinated for k in test_keys),
                "figures": figures, "refused": refused, "finetune": tune_info,
                "minutes": round((time.perf_counter() - started) / 60, 2), "load": os.getloadavg()[0]}
        with out.open("a") as fh:
            fh.write(json.dumps(cell) + "\n")
        print(f"{fam} n={n} draw={draw}: {cell['minutes']} min; " + "; ".join(
            f"{name} {f['auroc']:.3f}/{f['far']:.2f}/{f['frr']:.2f}/{f['esc']:.2f}"
            for name, f in figures.items() if f["auroc"] is not None), flush=True)


CELL_RECIPES = ("shipped", "thresholds", "combiner", "finetune", "lexical", "lexical adapted")


def table_from(path: Path) -> None:
    """The family x n x recipe table of a --fine-tune-cells JSONL (means over the draws present), and the targets."""
    cells: dict[tuple[str, int], list[dict[str, object]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        d = json.loads(line)
        cells[(d["family"], d["n"])].append(d)
    print("mean over the draws; AUROC / false accept / false reject / escalated on the same test answers; "
          "(r k): adapt refused k draws, routed by the shipped calibration")
    print(f"| family | n | draws | test (halluc.) | {' | '.join(CELL_RECIPES)} | minutes/draw |")
    print("|---|---:|---:|---|" + "---|" * len(CELL_RECIPES) + "---:|")
    means: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    for (fam, n), ds in sorted(cells.items()):
        row = [str(len(ds)), f"{statistics.fmean(d['test'] for d in ds):.0f} "
                             f"({statistics.fmean(d['test_hallucinated'] for d in ds):.0f})"]
        means[(fam, n)] = {}
        for name in CELL_RECIPES:
            figs = [d["figures"][name] for d in ds]
            m = {k: statistics.fmean(float(f[k]) for f in figs if f[k] is not None) for k in ("auroc", "far", "frr", "esc")}
            means[(fam, n)][name] = m
            k = sum(bool(d["refused"].get(name)) for d in ds)
            row.append(f"{m['auroc']:.3f} / {m['far']:.2f} / {m['frr']:.2f} / {m['esc']:.2f}" + (f" (r {k})" if k else ""))
        row.append(f"{statistics.fmean(d['minutes'] for d in ds):.1f}")
        print(f"| {fam} | {n} | " + " | ".join(row) + " |")
    for n in sorted({n for _, n in means}):
        fams = [f for f, m in means if m == n]
        mean = {name: statistics.fmean(means[(f, n)][name]["auroc"] for f in fams) for name in CELL_RECIPES}
        print(f"\nn = {n}, {len(fams)} families: mean AUROC " + ", ".join(f"{k} {v:.3f}" for k, v in mean.items()))
        print(f"  target: finetune >= shipped + 0.05: {mean['finetune']:.3f} vs {mean['shipped'] + 0.05:.3f} -> "
              f"{'met' if mean['finetune'] >= mean['shipped'] + 0.05 else 'not met'}; never more than 0.01 below "
              "lexical adapted: " + ", ".join(
                  f"{f} {means[(f, n)]['finetune']['auroc'] - means[(f, n)]['lexical adapted']['auroc']:+.3f}"
                  for f in fams))
        for f in fams:
            for name in ("thresholds", "combiner", "finetune"):
                m = means[(f, n)][name]
                met = m["esc"] <= 0.40 and m["far"] <= 0.10 and m["frr"] <= 0.10
                print(f"  {f:18s} {name:10s} esc {m['esc']:.2f} FAR {m['far']:.3f} FRR {m['frr']:.3f} -> "
                      f"{'met' if met else 'not met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, nargs="*", default=sorted(DEV.glob("*.jsonl")))
    parser.add_argument("--cache", type=Path, required=True, help="the bundled model's claim-feature cache (JSONL)")
    parser.add_argument("--lexical-cache", type=Path, required=True, help="the lexical baseline's claim rows (JSONL)")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=list(SIZES))
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--confidence", type=float, default=Targets().confidence)
    parser.add_argument("--c", type=float, default=PRIOR_C, help="prior strength of the combiner refit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--time", action="store_true", help="time the fit on 200 answers and the profile's load")
    parser.add_argument("--time-adapt", type=Path, default=None, help="with --time: also adapt on FILE's first 200 "
                                                                       "labelled answers, scoring included")
    parser.add_argument("--no-curve", action="store_true", help="only the timings")
    parser.add_argument("--fine-tune", action="store_true", help="with --time-adapt: adapt --fine-tune")
    parser.add_argument("--fine-tune-cells", type=Path, default=None,
                        help="run the fine-tuned recipe's cells (with every other recipe on the same test answers), "
                             "appending each to this JSONL")
    parser.add_argument("--test-cap", type=int, default=300, help="with --fine-tune-cells: test answers per cell")
    parser.add_argument("--families", type=lambda s: s.split(","), default=None,
                        help="with --fine-tune-cells: only these families")
    parser.add_argument("--table-from", type=Path, default=None, help="print the table of a --fine-tune-cells JSONL")
    parser.add_argument("--claim-rule", action="store_true", help="measure the claim rule on the span files")
    parser.add_argument("--partial", action="store_true", help="only the dev files whose features are cached so far")
    args = parser.parse_args()
    if args.table_from is not None:
        table_from(args.table_from)
        return
    if args.partial:
        model = cached_rows(args.cache, args.dev)
    else:
        model = features_for(bundled_path(), args.dev, limit=None, cache=args.cache, workers=2)
    lexical = lexical_rows(args.dev, args.lexical_cache)
    if args.claim_rule:
        claim_rule(model)
        return
    if args.fine_tune_cells is not None:
        finetune_cells(model, lexical, args.dev, args.fine_tune_cells, sizes=args.sizes, draws=args.draws,
                       targets=Targets(confidence=args.confidence), c=args.c, seed=args.seed, test_cap=args.test_cap,
                       families=args.families)
        table_from(args.fine_tune_cells)
        return
    if not args.no_curve:
        result = curve(model, lexical, sizes=args.sizes, draws=args.draws,
                       targets=Targets(confidence=args.confidence), c=args.c, seed=args.seed)
        print_table(result, args.draws)
        targets_met(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.time:
        with tempfile.TemporaryDirectory() as tmp:
            time_fit(model, Path(tmp) / "profile")
            if args.time_adapt is not None:
                time_adapt(args.time_adapt, Path(tmp) / "profile", tune=args.fine_tune)


if __name__ == "__main__":
    main()
