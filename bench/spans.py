"""Span-level detection on RAGTruth: which characters of an answer are hallucinated, against the gold spans.

    .venv/bin/python bench/spans.py                      # lexical baseline, all 293 answers
    .venv/bin/python bench/spans.py --scorer bundled     # the bundled model (a few minutes on 2 cores)

For every answer the verifier flags claims; two span views are scored at character level against
RAGTruth's word-level gold spans (micro precision / recall / F1 over all answers, so a span predicted in a
faithful answer counts against precision):
  - claim:   each non-SUPPORTED claim, whole (UNRESOLVED included)
  - decided: each CONTRADICTED or NOT_FOUND claim, whole (the escalation band, UNRESOLVED, left out)
  - words:   `ClaimResult.unsupported_spans` of the non-SUPPORTED claims, the claim's words found nowhere in
             the context (the whole claim when it has none), which is what a report highlights
Then, per claim state, at claim level: a claim is hallucinated when it overlaps a gold span. For each state,
its share of claims, its precision (hallucinated claims among those in the state; for SUPPORTED, faithful
ones) and its recall (the state's share of all hallucinated claims; for SUPPORTED, of all faithful ones).
The last line is a one-line summary.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from groundwire.config import CheckSettings
from groundwire.core.spans import span_overlap_counts
from groundwire.data.rows import read_eval_jsonl
from groundwire.evaluation.evaluate import row_chunks
from groundwire.foundation.textutil import trim_span
from groundwire.foundation.types import Verdict
from groundwire.pipeline import build_verifier
from shared_data import DEV

RAGTRUTH = DEV / "ragtruth_dev.jsonl"
VIEWS = ("claim", "decided", "words")
DECIDED_AGAINST = (Verdict.CONTRADICTED, Verdict.NOT_FOUND)


def prf(counts: list[int]) -> dict[str, float]:
    both, predicted, gold = counts
    p = both / predicted if predicted else 0.0
    r = both / gold if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=RAGTRUTH, help="a grounding-eval file with gold spans")
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()

    verifier = build_verifier(CheckSettings(scorer=args.scorer))
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    # (state, claim hallucinated?) -> claims
    states: dict[tuple[Verdict, bool], int] = defaultdict(int)
    rows = [r for r in read_eval_jsonl(args.dev) if r.hallucinated is not None][: args.limit]
    for row in rows:
        report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
        flagged = [c for c in report.claims if c.verdict is not Verdict.SUPPORTED]
        gold = [(s, e) for s, e, _ in row.spans]
        predicted = {"claim": [trim_span(row.answer, *c.claim.span) for c in flagged],
                     "decided": [trim_span(row.answer, *c.claim.span) for c in flagged
                                 if c.verdict in DECIDED_AGAINST],
                     "words": [s for c in flagged for s in c.unsupported_spans]}
        for c in report.claims:
            states[(c.verdict, span_overlap_counts([trim_span(row.answer, *c.claim.span)], gold)[0] > 0)] += 1
        for view in VIEWS:
            counts = span_overlap_counts(predicted[view], gold)
            for key in ((row.task, view), ("all", view)):
                totals[key] = [a + b for a, b in zip(totals[key], counts, strict=True)]

    tasks = sorted({t for t, _ in totals} - {"all"}) + ["all"]
    print(f"{'task':10s} " + " ".join(f"{v + ' p/r/f1':^20s}" for v in VIEWS))
    for task in tasks:
        cells = [prf(totals[(task, v)]) for v in VIEWS]
        print(f"{task:10s} " + " ".join(f"{c['precision']:.3f} {c['recall']:.3f} {c['f1']:.3f}  " for c in cells))
    print_states(states)
    overall = {v: prf(totals[("all", v)]) for v in VIEWS}
    print(f"spans: scorer={args.scorer} answers={len(rows)} " +
          " ".join(f"{v}_f1={overall[v]['f1']:.3f}" for v in VIEWS) +
          f" words/claim_precision={overall['words']['precision'] / max(overall['claim']['precision'], 1e-9):.2f}x")


def print_states(states: dict[tuple[Verdict, bool], int]) -> None:
    claims = sum(states.values())
    bad = sum(n for (_, hallucinated), n in states.items() if hallucinated)
    print(f"\nclaims {claims}, hallucinated (overlapping a gold span) {bad}")
    print(f"{'state':13s} {'share':>6s} {'precision':>9s} {'recall':>7s}")
    for verdict in Verdict:
        hit, miss = states[(verdict, True)], states[(verdict, False)]
        if verdict is Verdict.SUPPORTED:  # precision and recall of "faithful"
            hit, miss, pool = miss, hit, claims - bad
        else:
            pool = bad
        n = hit + miss
        print(f"{verdict.value:13s} {n / max(claims, 1):6.3f} {hit / n if n else 0.0:9.3f} {hit / max(pool, 1):7.3f}")


if __name__ == "__main__":
    main()
