"""Is a pair-pruning bound exact? Every dev answer's report with and without it, from one scoring of its pairs.

    .venv/bin/python bench/exact_bounds.py --limit 100          # the first 100 rows of every dev file, bundled
    .venv/bin/python bench/exact_bounds.py --scorer lexical     # every row, the lexical baseline

Issue 48 asks for pruning that is on by default and exact: a (window, claim) pair is skipped only when it cannot
change the report. Each answer is checked through `pipeline.check` with every pair scored, then with the bound's
pairs left out; the second check replays the first one's scores (`ReplayScorer`), so the model runs once and only
what the bound leaves out can differ. The report is compared as `bench/identity.py` compares it (`timings` aside,
and `extra.pairs_scored`, which counts the work). Bounds:

  shared-words  skip a window that shares no content word, figure or name with the claim (`content_words` of both
                as the model compares them, figures in canonical spelling).

Per dev file it prints the answers compared, how many reports differ, and of those how many change the answer's
decision, a claim's verdict or a score; the pairs per answer with and without the bound; and, as "accepted", the
ceiling of a bound that stops a claim once its verdict cannot move: the pairs of claims routed ACCEPT beyond their
first (the combiner rises with support, so an accepted claim stays accepted; every other claim can still move, so
all its pairs run). The last lines name the report fields that differed and how often.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groundwire.config import CheckSettings
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import Chunk, Report, Route
from groundwire.pipeline import CheckItem, build_verifier, check
from groundwire.scoring import get_scorer
from groundwire.scoring.base import PairScores, Scorer
from shared_data import DEV


def dev_rows(path: Path, limit: int | None) -> Iterator[tuple[dict[str, Any], CheckItem]]:
    """The first `limit` rows of a dev file (None: every row), each with the check item it makes."""
    with path.open(encoding="utf-8") as rows:
        for line in itertools.islice(rows, limit):
            row = json.loads(line)
            chunks = [Chunk(f"S{i}", text) for i, text in enumerate(row["context"], start=1)]
            yield row, CheckItem(row["answer"], chunks, question=row.get("question"), task=row.get("task"))


class ReplayScorer:
    """A scorer that runs each distinct (premise, hypothesis) pair once and replays its scores after: a check that
    asks for a subset of an earlier check's pairs sees exactly the scores that check saw. Everything else
    (thresholds, calibration, tokenizer) is the wrapped scorer's."""

    def __init__(self, inner: Scorer) -> None:
        self.inner = inner
        self.memo: dict[tuple[str, str], tuple[float, float | None, bool]] = {}
        self.runs = 0
        """Pairs the wrapped scorer ran."""

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def score(self, pairs: Sequence[tuple[str, str]]) -> PairScores:
        fresh = [pair for pair in dict.fromkeys(pairs) if pair not in self.memo]
        if fresh:
            scores = self.inner.score(fresh)
            self.runs += len(fresh)
            for i, pair in enumerate(fresh):
                contradiction = None if scores.contradiction is None else float(scores.contradiction[i])
                truncated = scores.truncated is not None and bool(scores.truncated[i])
                self.memo[pair] = (float(scores.support[i]), contradiction, truncated)
        rows = [self.memo[pair] for pair in pairs]
        has_contradiction = bool(rows) and rows[0][1] is not None
        return PairScores(
            np.array([r[0] for r in rows], dtype=np.float32),
            np.array([r[1] for r in rows], dtype=np.float32) if has_contradiction else None,
            np.array([r[2] for r in rows], dtype=bool),
        )


class SharedWords:
    """The bound: keep a (claim, window) pair only when they share a content word (figures and names included)."""

    def keep(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        window_words = [frozenset(content_words(window)) for window in windows]
        mask = np.zeros((len(claims), len(windows)), dtype=bool)
        for i, claim in enumerate(claims):
            words = frozenset(content_words(claim))
            mask[i] = [bool(words & other) for other in window_words] if words else True
        return mask


BOUNDS = {"shared-words": SharedWords}


@dataclass
class Tally:
    answers: int = 0
    differ: int = 0
    decision: int = 0
    verdict: int = 0
    score: int = 0
    pairs_exact: int = 0
    pairs_bound: int = 0
    accepted_beyond_first: int = 0
    fields: Counter[str] = field(default_factory=Counter)


def differing_fields(a: object, b: object, path: str = "") -> set[str]:
    """The paths (".claims[].features.support_second") at which two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {p for key in a.keys() | b.keys() for p in differing_fields(a.get(key), b.get(key), f"{path}.{key}")}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return {p for x, y in zip(a, b, strict=True) for p in differing_fields(x, y, f"{path}[]")}
    return set() if a == b else {path}


def comparable(report: Report) -> dict[str, object]:
    data = report.to_dict()
    data.pop("timings")
    data["extra"].pop("pairs_scored", None)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", default="bundled")
    parser.add_argument("--bound", default="shared-words", choices=sorted(BOUNDS))
    parser.add_argument("--limit", type=int, default=None, help="rows of each dev file (default: all)")
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev files' folder (from a worktree: ../shared's)")
    args = parser.parse_args()
    if not any(args.dev.glob("*.jsonl")):
        parser.error(f"no dev files in {args.dev}: give --dev DIR")
    scorer = ReplayScorer(get_scorer(args.scorer))
    settings = CheckSettings(scorer=args.scorer)
    exact = build_verifier(settings, scorer=scorer)  # type: ignore[arg-type]
    bounded = build_verifier(settings, scorer=scorer)  # type: ignore[arg-type]
    bounded.pruner = BOUNDS[args.bound]()
    print(
        f"{'file':28} {'answers':>7} {'differ':>6} {'decision':>8} {'verdict':>7} {'score':>5} "
        f"{'pairs/ans':>9} {'bound':>6} {'accepted':>8}"
    )
    total = Tally()
    for path in sorted(args.dev.glob("*.jsonl")):
        tally = Tally()
        for _, item in dev_rows(path, args.limit):
            plan = exact.plan(item.answer, item.chunks, question=item.question)
            full = check(exact, item, plan=plan)
            pruned = check(bounded, item, plan=plan)
            count(tally, plan.allowed, full, pruned)
        line_of(path.name, tally)
        for name in (
            "answers",
            "differ",
            "decision",
            "verdict",
            "score",
            "pairs_exact",
            "pairs_bound",
            "accepted_beyond_first",
        ):
            setattr(total, name, getattr(total, name) + getattr(tally, name))
        total.fields.update(tally.fields)
    line_of("all", total)
    print(f"model runs: {scorer.runs} pairs (each once)")
    for name, times in total.fields.most_common(12):
        print(f"  {times:6d} reports differ at {name}")
    return 0


def count(tally: Tally, allowed: np.ndarray, full: Report, pruned: Report) -> None:
    tally.answers += 1
    tally.pairs_exact += full.extra.get("pairs_scored", 0)
    tally.pairs_bound += pruned.extra.get("pairs_scored", 0)
    # A claim routed ACCEPT by the scorer cannot move once its running max accepts it: all its pairs but one.
    own = allowed.sum(axis=1) if allowed.size else np.zeros(len(full.claims), dtype=int)
    tally.accepted_beyond_first += sum(
        max(int(n) - 1, 0)
        for n, result in zip(own, full.claims, strict=True)
        if result.route is Route.ACCEPT and result.decided_by.value == "scorer"
    )
    fields = differing_fields(comparable(full), comparable(pruned))
    if fields:
        tally.differ += 1
        tally.fields.update(fields)
        tally.decision += full.decision != pruned.decision
        tally.verdict += any(a.verdict != b.verdict for a, b in zip(full.claims, pruned.claims, strict=True))
        tally.score += any(a.score != b.score for a, b in zip(full.claims, pruned.claims, strict=True))


def line_of(name: str, tally: Tally) -> None:
    n = max(tally.answers, 1)
    print(
        f"{name:28} {tally.answers:7d} {tally.differ:6d} {tally.decision:8d} {tally.verdict:7d} {tally.score:5d} "
        f"{tally.pairs_exact / n:9.2f} {tally.pairs_bound / n:6.2f} {tally.accepted_beyond_first / n:8.2f}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
