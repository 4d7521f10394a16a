"""Whether a task's own cold-start reject threshold would hold leave-one-family-out (issue 56 item 1's rule for a
per-task threshold: only where LODO shows it holds on each of its families left out).

    .venv/bin/python bench/task_reject.py ../shared/data/dev/begin_*.jsonl --cache-dir runs/loop --task dialogue

The shipped calibration rejects on a deciding check's finding only (reject_at 0: some dev family has over 10% of its
faithful answers at the very bottom), so in a family that is mostly hallucinated nearly everything the model doubts
is escalated. For each file given (one family each), this fits a reject threshold for the task at the targets (10%
false reject, 90% confidence, operating.reject_threshold) on the faithful answers of the other files, and routes
the one left out by it: its false reject, the share of its hallucinated answers rejected, and the escalation of its
answers with the shipped accept threshold (approximate: claimless answers and the data2text guard aside). Then the
same fitted on every file with the margin the strictest family needed when left out (the rule calibration v7's
accept margin follows), in sample. The lexical baseline at its default reject_at 0.2 is printed beside each family.
Claim features come from the per-file caches bench/learning_table.py writes (`<stem>.jsonl`, and
`<stem>.lexical.jsonl` for the lexical baseline); a file without a cache is scored first. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from groundwire.calibration import combine
from groundwire.calibration.adapt import shipped
from groundwire.calibration.recipe import Fitted, answer_points
from groundwire.evaluation.operating import reject_threshold, round_down
from groundwire.scoring.onnx import OnnxScorer, bundled_path
from groundwire.train.calibrate import features_for
from learning_table import lexical_rows

TARGET_FRR = 0.10
CONFIDENCE = 0.9


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    hallucinated: np.ndarray
    scores: np.ndarray

    @property
    def faithful_scores(self) -> np.ndarray:
        return self.scores[~self.hallucinated]

    def routed(self, reject_at: float, accept_at: float) -> str:
        """False reject, hallucinated rejected and escalation at these thresholds."""
        rejected = self.scores <= reject_at
        frr = float((rejected & ~self.hallucinated).sum() / max((~self.hallucinated).sum(), 1))
        caught = float((rejected & self.hallucinated).sum() / max(self.hallucinated.sum(), 1))
        escalated = float(((self.scores < accept_at) & ~rejected).mean())
        return f"false reject {frr:.3f}, hallucinated rejected {caught:.2f}, escalation ~{escalated:.2f}"

    def needs(self) -> float:
        """The highest reject threshold at which at most TARGET_FRR of its faithful answers are rejected (in sample)."""
        ordered = np.sort(self.faithful_scores)
        k = int(np.floor(TARGET_FRR * len(ordered) + 1e-9))
        return float(np.nextafter(ordered[k], -np.inf)) if k < len(ordered) else 1.0


def family_of(name: str, rows: list[combine.ClaimRow], routing: Fitted, task: str) -> Family:
    points = [p for p in answer_points(rows, combine.claim_scores(routing.combiner, rows))
              if p.key == task or p.key.startswith(f"{task}/")]
    return Family(name, np.array([p.hallucinated for p in points], dtype=bool),
                  np.array([p.score for p in points], dtype=float))


def fitted_on(families: list[Family]) -> float:
    return round_down(reject_threshold(np.concatenate([f.faithful_scores for f in families]), TARGET_FRR, CONFIDENCE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+", help="labelled files of the task, one family each")
    parser.add_argument("--cache-dir", type=Path, required=True, help="per-file claim-feature caches")
    parser.add_argument("--task", default="dialogue", help="the calibration key (its '/long' answers included)")
    args = parser.parse_args()
    scorer = OnnxScorer(bundled_path())
    routing = shipped(scorer.calibration)
    accept_at = routing.pooled[0]
    families, lexical = [], {}
    for path in args.files:
        rows = [r for r in features_for(bundled_path(), [path], limit=None, cache=args.cache_dir / f"{path.stem}.jsonl")
                if r.file == path.stem]
        families.append(family_of(path.stem, rows, routing, args.task))
        lexical_claims, baseline = lexical_rows(path, args.cache_dir / f"{path.stem}.lexical.jsonl")
        lexical[path.stem] = family_of(path.stem, lexical_claims, shipped(baseline.calibration), args.task)
    lexical_pair = shipped(baseline.calibration).pooled
    print(f"task {args.task}: reject threshold at false reject {TARGET_FRR:g}, {CONFIDENCE:.0%} confidence; shipped "
          f"accept_at {accept_at:g}, reject_at {routing.pooled[1]:g}; lexical at {lexical_pair[0]:g} / "
          f"{lexical_pair[1]:g}")
    margins = []
    for held in families:
        others = [f for f in families if f is not held]
        reject_at = fitted_on(others)
        margins.append(max(0.0, reject_at - held.needs()))
        print(f"\n{held.name} ({len(held.scores)} answers with a claim), left out:")
        print(f"  shipped (reject_at {routing.pooled[1]:g}): {held.routed(routing.pooled[1], accept_at)}")
        print(f"  fitted on the others (reject_at {reject_at:.4f}): {held.routed(reject_at, accept_at)}")
        print(f"  lexical baseline: {lexical[held.name].routed(lexical_pair[1], lexical_pair[0])}")
    margin = max(margins)
    every = round_down(max(fitted_on(families) - margin, 0.0))
    print(f"\nfitted on all {len(families)} with the margin the strictest left-out family needed ({margin:.4f}): "
          f"reject_at {every:.4f}, in sample:")
    for family in families:
        print(f"  {family.name}: {family.routed(every, accept_at)}")


if __name__ == "__main__":
    main()
