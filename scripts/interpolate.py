"""Weight-space interpolation of two fine-tuned checkpoints of one architecture (WiSE-FT, Wortsman et al. 2022):
theta = (1 - alpha) * start + alpha * tuned. Fine-tuning further on a mix can rank unseen datasets worse while it
learns the mix; the interpolated weights are a cheap test of whether part of the way is better than either end.

    .venv/bin/python scripts/interpolate.py START_DIR TUNED_DIR OUT_DIR --alpha 0.5

START_DIR and TUNED_DIR are transformers checkpoints (model.safetensors, config, tokenizer); OUT_DIR gets the
tuned one's config and tokenizer files and the interpolated weights, ready for `groundwire train export`.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("start", type=Path)
    parser.add_argument("tuned", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--alpha", type=float, default=0.5, help="weight of TUNED (0: START, 1: TUNED)")
    args = parser.parse_args()
    if not 0.0 <= args.alpha <= 1.0:
        parser.error("--alpha must be within [0, 1]")
    start = load_file(str(args.start / "model.safetensors"))
    tuned = load_file(str(args.tuned / "model.safetensors"))
    if start.keys() != tuned.keys() or any(start[k].shape != tuned[k].shape for k in start):
        parser.error("the two checkpoints do not have the same tensors")
    mixed = {k: ((1 - args.alpha) * start[k].float() + args.alpha * tuned[k].float()).to(tuned[k].dtype)
             if tuned[k].is_floating_point() else tuned[k] for k in tuned}
    args.out.mkdir(parents=True, exist_ok=True)
    for item in args.tuned.iterdir():
        if item.is_file() and item.name != "model.safetensors":
            shutil.copy2(item, args.out / item.name)
    save_file(mixed, str(args.out / "model.safetensors"), metadata={"format": "pt"})
    print(f"wrote {args.out} (alpha {args.alpha}: {1 - args.alpha:g} x {args.start.name} + {args.alpha:g} x "
          f"{args.tuned.name}; {len(mixed)} tensors)")


if __name__ == "__main__":
    main()
