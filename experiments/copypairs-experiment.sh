#!/usr/bin/env bash
# Issue 49, item 1: copy pairs in training. A short continued fine-tune of the shipped model (its int8 weights
# rebuilt in fp32) on copy pairs and their same-surface negatives (train/copies.py) with a replay half of the
# shipped model's own v2 mix; then the int8 export measured against the shipped model on the same rows:
#   - bench/verbatim.py --copy-rule off: the model's own support on the 192 copied sentences, and the swapped ones;
#   - bench/lodo.py --limit 100 --no-meaning: LODO per family, lexical on the same rows.
# Idempotent: each step is skipped when its output exists, and the run resumes from its checkpoint, so
#     nohup experiments/copypairs-experiment.sh >/dev/null 2>&1 &
# reruns it (GW_RUNS, STEPS, LR, COPIES, LIMIT and ARM, the run's folder name, override). Nothing here touches the bundled model.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${GW_RUNS:-$HOME/gw-runs}
OUT="$RUNS/copypairs"
STEPS=${STEPS:-240}
LR=${LR:-3e-5}
COPIES=${COPIES:-3200}
LIMIT=${LIMIT:-100}
ARM=${ARM:-arm}
# ../shared beside the main checkout, also from a git worktree
DATA=${DATA:-$(git rev-parse --path-format=absolute --git-common-dir)/../../shared/data}
export PYTHONPATH=src
PY=.venv/bin/python
GW=.venv/bin/groundwire
SMALL=src/groundwire/models/verifier
DEV=("$DATA"/dev/*.jsonl)
mkdir -p "$OUT"
exec >>"$OUT/experiment.log" 2>&1
echo "== $(date -u +%FT%TZ) start ($STEPS steps, lr $LR, $COPIES copy pairs, LODO --limit $LIMIT)"
[ -f "$OUT/start/model.safetensors" ] || $GW train dequantize --bundle "$SMALL" --out "$OUT/start"
[ -f "$OUT/data_v2/train.jsonl" ] || nice -n 15 $GW train prepare --mix v2 --data "$DATA/train" --out "$OUT/data_v2" --seed 13
[ -f "$OUT/data_copies/train.jsonl" ] || nice -n 15 $PY -m groundwire.train.copies --data "$DATA/train" \
    --replay "$OUT/data_v2" --out "$OUT/data_copies" --copies "$COPIES" --seed 49
# The shipped model's v2 recipe (len 192, 2 frozen layers, label smoothing 0.05) at a continuation's LR. 240 steps
# of 16 see 3,840 of the 6,400 pairs; the measured run began with a 400-step schedule and was resumed at its
# step-38 checkpoint with 240, to finish inside a work period on a shared CPU (its LR there: 2.7e-5 vs 2.6e-5).
[ -f "$OUT/$ARM/final/model.safetensors" ] || nice -n 15 $GW train run --data "$OUT/data_copies" --out "$OUT/$ARM" \
    --base-model "$OUT/start" --max-length 192 --batch-size 16 --lr "$LR" --warmup 0.03 --freeze-layers 2 \
    --max-steps "$STEPS" --budget-minutes 100000 --seed 14 --threads 2
bundle="$OUT/$ARM/bundle"
[ -f "$bundle/model.onnx" ] || nice -n 15 $GW train export --model "$OUT/$ARM/final" --out "$bundle" \
    --max-length 256 --model-id "groundwire-verifier-v2-copies-$ARM-$STEPS"
# Both models calibrated by the same recipe on the same rows (`train combiner` on the LODO feature cache), so the
# copy figures compare like with like; the shipped model is also measured as shipped.
[ -f "$OUT/shipped-bundle/model.onnx" ] || cp -r "$SMALL" "$OUT/shipped-bundle"
for who in shipped "$ARM"; do
    b="$OUT/shipped-bundle"
    [ "$who" = "$ARM" ] && b=$bundle
    [ -f "$OUT/$who-lodo-$LIMIT.json" ] || nice -n 15 $PY bench/lodo.py --dev "$DATA/dev" --bundle "$b" \
        --limit "$LIMIT" --no-meaning --workers 2 --recipes lexical,model,mono --cache "$OUT/$who-$LIMIT.jsonl" \
        --lexical-cache "$OUT/lexical-$LIMIT.jsonl" --json "$OUT/$who-lodo-$LIMIT.json" > "$OUT/$who-lodo-$LIMIT.txt"
    [ -f "$OUT/$who-calibrate-$LIMIT.json" ] || $GW train combiner --bundle "$b" ${DEV[@]/#/--dev } \
        --limit "$LIMIT" --cache "$OUT/$who-$LIMIT.jsonl" > "$OUT/$who-calibrate-$LIMIT.json"
    [ -f "$OUT/verbatim-$who-off.txt" ] || nice -n 15 $PY bench/verbatim.py --dev "$DATA/dev" --copy-rule off \
        --scorer "onnx:$b" --failures > "$OUT/verbatim-$who-off.txt"
done
[ -f "$OUT/verbatim-as-shipped-off.txt" ] || nice -n 15 $PY bench/verbatim.py --dev "$DATA/dev" --copy-rule off \
    --failures > "$OUT/verbatim-as-shipped-off.txt"
[ -f "$OUT/overlap_blind-$ARM.txt" ] || $PY bench/overlap_blind.py "$OUT/shipped-$LIMIT.jsonl" "$OUT/$ARM-$LIMIT.jsonl" \
    > "$OUT/overlap_blind-$ARM.txt"
[ -f "$OUT/copy_pairs_val-$ARM.txt" ] || nice -n 15 $PY bench/copy_pairs_val.py "$OUT/data_copies/val.jsonl" "$OUT/start" \
    "$OUT/$ARM/final" > "$OUT/copy_pairs_val-$ARM.txt"
echo "== $(date -u +%FT%TZ) done: $OUT/{shipped,$ARM}-lodo-$LIMIT.txt, $OUT/verbatim-{shipped,$ARM}-off.txt"
