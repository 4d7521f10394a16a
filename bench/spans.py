"""Span-level detection on RAGTruth: which characters of an answer are hallucinated, against the gold spans.

    .venv/bin/python bench/spans.py                      # lexical baseline, all 293 answers
    .venv/bin/python bench/spans.py --scorer bundled     # the bundled model (a few minutes on 2 cores)

For every answer the verifier flags claims; two span views are scored at character level against
RAGTruth's word-level gold spans (micro precision / recall / F1 over all answers, so a span predicted in a
faithful answer counts against precision):
  - claim: each non-SUPPORTED claim, whole
  - words: `ClaimResult.unsupported_spans`, the claim's words found nowhere in the context (the whole claim
           when it has none), which is what a report highlights
The last line is a one-line summary.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from groundwire.data.rows import read_eval_jsonl  # noqa: E402
from groundwire.evaluation.evaluate import row_chunks  # noqa: E402
from groundwire.core.spans import span_overlap_counts  # noqa: E402
from groundwire.core.textutil import trim_span  # noqa: E402
from groundwire.core.types import Verdict  # noqa: E402
from groundwire.core.verifier import Verifier  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev" / "ragtruth_dev.jsonl"
VIEWS = ("claim", "words")


def prf(counts: list[int]) -> dict[str, float]:
    both, predicted, gold = counts
    p = both / predicted if predicted else 0.0
    r = both / gold if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV, help="a grounding-eval file with gold spans")
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()

    verifier = Verifier(args.scorer)
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    rows = [r for r in read_eval_jsonl(args.dev) if r.hallucinated is not None][: args.limit]
    for row in rows:
        report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
        flagged = [c for c in report.claims if c.verdict is not Verdict.SUPPORTED]
        gold = [(s, e) for s, e, _ in row.spans]
        predicted = {"claim": [trim_span(row.answer, *c.claim.span) for c in flagged],
                     "words": [s for c in flagged for s in c.unsupported_spans]}
        for view in VIEWS:
            counts = span_overlap_counts(predicted[view], gold)
            for key in ((row.task, view), ("all", view)):
                totals[key] = [a + b for a, b in zip(totals[key], counts, strict=True)]

    tasks = sorted({t for t, _ in totals} - {"all"}) + ["all"]
    print(f"{'task':10s} " + " ".join(f"{v + ' p/r/f1':^20s}" for v in VIEWS))
    for task in tasks:
        cells = [prf(totals[(task, v)]) for v in VIEWS]
        print(f"{task:10s} " + " ".join(f"{c['precision']:.3f} {c['recall']:.3f} {c['f1']:.3f}  " for c in cells))
    overall = {v: prf(totals[("all", v)]) for v in VIEWS}
    print(f"spans: scorer={args.scorer} answers={len(rows)} " +
          " ".join(f"{v}_f1={overall[v]['f1']:.3f}" for v in VIEWS) +
          f" words/claim_precision={overall['words']['precision'] / max(overall['claim']['precision'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
