"""Rows per second of a batch check (`groundwire check --input`'s path, pipeline.check_rows), bundled model.

    .venv/bin/python bench/batch_speed.py --task summary --limit 60                 # RAGTruth summaries
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/batch_speed.py --task summary   # another checkout's code
    .venv/bin/python bench/batch_speed.py --task summary --pruner lexical          # scoring only the pruned pairs

Reads the dev file's rows of one task (default: RAGTruth's summaries, the held-out run's kind), loads the model
once, checks every row twice (the first pass warms caches and is not timed), and prints rows per second of wall
time and CPU seconds per row, the pairs scored per row, and the model form. A `PYTHONPATH` of another checkout's src/ runs its
groundwire on the same rows, for a before/after ratio on one machine: run both, alternating, and compare.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from shared_data import DEV

RAGTRUTH = DEV / "ragtruth_dev.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=RAGTRUTH)
    parser.add_argument("--task", default="summary")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--pruner", default="none", help="none (the exact matrix), lexical or embedding")
    args = parser.parse_args()
    from groundwire.config import CheckSettings
    from groundwire.data.rows import EvalRow, read_rows
    from groundwire.pipeline import build_verifier, check_rows

    rows = [row for row in read_rows(args.file) if isinstance(row, EvalRow) and row.task == args.task][: args.limit]
    verifier = build_verifier(CheckSettings(pruner=args.pruner))
    list(check_rows(verifier, rows))
    wall, cpu = time.perf_counter(), time.process_time()
    checked = list(check_rows(verifier, rows))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    pairs = sum((c.report.meta.pairs_scored or 0) for c in checked if c.report is not None) / len(rows)
    form = getattr(verifier.scorer, "form", "-")
    print(f"batch: {len(rows)} {args.task} rows from {args.file.name}, src {args.src}: {len(rows) / wall:.2f} rows/s, "
          f"{cpu / len(rows):.3f} CPU s/row, {pairs:.1f} pairs/row, form {form}, pruner {args.pruner}")


if __name__ == "__main__":
    main()
