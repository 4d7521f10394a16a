"""Pair pruning on the dev sets: do pruned verdicts agree with the exact matrix, and how much faster is it?

    .venv/bin/python bench/pruning.py --scorer lexical --pruner lexical
    .venv/bin/python bench/pruning.py --scorer bundled --pruner lexical --per-file 60

Every sampled answer is verified twice with the same loaded scorer, exact matrix then pruned, back to
back (so load on a shared machine hits both alike). Prints, per dev file and overall: claims compared,
the share with the same verdict, pairs scored (exact / pruned) and the time ratio exact / pruned for the
whole verify() call and for its scoring stage. Ratios only; nothing is asserted.

    .venv/bin/python bench/pruning.py --scorer bundled --per-file 40 --sweep 3:0.15,5:0.2,8:0.3

--sweep scores the exact matrix once and replays those scores for each pruner setting, so it measures
what pruning alone changes (no timing), free of batch effects in the backend.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from groundwire.core.verifier import Verifier
from groundwire.foundation.errors import InputError
from groundwire.pipeline import build_pruner
from groundwire.scoring import get_scorer
from groundwire.scoring.base import Calibration, PairScores, calibration_of
from shared_data import DEV


@dataclass
class Tally:
    rows: int = 0
    skipped: int = 0
    claims: int = 0
    same: int = 0
    pairs_exact: int = 0
    pairs_pruned: int = 0
    seconds_exact: float = 0.0
    seconds_pruned: float = 0.0
    score_exact: float = 0.0
    score_pruned: float = 0.0
    flips: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("rows", "skipped", "claims", "same", "pairs_exact", "pairs_pruned", "seconds_exact",
                     "seconds_pruned", "score_exact", "score_pruned"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.flips.extend(other.flips)

    def line(self, name: str) -> str:
        agree = self.same / self.claims if self.claims else float("nan")
        return (f"{name:<24} rows {self.rows:>5}  claims {self.claims:>6}  same verdict {agree:7.2%}  "
                f"pairs {self.pairs_exact:>7} / {self.pairs_pruned:>7} = {_ratio(self.pairs_exact, self.pairs_pruned):5.2f}x  "
                f"verify time {_ratio(self.seconds_exact, self.seconds_pruned):5.2f}x  "
                f"scoring time {_ratio(self.score_exact, self.score_pruned):5.2f}x")


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def sample_rows(path: Path, per_file: int | None, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if per_file is not None and per_file < len(rows):
        rows = random.Random(seed).sample(rows, per_file)
    return rows


def compare(rows: list[dict], exact: Verifier, pruned: Verifier) -> Tally:
    tally = Tally()
    for row in rows:
        args = (row["answer"], row["context"])
        started = time.perf_counter()
        try:
            full = exact.verify(*args, question=row.get("question"))
        except InputError:  # e.g. an empty answer: not a pruning question
            tally.skipped += 1
            continue
        middle = time.perf_counter()
        fast = pruned.verify(*args, question=row.get("question"))
        done = time.perf_counter()
        tally.rows += 1
        tally.seconds_exact += middle - started
        tally.seconds_pruned += done - middle
        tally.score_exact += full.timings.get("score", 0.0)
        tally.score_pruned += fast.timings.get("score", 0.0)
        tally.pairs_exact += (full.meta.pairs_scored or 0)
        tally.pairs_pruned += (fast.meta.pairs_scored or 0)
        for a, b in zip(full.claims, fast.claims, strict=True):
            tally.claims += 1
            tally.same += a.verdict == b.verdict
            if a.verdict != b.verdict:
                tally.flips.append(f"{row['id']}: {a.verdict.value}->{b.verdict.value} ({a.score:.2f}->{b.score:.2f})"
                                   f" {a.claim.text[:70]!r}")
    return tally


class CachedScorer:
    """Remembers each (premise, hypothesis) score from the exact run and replays it, so a pruned run sees
    exactly the scores the exact run saw. This isolates what pruning itself changes: with a backend
    whose scores depend on the rest of the batch (int8 dynamic quantisation), the plain comparison also
    counts those batch effects as flips."""

    def __init__(self, scorer: object) -> None:
        self.inner = scorer
        self.model_id = scorer.model_id
        self.max_tokens = scorer.max_tokens
        calibration = calibration_of(scorer)  # type: ignore[arg-type]
        self.calibration = Calibration(thresholds=calibration.thresholds, combiner=calibration.combiner)
        self.cache: dict[tuple[str, str], tuple[float, float | None, bool]] = {}

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        missing = [pair for pair in dict.fromkeys(pairs) if pair not in self.cache]
        if missing:
            fresh = self.inner.score(missing)
            for i, pair in enumerate(missing):
                contradiction = None if fresh.contradiction is None else float(fresh.contradiction[i])
                truncated = False if fresh.truncated is None else bool(fresh.truncated[i])
                self.cache[pair] = (float(fresh.support[i]), contradiction, truncated)
        rows = [self.cache[pair] for pair in pairs]
        has_contradiction = bool(rows) and rows[0][1] is not None
        return PairScores(
            np.array([r[0] for r in rows], dtype=np.float32),
            np.array([r[1] for r in rows], dtype=np.float32) if has_contradiction else None,
            np.array([r[2] for r in rows], dtype=bool),
        )


def sweep(args: argparse.Namespace, scorer: object) -> None:
    """Agreement and pair savings for several (top_k, margin) settings, from one exact run's scores."""
    cached = CachedScorer(scorer)
    rows = [row for path in sorted(args.data.glob("*.jsonl")) for row in sample_rows(path, args.per_file, args.seed)]
    exact = Verifier(cached)
    for setting in args.sweep.split(","):
        top_k, margin = setting.split(":")
        pruner = build_pruner(args.pruner, top_k=int(top_k), margin=float(margin))
        tally = compare(rows, exact, Verifier(cached, pruner=pruner))
        agree = tally.same / tally.claims if tally.claims else float("nan")
        print(f"top_k {int(top_k):>2} margin {float(margin):4.2f}: {agree:7.2%} of {tally.claims} claims keep their "
              f"verdict; {_ratio(tally.pairs_exact, tally.pairs_pruned):.2f}x fewer pairs "
              f"({len(tally.flips)} flips)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorer", default="lexical")
    parser.add_argument("--pruner", default="lexical", help="lexical or embedding")
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--margin", type=float, default=None)
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--per-file", type=int, default=None, help="sample this many rows per file (default: all)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--show-flips", type=int, default=5)
    parser.add_argument("--sweep", default=None, help='e.g. "3:0.15,5:0.2": top_k:margin settings, scored once')
    args = parser.parse_args()
    if args.sweep:
        sweep(args, get_scorer(args.scorer))
        return

    options = {k: v for k, v in (("top_k", args.top_k), ("margin", args.margin)) if v is not None}
    pruner = build_pruner(args.pruner, **options)
    scorer = get_scorer(args.scorer)  # loaded once, shared by both verifiers
    exact, pruned = Verifier(scorer), Verifier(scorer, pruner=pruner)
    print(f"scorer {scorer.model_id}  pruner {pruner}  data {args.data}  per file {args.per_file or 'all'}")
    total = Tally()
    for path in sorted(args.data.glob("*.jsonl")):
        tally = compare(sample_rows(path, args.per_file, args.seed), exact, pruned)
        print(tally.line(path.stem), flush=True)
        total.add(tally)
    print(total.line("ALL"))
    for flip in total.flips[: args.show_flips]:
        print("  flip", flip)
    agree = total.same / total.claims if total.claims else float("nan")
    print(f"pruning {args.pruner} with {scorer.model_id}: {agree:.2%} of {total.claims} claims keep their verdict; "
          f"{_ratio(total.pairs_exact, total.pairs_pruned):.2f}x fewer pairs; "
          f"verify {_ratio(total.seconds_exact, total.seconds_pruned):.2f}x faster "
          f"(scoring stage {_ratio(total.score_exact, total.score_pruned):.2f}x)")


if __name__ == "__main__":
    main()
