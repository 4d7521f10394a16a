"""The bundled model's forms (int8, fp32, blockwise) on the same answers: do they decide alike, what does each cost?

    .venv/bin/python bench/forms.py                  # first 40 answers of every dev file, and the claim cases
    .venv/bin/python bench/forms.py --limit 0        # every answer (about 3,000: an hour on 2 cores)

Per dev file it prints, for each form and for the lexical baseline on the same rows: AUROC and the false-accept,
false-reject and escalation rates of the shipped thresholds (calibrated on int8 scores, nothing fitted here); then
how often each other form routes an answer as int8 does, their largest answer-score difference, and each form's wall and
CPU seconds per answer. The claim cases (tests/fixtures/claim_cases.jsonl) give the share of verdicts each form
shares with int8. The last line sums it up. It never asserts a time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from groundwire.config import CheckSettings
from groundwire.data.rows import EvalRow, read_rows
from groundwire.evaluation.claim_cases import load_cases, run_case
from groundwire.evaluation.evaluate import RowOutcome, evaluate
from groundwire.pipeline import build_verifier
from shared_data import DEV

CASES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "claim_cases.jsonl"
VARIANTS = {
    "int8": CheckSettings(scorer="bundled:int8"),
    "fp32": CheckSettings(scorer="bundled:fp32"),
    "blockwise": CheckSettings(scorer="bundled:blockwise"),
    "pruned": CheckSettings(scorer="bundled:int8", pruner="lexical"),
    "lexical": CheckSettings(scorer="lexical"),
}
"""The shipped form, the fp32 and blockwise forms, int8 scoring only the pairs the lexical pruner keeps (core/pruning.py: per
claim its 3 best windows and any within 0.15 of the best), and the lexical baseline."""


def run_file(path: Path, limit: int, verifiers: dict) -> dict:
    out = {}
    for name, verifier in verifiers.items():
        rows = [row for row in read_rows(path, limit=limit or None) if isinstance(row, EvalRow)]
        outcomes: list[RowOutcome] = []
        wall, cpu = time.perf_counter(), time.process_time()
        summary = evaluate(rows, verifier, file=path.name, on_row=outcomes.append)
        rates = summary.routing["all"]
        out[name] = {
            "auroc": summary.overall.auroc, "far": rates.false_accept, "frr": rates.false_reject,
            "esc": rates.escalated, "n": summary.overall.n,
            "wall_s": (time.perf_counter() - wall) / len(rows), "cpu_s": (time.process_time() - cpu) / len(rows),
            "routes": [None if o.report is None else o.report.route for o in outcomes],
            "scores": [None if o.report is None else o.report.score for o in outcomes],
        }
    return out


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=40, help="answers per dev file (0: all)")
    parser.add_argument("--dev", type=Path, default=DEV)
    args = parser.parse_args()
    verifiers = {name: build_verifier(settings) for name, settings in VARIANTS.items()}
    compared = ("fp32", "blockwise", "pruned")
    agree = dict.fromkeys(compared, 0)
    total = 0
    worst = dict.fromkeys(compared, 0.0)
    cost = {name: [0.0, 0.0, 0] for name in ("int8", *compared)}
    print(f"{'file':28s} {'form':9s} {'auroc':>6s} {'far':>6s} {'frr':>6s} {'esc':>6s} {'s/answer':>9s} {'cpu s':>6s}")
    for path in sorted(args.dev.glob("*.jsonl")):
        result = run_file(path, args.limit, verifiers)
        for name, r in result.items():
            print(f"{path.name:28s} {name:9s} {fmt(r['auroc']):>6s} {fmt(r['far']):>6s} {fmt(r['frr']):>6s} "
                  f"{fmt(r['esc']):>6s} {r['wall_s']:9.3f} {r['cpu_s']:6.3f}")
            if name in cost:  # the lexical baseline's cost is not compared
                cost[name][0] += r["wall_s"] * len(r["routes"])
                cost[name][1] += r["cpu_s"] * len(r["routes"])
                cost[name][2] += len(r["routes"])
        total += len(result["int8"]["routes"])
        for name in compared:
            same = sum(a == b for a, b in zip(result["int8"]["routes"], result[name]["routes"], strict=True))
            diff = max((abs(a - b) for a, b in zip(result["int8"]["scores"], result[name]["scores"], strict=True)
                        if a is not None and b is not None), default=0.0)
            agree[name] += same
            worst[name] = max(worst[name], diff)
            print(f"{'':28s} {name}: routed as int8 {same}/{len(result['int8']['routes'])}, "
                  f"largest answer-score difference {diff:.3f}")
    cases = load_cases(CASES)
    results = {name: [run_case(verifiers[name], case) for case in cases] for name in ("int8", *compared)}
    passed = {name: sum(result.passed for result in results[name]) for name in results}
    alike = {name: sum(a.verdict == b.verdict for a, b in zip(results["int8"], results[name], strict=True))
             for name in compared}
    speed = {name: (w / n, c / n) for name, (w, c, n) in cost.items()}
    line = [f"claim cases passed: int8 {passed['int8']}/{len(cases)}"]
    for name in compared:
        line.append(f"{name}: routed as int8 {agree[name]}/{total} ({agree[name] / total:.1%}), largest answer-score "
                    f"difference {worst[name]:.3f}, claim-case verdicts as int8 {alike[name]}/{len(cases)} (passed "
                    f"{passed[name]}), CPU s/answer x{speed[name][1] / speed['int8'][1]:.2f} int8's "
                    f"(wall x{speed[name][0] / speed['int8'][0]:.2f})")
    print("forms: " + "; ".join(line))


if __name__ == "__main__":
    main()
