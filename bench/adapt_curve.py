"""Learning curves of domain profiles (`groundwire adapt`): how many labels a deployment needs.

    .venv/bin/python bench/adapt_curve.py --cache runs/adapt/features.jsonl --lexical-cache runs/adapt/lexical.jsonl

For every dev family (groundwire.train.families), draw n = 25, 50, 100, 200 and 400 labelled answers, --draws
times, whole source documents at a time (an answer's group is its first context chunk, train.combine), so that no
test answer shares a source document with its draw; adapt on the draw exactly as `groundwire adapt` does
(train.adapt.adapt_rows: the count rule, the cross-validated refusal, then the fit) and route the rest of the
family. A draw adapt refuses is routed by the shipped calibration, as the user would be, and counted as refused.
Recipes: shipped (the bundle's calibration, no labels), thresholds (only the thresholds refitted), combiner (the
combiner refitted toward the shipped one, then the thresholds), and the lexical baseline at its default 0.8 / 0.2
and with its thresholds adapted the same way. Per (family, n, recipe): mean AUROC, false-accept, false-reject and
escalation rates over the draws, and how many draws adapt refused.

Every dev answer is scored once: the bundled model's claim features are cached (train.calibrate.features_for, the
cache bench/lodo.py reads), the lexical baseline's too; fitting is then cheap.

    --time: the fit on 200 answers' cached features per family (cross-validation included) and the load of the
    profile it writes; with --time-adapt FILE also `adapt` on FILE's first 200 labelled answers, scoring included.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from groundwire.config import CheckSettings
from groundwire.data.rows import read_eval_jsonl
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Calibration, calibration_of
from groundwire.scoring.onnx import bundled_path
from groundwire.scoring.profile import load_profile
from groundwire.train import combine, lodo
from groundwire.train.adapt import PRIOR_C, Recipe, Targets, adapt, adapt_rows, shipped, write_profile
from groundwire.train.calibrate import features_for, part_path
from groundwire.train.recipe import Fitted

DEV = next((p / "shared" / "data" / "dev" for p in Path(__file__).resolve().parents
            if (p / "shared" / "data" / "dev").is_dir()), Path("shared/data/dev"))
"""The shared dev files: the nearest shared/data/dev above this checkout (a worktree sits one level deeper)."""
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
                          calibration=Calibration(), source="draw", auroc_rounds=0).fitted
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
                                    base_model="groundwire-verifier-v2", calibration=Calibration(), source=fam)
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


def time_adapt(file: Path, out: Path) -> None:
    """Seconds for `adapt` (bundled model, scoring included) on the first 200 labelled answers of FILE."""
    rows = [r for r in read_eval_jsonl(file) if r.hallucinated is not None][:200]
    started = time.perf_counter()
    result = adapt(rows, build_verifier(CheckSettings()), source=str(file))
    print(f"adapt on {len(rows)} answers of {file.name}: {time.perf_counter() - started:.1f} s (bundled model, "
          "scoring included)")
    write_profile(result, out, force=True)


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
    parser.add_argument("--partial", action="store_true", help="only the dev files whose features are cached so far")
    args = parser.parse_args()
    if args.partial:
        model = cached_rows(args.cache, args.dev)
    else:
        model = features_for(bundled_path(), args.dev, limit=None, cache=args.cache, workers=2)
    lexical = lexical_rows(args.dev, args.lexical_cache)
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
                time_adapt(args.time_adapt, Path(tmp) / "profile")


if __name__ == "__main__":
    main()
