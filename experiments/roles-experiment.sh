#!/usr/bin/env bash
# Issue 21, item 2: does training on role sentences (train/role_events.py), the two new perturbation kinds and the
# human-labelled pairs of v3 pay? Arms from the same start, steps and recipe as the distillation's control
# arm-hard (the v2 mix), measured LODO on the same 1,000 answers (experiments/arm.sh):
#   v4        the v4 mix: v3 (v2 + human-labelled pairs) + role pairs + date_generalize / hedge_dropped
#   v2-roles  the v2 mix + role pairs + the two kinds, no human-labelled pairs
# Rerun in the background; every step resumes:  nohup experiments/roles-experiment.sh >/dev/null 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${GW_RUNS:-$HOME/gw-runs}
mkdir -p "$RUNS/arms"
exec >>"$RUNS/arms/roles.log" 2>&1
echo "== $(date -u +%FT%TZ) start"
for mix in ${MIXES:-v4 v2-roles}; do
    [ -f "$RUNS/data_$mix/train.jsonl" ] || .venv/bin/groundwire train prepare --mix "$mix" --out "$RUNS/data_$mix" --seed 13
    experiments/arm.sh "$mix" "$RUNS/data_$mix"
    echo "== $(date -u +%FT%TZ) $mix done: $RUNS/arms/$mix/lodo.txt"
done
