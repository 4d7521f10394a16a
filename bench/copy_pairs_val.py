"""Held-out copy pairs (train/copies.py) per kind: accuracy and mean entailment probability of each checkpoint.

    PYTHONPATH=src .venv/bin/python bench/copy_pairs_val.py ~/gw-runs/copypairs/data_copies/val.jsonl \\
        ~/gw-runs/copypairs/start ~/gw-runs/copypairs/arm/final

A checkpoint is a transformers folder (fp32 torch). The copy pairs are grouped by kind (canonical or as written
together; a premise that is the hypothesis itself is `copy_alone`), the replayed mix's validation pairs as one
group. What it shows: whether a run learned copies (entailment up on the copy kinds) without learning that
overlap alone means support (entailment flat on the swaps of the same surface).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

LABELS = ("entailment", "neutral", "contradiction")


def group(row: dict[str, str]) -> str:
    if row["source"] != "copies":
        return "replay (mix's val)"
    return "copy_alone" if row["premise"] == row["hypothesis"] else row["kind"].removesuffix("+canonical")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("val", type=Path)
    parser.add_argument("checkpoints", type=Path, nargs="+")
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(2)
    rows = [json.loads(line) for line in args.val.open(encoding="utf-8") if line.strip()]
    for checkpoint in args.checkpoints:
        tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        model = AutoModelForSequenceClassification.from_pretrained(checkpoint).eval()
        right: dict[str, float] = defaultdict(float)
        entailed: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for start in range(0, len(rows), 32):
            batch = rows[start : start + 32]
            encoded = tokenizer([r["premise"] for r in batch], [r["hypothesis"] for r in batch],
                                truncation="longest_first", max_length=256, padding=True, return_tensors="pt")
            with torch.no_grad():
                probs = model(**encoded).logits.softmax(-1)
            for row, p in zip(batch, probs, strict=True):
                key = group(row)
                count[key] += 1
                right[key] += float(int(p.argmax()) == LABELS.index(row["label"]))
                entailed[key] += float(p[0])
        print(checkpoint)
        for key in sorted(count):
            print(f"  {key:20} n={count[key]:3d} accuracy {right[key] / count[key]:.3f} "
                  f"p(entailment) {entailed[key] / count[key]:.3f}")


if __name__ == "__main__":
    main()
