#!/usr/bin/env bash
# Regenerates the current record at the top of docs/performance.md: measures on this machine's GPU
# (`gemmgen bench` of auto over benchmarks/shapes.txt in bf16 and f16, and of the tutorial steps
# at 4096^3 and 8192^3), then renders the tables, targets and chart (scripts/render_performance.py).
#   scripts/performance_record.sh [measure|render|all] [RAW_DIR]   (default: all build/perf)
# measure needs a GPU; render runs anywhere on a folder measured before (e.g. brought back from a
# lent GPU machine). Environment: GEMMGEN (the CLI; default build/tools/gemmgen/gemmgen), REPS (30),
# PARTS (measure only these of: bf16,f16,tutorial), STEPS (the tutorial steps, default v1..v10 pingpong).
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${1:-all}
RAW=${2:-build/perf}
GEMMGEN=${GEMMGEN:-build/tools/gemmgen/gemmgen}
REPS=${REPS:-30}
PARTS=${PARTS:-bf16,f16,tutorial}
STEPS=${STEPS:-v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 pingpong}
has() { [[ ",$PARTS," == *",$1,"* ]]; }

measure() {
  mkdir -p "$RAW"
  date -u +%F >"$RAW/date.txt"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version \
    --format=csv,noheader >"$RAW/device.csv"
  for dt in bf16 f16; do
    has "$dt" || continue
    "$GEMMGEN" bench --shapes benchmarks/shapes.txt --schedule auto --dtype "$dt" --reps "$REPS" \
      --json "$RAW/shapes_$dt.json" --plot "$RAW/shapes_$dt.svg" | tee "$RAW/shapes_$dt.log" ||
      echo "shapes $dt: gemmgen bench exited $?" | tee -a "$RAW/failures.txt"
  done
  if has tutorial; then
    for step in $STEPS; do
      "$GEMMGEN" bench --shapes benchmarks/tutorial_shapes.txt --schedule "$step" --reps "$REPS" \
        --json "$RAW/tutorial_$step.json" | tee "$RAW/tutorial_$step.log" ||
        echo "tutorial $step: gemmgen bench exited $?" | tee -a "$RAW/failures.txt"
    done
  fi
}

case "$STEP" in
  measure) measure ;;
  render) python3 scripts/render_performance.py "$RAW" ;;
  all) measure && python3 scripts/render_performance.py "$RAW" ;;
  *) echo "usage: scripts/performance_record.sh [measure|render|all] [RAW_DIR]" >&2; exit 2 ;;
esac
