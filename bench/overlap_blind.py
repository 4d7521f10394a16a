"""Where word overlap is blind: does the model tell faithful from hallucinated answers whose words all match?

    .venv/bin/python bench/overlap_blind.py FEATURES.jsonl [FEATURES.jsonl ...]

Each FEATURES file is a feature cache of `groundwire train combiner --cache` (one model, the same seeded answers:
experiments/arm.sh writes one per arm). Nothing is fitted. Per cache:
  - the rank correlation of the model's support with the lexical baseline's, over claims: how much of what the
    model says the combiner's lexical feature already says;
  - the answers whose every claim has lexical support of at least --overlap (0.9): there the lexical baseline
    cannot rank, and the model's AUROC (min support over the claims as the answer's score) is what it adds.
    Beside it, the lexical baseline's AUROC on the same answers. A model that learned "every word found ->
    entailed" scores near or under 0.5 here. The AUROC compares answers of the same dev file only (each file's
    faithful-hallucinated pairs, pooled), so a file with many hallucinated high-overlap answers (BEGIN) does not
    pass for a ranking. Few answers qualify (about 150 of 1,000, 30 hallucinated): read it with its count.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from groundwire.calibration.combine import ClaimRow, load_rows
from groundwire.evaluation.metrics import auroc


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho (ties by average rank)."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def within_file_auroc(answers: list[list[ClaimRow]], risk: list[float]) -> float:
    """Of the (hallucinated, faithful) answer pairs from the same file, the share the risk orders right (ties
    count one half): each file's AUROC, weighted by its number of such pairs; nan without such a pair."""
    by_file: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for claims, value in zip(answers, risk, strict=True):
        by_file[claims[0].file].append((claims[0].hallucinated, value))
    right = pairs = 0.0
    for members in by_file.values():
        labels = np.array([bad for bad, _ in members])
        file_pairs = int(labels.sum()) * int((~labels).sum())
        if file_pairs:
            right += auroc(labels, np.array([value for _, value in members])) * file_pairs
            pairs += file_pairs
    return right / pairs if pairs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("caches", type=Path, nargs="+")
    parser.add_argument("--overlap", type=float, default=0.9, help="lexical support every claim must reach")
    args = parser.parse_args()
    print(f"{'cache':60s} {'claims':>6s} {'rho':>6s} | {'answers':>7s} {'halluc':>6s} {'model':>6s} {'lexical':>7s}")
    for path in args.caches:
        rows = [row for row in load_rows(path) if row.features]
        support = np.array([row.features["support"] for row in rows])
        lexical = np.array([row.features["lexical_support"] for row in rows])
        answers: dict[tuple[str, str], list[ClaimRow]] = defaultdict(list)
        for row in rows:
            answers[(row.file, row.row_id)].append(row)
        blind = [claims for claims in answers.values()
                 if min(c.features["lexical_support"] for c in claims) >= args.overlap]  # fmt: skip
        hallucinated = sum(claims[0].hallucinated for claims in blind)
        model = within_file_auroc(blind, [-min(c.features["support"] for c in claims) for claims in blind])
        lex = within_file_auroc(blind, [-min(c.features["lexical_support"] for c in claims) for claims in blind])
        print(f"{str(path)[-60:]:60s} {len(rows):6d} {rank_correlation(support, lexical):6.3f} | {len(blind):7d} "
              f"{hallucinated:6d} {model:6.3f} {lex:7.3f}")


if __name__ == "__main__":
    main()
