"""Distillation (issue 19): a larger model's soft labels on unlabelled (window, claim) pairs train the small one.

Two steps, each resumable, because on a CPU the teacher labels a few pairs a second:
1. `build_pool` splits answer-like texts of train/ files into claims and their contexts into windows, exactly as
   the verifier does at check time (`Verifier.plan`), and keeps every (window, claim) pair the check would score.
   The labels of those files are not read: the teacher supplies them.
2. `label_pool` scores the pool with the teacher (any `Scorer`: `hf:<checkpoint>` or an ONNX bundle) and appends
   each pair with the teacher's probabilities; rerun it and it continues after the last line written.

`groundwire train prepare --soft <labelled.jsonl>` then adds the labelled pairs to a mix's training split, and
`train run` fits the small model to the teacher's distribution on them (train/loop.py `_targets`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from groundwire.config import CheckSettings
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.pipeline import build_verifier
from groundwire.scoring.base import Scorer
from groundwire.train.data import LABELS, Pair, PairRow, read_pairs

# train/ files whose hypothesis is answer-like text (an answer, a summary, a response, a citing sentence) and
# whose premise is the context it was written from: the shape of a RAG check. Commercially usable sources only.
POOL_SOURCES: dict[str, int] = {
    "halueval_summarization": 600, "halueval_qa": 1500, "halueval_dialogue": 800, "citation_integrity": 800,
    "summacoz_inconsistent": 300, "climate_fever": 600, "contractnli": 400, "check_covid": 400,
}
"""Rows drawn from each file (at most; a file may hold fewer)."""


@dataclass(frozen=True, slots=True)
class PoolPair:
    id: str
    """A content hash of (premise, hypothesis): the same pair from two rows is kept once."""
    premise: str
    hypothesis: str
    source: str


class PoolRow(TypedDict):
    id: str
    premise: str
    hypothesis: str
    source: str


def _pair_id(premise: str, hypothesis: str) -> str:
    return hashlib.sha256(f"{premise}\x00{hypothesis}".encode()).hexdigest()[:16]


def pool_pairs(rows: Sequence[PairRow], source: str, scorer: str | None, *, max_pairs_per_row: int = 12,
               rng: random.Random) -> Iterator[PoolPair]:
    """The (window, claim) pairs the verifier would score for each row (premise = one chunk, hypothesis = the
    answer), at most `max_pairs_per_row` of them per row (a seeded sample), so one long document cannot fill
    the pool."""
    verifier = build_verifier(CheckSettings(scorer=scorer))
    for row in rows:
        if not row["hypothesis"].strip() or not row["premise"].strip():
            continue
        plan = verifier.plan(row["hypothesis"], [row["premise"]])
        pairs = [(plan.windows[j].text, plan.claims[i].text) for i, j in zip(*plan.allowed.nonzero(), strict=True)]
        if len(pairs) > max_pairs_per_row:
            pairs = rng.sample(pairs, max_pairs_per_row)
        for premise, hypothesis in pairs:
            yield PoolPair(_pair_id(premise, hypothesis), premise, hypothesis, source)


def build_pool(data_dir: Path, out: Path, *, scorer: str | None = None, sources: dict[str, int] | None = None,
               seed: int = 13, max_pairs_per_row: int = 12) -> dict[str, int]:
    """Write the unlabelled pool (one PoolRow per line) and return the pairs kept per source.

    `scorer` sets the windows (its token window), so use the model that will be distilled into: the pool then
    holds the very pairs it scores at check time."""
    sources = POOL_SOURCES if sources is None else sources
    missing = [stem for stem in sources if not (data_dir / f"{stem}.jsonl").is_file()]
    if missing:
        raise InputError(f"{data_dir}: the pool needs {', '.join(f'{m}.jsonl' for m in missing)}",
                         code=ErrorCode.FILE_NOT_FOUND)
    rng = random.Random(seed)
    seen: set[str] = set()
    counts: dict[str, int] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for stem, n in sources.items():
            rows = read_pairs(data_dir / f"{stem}.jsonl")
            # A seeded sample of rows. Rows of a paired file can share a premise (a right and a hallucinated
            # answer); a (window, claim) pair two rows share is kept once (the id check below).
            rows = rng.sample(rows, min(n, len(rows)))
            counts[stem] = 0
            for pair in pool_pairs(rows, stem, scorer, max_pairs_per_row=max_pairs_per_row, rng=rng):
                if pair.id in seen:
                    continue
                seen.add(pair.id)
                row: PoolRow = {"id": pair.id, "premise": pair.premise, "hypothesis": pair.hypothesis,
                                "source": pair.source}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                counts[stem] += 1
    return counts


def read_pool(path: Path) -> list[PoolRow]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def teacher_probs(scorer: Scorer, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
    """(entailment, neutral, contradiction) per pair, in LABELS order; the teacher needs a contradiction head."""
    scores = scorer.score(pairs)
    if scores.contradiction is None:
        raise InputError(f"the teacher {scorer.model_id} has no contradiction head: distil from a 3-way model",
                         code=ErrorCode.INVALID_OPTION)
    out = []
    for support, contradiction in zip(scores.support.tolist(), scores.contradiction.tolist(), strict=True):
        neutral = max(0.0, 1.0 - support - contradiction)
        total = support + neutral + contradiction
        out.append((support / total, neutral / total, contradiction / total))
    return out


def label_pool(pool: Path, scorer: Scorer, out: Path, *, batch_size: int = 32, limit: int | None = None) -> int:
    """Append teacher-labelled pairs to `out` (Pair lines with `probs`), after the ones a previous run wrote.

    Returns how many pairs `out` holds. A batch is written and flushed as a whole, so an interrupted run loses at
    most the batch in flight."""
    rows = read_pool(pool)[:limit]
    done = sum(1 for _ in out.open(encoding="utf-8")) if out.is_file() else 0
    if done > len(rows):
        raise InputError(f"{out} holds {done} pairs but {pool} only {len(rows)}: was it labelled from another pool?",
                         code=ErrorCode.INVALID_FILE)
    source = f"distill:{scorer.model_id}"
    with out.open("a", encoding="utf-8") as fh:
        for start in range(done, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            probs = teacher_probs(scorer, [(r["premise"], r["hypothesis"]) for r in batch])
            for row, p in zip(batch, probs, strict=True):
                label = LABELS[max(range(len(LABELS)), key=p.__getitem__)]
                pair = Pair(row["premise"], row["hypothesis"], label, source, f"distill/{row['source']}", probs=p)
                fh.write(json.dumps(pair.row(), ensure_ascii=False) + "\n")
            fh.flush()
            done = start + len(batch)
    return done
