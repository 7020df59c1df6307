#!/usr/bin/env bash
# Call 5 (the box's Triton 3.6): the default protocol (2026-12-03: the operand arena, no knob set),
# a cold run on an empty Triton cache and a warm run after it on the same card, each packed into
# $OUT as soon as it ends (so a cut warm run keeps the cold one).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
start=$(date +%s)
for run in cold warm; do
  left=$((${DEADLINE:-500} - ($(date +%s) - start)))
  [ "$left" -gt 120 ] || { echo "$run: skipped, $left s left"; continue; }
  TRITON_CACHE_DIR=/tmp/tc-default GEMMWATCH_NATIVE_KERNELS=1 RUNS="$run" INJECT= \
    PACK=$out/ev-default-$run.tgz WORK=/tmp/w-default-$run bash ci/gpu_evidence.sh /tmp/ev-default-$run "$left" 2>&1 | tail -n 5
done
