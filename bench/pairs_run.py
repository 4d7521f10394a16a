"""Pairs and tokens the model runs per dev answer: the counts issue 48 measures pruning and window sizes by.

    .venv/bin/python bench/pairs_run.py                     # every row of every dev file, the bundled model's windows
    .venv/bin/python bench/pairs_run.py --limit 100         # the first 100 rows of each file
    .venv/bin/python bench/pairs_run.py --run               # also run the model (else it is never called)

Every answer goes through `pipeline.check`, the one path a check takes, with the bundled scorer wrapped in a counter
that records each call's distinct (window, claim) pairs and their framed, truncated token lengths (`run_size`, the
counts that do not depend on the CPU). Without --run the counter answers every pair with zeros instead of running the
model: the pairs a check asks for do not depend on the scores, so the counts are the same and a full pass takes
minutes instead of the better part of an hour. Prints, per dev file: answers, pairs per answer (mean, and the share of
answers with at most one pair), tokens per pair (p50 / p90 / mean) and tokens per answer; and, as "cached", the pairs
per answer a process that kept every pair's scores across the file would run (the distinct pairs of the file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from exact_bounds import DEV, dev_rows
from groundwire.config import CheckSettings
from groundwire.pipeline import build_verifier, check
from groundwire.scoring import get_scorer
from groundwire.scoring.base import PairScores
from groundwire.scoring.onnx import OnnxScorer


@dataclass
class Tally:
    answers: int = 0
    pairs: list[int] = field(default_factory=list)
    """Distinct pairs run per answer."""
    tokens: list[int] = field(default_factory=list)
    """Framed token length of every pair run."""
    seen: set[tuple[str, str]] = field(default_factory=set)


class CountingScorer:
    """The bundled scorer, counting what each call runs (each distinct pair once, as the scorer runs it)."""

    def __init__(self, inner: OnnxScorer, *, run: bool) -> None:
        self.inner, self.run = inner, run
        self.tally = Tally()

    def __getattr__(self, name: str) -> object:  # thresholds, calibration, count_tokens: the bundled scorer's
        return getattr(self.inner, name)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        distinct = list(dict.fromkeys(pairs))
        self.tally.pairs[-1] += len(distinct)
        self.tally.tokens.extend(self.inner.run_size([pair])[1] for pair in distinct)
        self.tally.seen.update(distinct)
        if self.run:
            return self.inner.score(pairs)
        zeros = np.zeros(len(pairs), dtype=np.float32)
        return PairScores(zeros, zeros.copy(), np.zeros(len(pairs), dtype=bool))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="rows of each dev file (default: all)")
    parser.add_argument("--run", action="store_true", help="run the model too (slow; the counts are the same)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev files' folder (from a worktree: ../shared's)")
    args = parser.parse_args()
    if not any(args.dev.glob("*.jsonl")):
        parser.error(f"no dev files in {args.dev}: give --dev DIR")
    inner = get_scorer("bundled")
    if not isinstance(inner, OnnxScorer):
        raise SystemExit("the bundled scorer is not the ONNX one")
    scorer = CountingScorer(inner, run=args.run)
    verifier = build_verifier(CheckSettings(), scorer=scorer)  # type: ignore[arg-type]
    print(
        f"{'file':28} {'answers':>7} {'pairs/ans':>9} {'<=1 pair':>8} {'tok p50':>7} {'tok p90':>7} "
        f"{'tok mean':>8} {'tok/ans':>8} {'cached':>6}"
    )
    figures: dict[str, dict[str, float]] = {}
    totals = Tally()
    for path in sorted(args.dev.glob("*.jsonl")):
        scorer.tally = tally = Tally()
        for _, item in dev_rows(path, args.limit):
            tally.pairs.append(0)
            check(verifier, item)
            tally.answers += 1
        figures[path.name] = line_of(path.name, tally)
        totals.answers += tally.answers
        totals.pairs += tally.pairs
        totals.tokens += tally.tokens
        totals.seen |= {(path.name, *pair) for pair in tally.seen}  # type: ignore[misc]
    figures["all"] = line_of("all", totals)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def line_of(name: str, tally: Tally) -> dict[str, float]:
    pairs, tokens = np.asarray(tally.pairs), np.asarray(tally.tokens)
    n = max(tally.answers, 1)
    figures = {
        "answers": tally.answers,
        "pairs_per_answer": float(pairs.sum() / n),
        "at_most_one_pair": float((pairs <= 1).mean()) if len(pairs) else 0.0,
        "tokens_p50": float(np.percentile(tokens, 50)) if len(tokens) else 0.0,
        "tokens_p90": float(np.percentile(tokens, 90)) if len(tokens) else 0.0,
        "tokens_per_pair": float(tokens.mean()) if len(tokens) else 0.0,
        "tokens_per_answer": float(tokens.sum() / n),
        "cached_pairs_per_answer": len(tally.seen) / n,
    }
    print(
        f"{name:28} {tally.answers:7d} {figures['pairs_per_answer']:9.2f} {figures['at_most_one_pair']:8.1%} "
        f"{figures['tokens_p50']:7.0f} {figures['tokens_p90']:7.0f} {figures['tokens_per_pair']:8.1f} "
        f"{figures['tokens_per_answer']:8.0f} {figures['cached_pairs_per_answer']:6.2f}",
        flush=True,
    )
    return figures


if __name__ == "__main__":
    sys.exit(main())
