#!/usr/bin/env bash
# Call 4 (the call before carried .t39/p0 to /tmp/t39parts): both Triton versions' whole matrix on
# one card, Triton 3.9 (its library, targets/tuned/h200-triton3.9.0.json) then the box's 3.6, each
# cold, so that `gemmwatch compare --axis triton` can call cells (it calls nothing across cards).
set -uo pipefail
out=${OUT:-/tmp/out}
start=$(date +%s)
source docs/results/2026-12-03f-h200-triton39/unpack_t39.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee "$out/versions.txt"
export PYTHONUNBUFFERED=1 GEMMWATCH_NATIVE_KERNELS=1 GEMMWATCH_TUNED_DIR=$PWD/targets/tuned
PYTHONPATH=/tmp/t39:/tmp/site EVIDENCE_COMMIT=1 RUNS="t39" INJECT= PACK=$out/ev39.tgz WORK=/tmp/w39 \
  bash ci/gpu_evidence.sh /tmp/ev39 300 2>&1 | grep -E "exit|measured|committed"
left=$((575 - ($(date +%s) - start)))
echo "Triton 3.6: $left s left"
PYTHONPATH=/tmp/site RUNS="t36" INJECT= PACK=$out/ev36.tgz WORK=/tmp/w36 \
  bash ci/gpu_evidence.sh /tmp/ev36 "$left" 2>&1 | grep -E "exit|measured"
