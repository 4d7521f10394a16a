#!/usr/bin/env bash
# Issue 21, item 2: does training on role sentences (train/role_events.py) and the human-labelled pairs of v3 pay?
# One arm (the v4 mix) from the same start, steps and recipe as the distillation's control arm-hard (the v2 mix),
# measured LODO on the same 1,000 answers (scripts/arm.sh). Rerun in the background; every step resumes:
#     nohup scripts/roles-experiment.sh >/dev/null 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${GW_RUNS:-$HOME/gw-runs}
mkdir -p "$RUNS/arms"
exec >>"$RUNS/arms/roles.log" 2>&1
echo "== $(date -u +%FT%TZ) start"
[ -f "$RUNS/data_v4/train.jsonl" ] || .venv/bin/groundwire train prepare --mix v4 --out "$RUNS/data_v4" --seed 13
scripts/arm.sh v4 "$RUNS/data_v4"
echo "== $(date -u +%FT%TZ) done: $RUNS/arms/v4/lodo.txt"
