#!/usr/bin/env bash
# Issue 19, item 3: does distilling mpnet's soft labels into the shipped small model pay? A controlled pair of
# runs from the same start (the shipped int8 weights, rebuilt in fp32), the same steps and the same recipe:
#   arm-hard  the v2 mix (the shipped model's own data), hard labels only: what further training alone does;
#   arm-soft  half of each batch, on average, teacher-labelled (window, claim) pairs from the distillation pool.
# Each arm is then exported and measured LODO on the same 1,000 answers as the cascade (bench/cascade.py, lexical
# and the shipped model on the same rows). Idempotent: each step is skipped when its output exists, and the
# training runs resume from their checkpoints, so a work period reruns it in the background:
#     nohup experiments/distill-experiment.sh >/dev/null 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${GW_RUNS:-$HOME/gw-runs}
TEACHER=${TEACHER:-$RUNS/mpnet-v3/bundle-1500}
STEPS=${STEPS:-600}
OUT="$RUNS/distill2"
GW=.venv/bin/groundwire
SMALL=src/groundwire/models/verifier
mkdir -p "$OUT"
exec >>"$OUT/experiment.log" 2>&1
echo "== $(date -u +%FT%TZ) start (${STEPS} steps per arm, teacher $TEACHER)"
[ -f "$OUT/start/model.safetensors" ] || $GW train dequantize --bundle "$SMALL" --out "$OUT/start"
# The pool (`train pool`, 16,900 pairs from train/ answer-like files) is labelled once; a stopped run continues.
[ -f "$RUNS/distill/pool.jsonl" ] || $GW train pool --out "$RUNS/distill/pool.jsonl"
nice -n 5 $GW train distill --teacher "onnx:$TEACHER" --pool "$RUNS/distill/pool.jsonl" --out "$OUT/labelled.jsonl"
[ -f "$RUNS/data_v2/train.jsonl" ] || $GW train prepare --mix v2 --out "$RUNS/data_v2" --seed 13
[ -f "$OUT/data_soft/train.jsonl" ] || $GW train prepare --mix v2 --out "$OUT/data_soft" --seed 13 \
    --soft "$OUT/labelled.jsonl" --soft-share 0.5
for arm in hard soft; do
    data="$RUNS/data_v2"; [ "$arm" = soft ] && data="$OUT/data_soft"
    # The shipped model's v2 recipe (len 192, 2 frozen layers, label smoothing 0.05) at a continuation's LR.
    OUT_ROOT="$OUT" START="$OUT/start" STEPS="$STEPS" experiments/arm.sh "arm-$arm" "$data"
done
echo "== $(date -u +%FT%TZ) done: $OUT/arm-{hard,soft}/lodo.txt"
