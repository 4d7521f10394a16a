"""Where the paraphrase gate's similarity threshold comes from, and how often the gate opens on what it must not.

    .venv/bin/python bench/paraphrase_gate.py                  # training NLI pairs: the threshold
    .venv/bin/python bench/paraphrase_gate.py --dev            # dev answers: how often it opens on hallucinated ones

Training pairs (../shared/data/train: human-labelled NLI and claim-verification pairs, never the dev files or the
claim cases): each hypothesis is checked against its premise with the meaning layer on. Among the pairs whose gate
is closed by nothing but the similarity, the table gives, per threshold, how many would pass and the share of
those that are entailments; core.meaning.GATE_SIMILARITY is the lowest threshold at which that share is at
least --precision pooled over the files. The checks and the aligned sentence do not depend on the scorer, so the
lexical scorer (fast) gives the same gate as the bundled model.

With --dev: per dev file, the share of hallucinated and of faithful answers with at least one claim the gate
SUPPORTs (at the shipped threshold), and the share of gated claims in hallucinated RAGTruth answers that a gold
span overlaps (a gated claim that is itself hallucinated).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

import numpy as np

from groundwire.calibration.combine import sample_rows
from groundwire.core.meaning import GATE_SIMILARITY, align, gate_closed_by
from groundwire.core.plan import as_chunks
from groundwire.core.settings import CheckSettings
from groundwire.core.verifier import Verifier
from groundwire.evaluation.evaluate import row_chunks
from groundwire.scoring import get_scorer
from groundwire.scoring.embedder import default_embedder
from shared_data import DATA

TRAIN_FILES = ("esnli", "cad_snli", "rte", "negation_nli", "fever_symmetric", "ambient", "conjnli", "check_covid")


def gate_inputs(verifier: Verifier, answer: str, chunks: list[str]) -> list[tuple[float, list[str]]]:
    """(similarity, what else closes the gate) for every claim of the answer."""
    report = verifier.verify(answer, chunks)
    alignments = align([c.claim.text for c in report.claims], list(as_chunks(chunks)), default_embedder())
    out = []
    for claim, aligned in zip(report.claims, alignments, strict=True):
        figures_ok = claim.features.get("figures_not_in_context", 0) + claim.features.get("figure_conflicts", 0) == 0
        reasons = gate_closed_by(aligned, findings=bool(claim.checks), figures_ok=figures_ok)
        out.append((aligned.similarity if aligned else 0.0, [r for r in reasons if r != "similarity"]))
    return out


def train_table(verifier: Verifier, per_file: int, precision: float, seed: int) -> None:
    grid = np.round(np.arange(0.60, 0.96, 0.025), 3)
    passed = defaultdict(lambda: np.zeros(len(grid)))
    entailed = defaultdict(lambda: np.zeros(len(grid)))
    for name in TRAIN_FILES:
        path = DATA / "train" / f"{name}.jsonl"
        rows = [json.loads(line) for line in path.open()]
        rows = [r for r in rows if r.get("premise") and r.get("hypothesis") and r.get("label")]
        for row in random.Random(seed).sample(rows, min(per_file, len(rows))):
            claims = gate_inputs(verifier, row["hypothesis"], [row["premise"]])
            if not claims or any(reasons for _, reasons in claims):
                continue
            similarity = min(s for s, _ in claims)
            opens = similarity >= grid
            passed[name] += opens
            entailed[name] += opens & (row["label"] == "entailment")
    print(f"{'threshold':>9s} " + " ".join(f"{n[:10]:>14s}" for n in TRAIN_FILES) + f" {'pooled':>14s}")
    chosen = None
    for i, threshold in enumerate(grid):
        cells = [f"{entailed[n][i]:5.0f}/{passed[n][i]:<5.0f}{entailed[n][i] / max(passed[n][i], 1):4.2f}"
                 for n in TRAIN_FILES]
        total_passed = sum(passed[n][i] for n in TRAIN_FILES)
        share = sum(entailed[n][i] for n in TRAIN_FILES) / max(total_passed, 1)
        if chosen is None and share >= precision:
            chosen = threshold
        print(f"{threshold:9.3f} " + " ".join(f"{c:>14s}" for c in cells) + f" {total_passed:7.0f} {share:5.3f}")
    print(f"paraphrase_gate: lowest threshold with pooled entailment share >= {precision}: {chosen} "
          f"(shipped GATE_SIMILARITY {GATE_SIMILARITY})")


def dev_table(verifier: Verifier, limit: int, seed: int) -> None:
    print(f"{'file':24s} {'halluc.':>7s} {'gated':>6s} {'faithful':>8s} {'gated':>6s}")
    for path in sorted((DATA / "dev").glob("*.jsonl")):
        counts = {True: [0, 0], False: [0, 0]}
        for row in sample_rows(path, limit, seed):
            report = verifier.verify(row.answer, row_chunks(row), question=row.question, task=row.task)
            gated = any(c.decided_by == "meaning" for c in report.claims)
            counts[bool(row.hallucinated)][0] += 1
            counts[bool(row.hallucinated)][1] += gated
        h, f = counts[True], counts[False]
        print(f"{path.stem:24s} {h[0]:7d} {h[1] / max(h[0], 1):6.3f} {f[0]:8d} {f[1] / max(f[0], 1):6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-file", type=int, default=500)
    parser.add_argument("--precision", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dev", action="store_true")
    parser.add_argument("--limit", type=int, default=100, help="dev answers per file")
    parser.add_argument("--scorer", default="lexical", help="for --dev: the scorer whose routes are counted")
    args = parser.parse_args()
    if args.dev:
        dev_table(Verifier(get_scorer(args.scorer), CheckSettings(meaning=True)), args.limit, args.seed)
    else:
        train_table(Verifier(get_scorer("lexical"), CheckSettings(meaning=True)), args.per_file, args.precision, args.seed)


if __name__ == "__main__":
    main()
