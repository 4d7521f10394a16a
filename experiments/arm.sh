#!/usr/bin/env bash
# One controlled training arm: continue the shipped small model (rebuilt in fp32) on a prepared mix with the v2
# recipe at a continuation's LR, export it, and measure it LODO on the same 1,000 answers as the cascade
# (bench/cascade.py puts the shipped model and lexical on the same rows). Idempotent: each step is skipped when
# its output exists, and training resumes from its checkpoint.
#     experiments/arm.sh NAME DATA_DIR        -> $GW_RUNS/arms/NAME/{bundle,features.jsonl,lodo.txt,lodo.json}
# OUT_ROOT overrides where the arm is written (experiments/distill-experiment.sh keeps its arms under distill2/);
# SMALL_CACHE is the shipped model's feature cache on the same rows, collected by the same code as the arm's.
# An arm whose final/ exists is not trained (scripts/interpolate.py writes one from two trained arms).
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=$1 DATA=$2
RUNS=${GW_RUNS:-$HOME/gw-runs}
STEPS=${STEPS:-600}
LR=${LR:-2e-5}
OUT_ROOT=${OUT_ROOT:-$RUNS/arms}
START=${START:-$RUNS/distill2/start}
GW=.venv/bin/groundwire
ARM="$OUT_ROOT/$NAME"
mkdir -p "$ARM"
[ -f "$START/model.safetensors" ] || $GW train dequantize --bundle src/groundwire/models/verifier --out "$START"
[ -f "$ARM/final/model.safetensors" ] || nice -n 10 $GW train run --data "$DATA" --out "$ARM" --base-model "$START" --max-length 192 \
    --batch-size 16 --lr "$LR" --warmup 0.03 --freeze-layers 2 --max-steps "$STEPS" --budget-minutes 100000 \
    --seed 14 --threads 2
bundle="$ARM/bundle"
[ -f "$bundle/model.onnx" ] || nice -n 10 $GW train export --model "$ARM/final" --out "$bundle" \
    --max-length 256 --model-id "groundwire-verifier-v2-$NAME-$STEPS"
DEV=(../shared/data/dev/*.jsonl)
[ -f "$ARM/features.jsonl" ] || nice -n 10 $GW train combiner --bundle "$bundle" ${DEV[@]/#/--dev } \
    --limit 100 --workers 2 --cache "$ARM/features.jsonl" > "$ARM/calibrate.json"
[ -f "$ARM/lodo.json" ] || nice -n 10 .venv/bin/python bench/cascade.py --large-bundle "$bundle" \
    --limit 100 --cache "${SMALL_CACHE:-$RUNS/canon/small.jsonl}" --large-cache "$ARM/features.jsonl" \
    --lexical-cache "$RUNS/cascade/lexical.jsonl" --json "$ARM/lodo.json" > "$ARM/lodo.txt"
[ -f "$ARM/claim_cases.txt" ] || .venv/bin/python bench/claim_cases.py --scorers "bundled,onnx:$bundle,lexical" \
    > "$ARM/claim_cases.txt"
