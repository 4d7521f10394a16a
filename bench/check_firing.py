"""How often each deterministic check fires on faithful and on hallucinated dev answers.

    .venv/bin/python bench/check_firing.py                       # lexical evidence, 100 answers per dev file
    .venv/bin/python bench/check_firing.py --scorer bundled --findings certainty_added,role_conflict

A check that decides a verdict (figures, roles, certainty, ...) sends its answer to REJECT, so each answer it
fires on that is faithful is a false reject the model would not have made. Per dev file and check: answers it
fires on, faithful and hallucinated, and its precision (hallucinated among the fired) beside the file's base
rate of hallucinated answers. A check written from a taxonomy is kept only where its precision is well above
the base rate on files it was not written from. The evidence sentence is the scorer's, so the lexical baseline
(seconds) and the bundled model (minutes) can differ.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from groundwire.config import CheckSettings
from groundwire.core.checks import CLAIM_CHECKS
from groundwire.data.rows import read_eval_jsonl
from groundwire.evaluation.evaluate import row_chunks
from groundwire.pipeline import build_verifier
from shared_data import DEV


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, nargs="*", default=sorted(DEV.glob("*.jsonl")))
    parser.add_argument("--limit", type=int, default=100, help="answers per file")
    parser.add_argument("--scorer", default="lexical", help="'bundled' or a scorer spec (default lexical)")
    parser.add_argument("--findings", default="certainty_added,role_conflict,negation_mismatch",
                        help="comma-separated finding names (Finding.check: role_conflict, not the check 'roles')")
    args = parser.parse_args()
    checks = {check.name for check in CLAIM_CHECKS}
    if wrong := [name for name in args.findings.split(",") if name in checks]:
        parser.error(f"{', '.join(wrong)}: a check's name; pass the names of the findings it makes")
    verifier = build_verifier(CheckSettings(scorer=None if args.scorer == "bundled" else args.scorer))
    names = args.findings.split(",")
    totals: Counter[tuple[str, str]] = Counter()
    print(f"{'file':28s} {'finding':18s} {'answers':>7s} {'halluc':>6s} {'fired':>5s} {'faithful':>8s} "
          f"{'halluc':>6s} {'precision':>9s} {'base':>5s}")
    for path in args.dev:
        fired: Counter[tuple[str, bool]] = Counter()
        labels: Counter[bool] = Counter()
        for row in read_eval_jsonl(path, limit=args.limit):
            if row.hallucinated is None:
                continue
            labels[row.hallucinated] += 1
            report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
            found = {f.check for claim in report.claims for f in claim.checks}
            for name in names:
                if name in found:
                    fired[(name, row.hallucinated)] += 1
        n = labels[True] + labels[False]
        totals[("answers", "all")] += n
        totals[("answers", "halluc")] += labels[True]
        for name in names:
            faithful, halluc = fired[(name, False)], fired[(name, True)]
            totals[(name, "faithful")] += faithful
            totals[(name, "halluc")] += halluc
            precision = f"{halluc / (faithful + halluc):9.2f}" if faithful + halluc else f"{'-':>9s}"
            print(f"{path.stem:28s} {name:18s} {n:7d} {labels[True]:6d} {faithful + halluc:5d} {faithful:8d} "
                  f"{halluc:6d} {precision} {labels[True] / n if n else 0:5.2f}")
    n, base = totals[("answers", "all")], totals[("answers", "halluc")]
    for name in names:
        faithful, halluc = totals[(name, "faithful")], totals[(name, "halluc")]
        print(f"check_firing: {name} fired on {faithful + halluc} of {n} answers ({faithful} faithful, {halluc} "
              f"hallucinated; precision {halluc / max(1, faithful + halluc):.2f}, base rate {base / max(1, n):.2f}); "
              f"faithful answers it would reject: {faithful / max(1, n - base):.2%}")


if __name__ == "__main__":
    main()
