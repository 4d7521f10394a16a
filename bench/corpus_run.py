"""Every text of the shared corpus through the whole check, lexical scorer: a count of rows and of exceptions (issue 34).

    .venv/bin/python bench/corpus_run.py                       # every dev answer and every train pair
    .venv/bin/python bench/corpus_run.py --limit 200           # the first 200 rows of each file
    .venv/bin/python bench/corpus_run.py --files dev           # dev/ only

Each dev row (its answer against its chunks, with its question and task) and each train pair (the hypothesis as
the answer, the premise as the one chunk) goes through `pipeline.check` with the lexical scorer and canonical
figures: claim splitting, canonical figures, every claim check, windows and scoring. The premise, the
hypothesis, every chunk and every answer also go through `canonical_text` and `extract_figures` on their own,
as the cache key and the context index read them. A refusal the verifier gives on purpose (an InputError: an
empty answer) is counted apart; any other exception is one, and the first few of each kind are printed with the
row's id. Nothing is asserted here: tests/core/test_corpus_sample.py runs a sample of the same code.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from shared_data import DATA


@dataclass
class Tally:
    rows: int = 0
    refused: int = 0
    exceptions: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.rows += other.rows
        self.refused += other.refused
        self.exceptions += other.exceptions
        self.kinds.update(other.kinds)
        self.examples.extend(other.examples[: max(0, 20 - len(self.examples))])


def corpus_items(path: Path, limit: int | None = None) -> Iterator[tuple[str, str, list[str], str | None, str | None]]:
    """(id, answer, chunks, question, task) for each line of a dev or train file."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if limit is not None and number >= limit:
                return
            row = json.loads(line)
            if "premise" in row:
                yield row["id"], row["hypothesis"], [row["premise"]], None, None
            else:
                yield row["id"], row["answer"], list(row["context"]), row.get("question"), row.get("task")


def run_file(path: Path, limit: int | None) -> tuple[str, Tally]:
    from groundwire.core.figures import canonical_text, extract_figures
    from groundwire.foundation.errors import InputError
    from groundwire.pipeline import CheckItem, CheckSettings, build_verifier, check

    verifier = build_verifier(CheckSettings(scorer="lexical", canonical_figures=True))
    tally = Tally()
    for row_id, answer, chunks, question, task in corpus_items(path, limit):
        tally.rows += 1
        try:
            for text in (answer, *chunks):
                canonical_text(text)
                extract_figures(text)
            check(verifier, CheckItem(answer, chunks, question=question, task=task))
        except InputError:
            tally.refused += 1
        except Exception as error:
            tally.exceptions += 1
            where = traceback.extract_tb(error.__traceback__)[-1]
            kind = f"{type(error).__name__} at {Path(where.filename).name}:{where.lineno}"
            tally.kinds[kind] += 1
            if tally.kinds[kind] <= 3:
                tally.examples.append(f"{path.name} {row_id}: {kind}: {error}")
    return path.name, tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--files", choices=("dev", "train", "all"), default="all")
    parser.add_argument("--limit", type=int, default=None, help="the first N rows of each file")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folders = ("dev", "train") if args.files == "all" else (args.files,)
    paths = sorted(p for folder in folders for p in (args.data / folder).glob("*.jsonl"))
    # The largest files first, so that the pool's last worker does not start the slowest one alone.
    paths.sort(key=lambda p: -p.stat().st_size)
    if not paths:
        print(f"no JSONL files under {args.data}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    total = Tally()
    print(f"{'file':38} {'rows':>7} {'refused':>8} {'exceptions':>10}")
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for name, tally in pool.map(run_file, paths, [args.limit] * len(paths)):
            print(f"{name:38} {tally.rows:7d} {tally.refused:8d} {tally.exceptions:10d}", flush=True)
            total.add(tally)
    print(f"{'all':38} {total.rows:7d} {total.refused:8d} {total.exceptions:10d}   "
          f"({time.perf_counter() - started:.0f} s)")
    for kind, count in total.kinds.most_common():
        print(f"  {count:6d}  {kind}")
    for example in total.examples:
        print(f"  e.g. {example}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
