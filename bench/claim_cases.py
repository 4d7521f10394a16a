"""Claim-level cases: pass rate per kind for the bundled scorer and for the lexical baseline.

    .venv/bin/python bench/claim_cases.py                          # bundled and lexical
    .venv/bin/python bench/claim_cases.py --no-canonical-figures   # figures as written (before calibration v6)
    .venv/bin/python bench/claim_cases.py --failures               # also list every case that failed
    .venv/bin/python bench/claim_cases.py --task claim             # as single-claim verification (task "claim")
    .venv/bin/python bench/claim_cases.py --judge                  # the [llm] judge decides the UNRESOLVED claims

The cases (tests/fixtures/claim_cases.jsonl, groundwire.evaluation.claim_cases) are single claims with the
verdict a reader would give. Target (issue 21): at least 90% overall, no kind below 75%.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groundwire.config import CheckSettings, load_config
from groundwire.evaluation.claim_cases import decided, kinds, load_cases, pass_rates, run_case
from groundwire.llm.client import client_from_config
from groundwire.llm.errors import LLMError
from groundwire.pipeline import Judge, build_verifier

CASES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "claim_cases.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--scorers", default="bundled,lexical")
    parser.add_argument("--canonical-figures", action=argparse.BooleanOptionalAction,
                        default=CheckSettings().canonical_figures, help="figures in one spelling (the default)")
    parser.add_argument("--task", default=None,
                        help="the verify() task type (\"claim\": the thresholds calibrated for claim verification); "
                             "default none, the pooled thresholds")
    parser.add_argument("--judge", action="store_true",
                        help="the LLM judge of groundwire.toml / GROUNDWIRE_LLM_* decides the UNRESOLVED claims")
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--meaning", action=argparse.BooleanOptionalAction, default=None,
                        help="the meaning layer on or off (default: as each scorer was calibrated)")
    args = parser.parse_args()
    cases = load_cases(args.cases)
    judge = None
    if args.judge:  # groundwire.toml is read only for the judge
        config = load_config()
        if not config.llm_configured:
            parser.error("--judge needs an LLM endpoint: set [llm] base_url and model in groundwire.toml "
                         "(or GROUNDWIRE_LLM_BASE_URL / GROUNDWIRE_LLM_MODEL)")
        judge = Judge(client_from_config(config), required=True)
    table = {}
    committed = {}
    for name in args.scorers.split(","):
        verifier = build_verifier(CheckSettings(scorer=None if name == "bundled" else name,
                                                canonical_figures=args.canonical_figures, meaning=args.meaning))
        try:
            results = [run_case(verifier, case, task=args.task, judge=judge) for case in cases]
        except LLMError as error:
            sys.exit(f"claim_cases: the judge failed: {error}")
        table[name] = pass_rates(results)
        committed[name] = decided(results)
        if args.failures:
            for r in results:
                if not r.passed:
                    print(f"  {name:8s} {r.case.id:18s} expected {r.case.expected.value:12s} got "
                          f"{r.verdict.value:12s} {r.case.claim!r} {list(r.checks)}")
    names = list(table)
    print(f"{'kind':16s} {'n':>3s} " + " ".join(f"{n:>9s}" for n in names))
    for kind in [*kinds(cases), "overall"]:
        n = table[names[0]][kind][1]
        print(f"{kind:16s} {n:3d} " + " ".join(f"{table[x][kind][0] / n:9.1%}" for x in names))
    for name in names:
        total, made, right = committed[name]
        print(f"claim_cases: {name} decided {made}/{total} ({made / total:.1%}; the rest UNRESOLVED), "
              f"right when decided {right}/{made} ({right / max(made, 1):.1%})")
    for name in names:
        rates = {k: p / n for k, (p, n) in table[name].items()}
        worst = min((k for k in rates if k != "overall"), key=rates.__getitem__)
        print(f"claim_cases: {name} overall {rates['overall']:.1%}, lowest kind {worst} {rates[worst]:.1%}, "
              f"target met: {rates['overall'] >= 0.9 and rates[worst] >= 0.75}"
              f"{'' if args.canonical_figures else ' (figures as written)'}"
              f"{f' (task {args.task})' if args.task else ''}"
              f"{f' (judge {judge.client.model} at {judge.client.base_url})' if judge else ''}")


if __name__ == "__main__":
    main()
