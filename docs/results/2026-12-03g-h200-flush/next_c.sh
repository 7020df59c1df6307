#!/usr/bin/env bash
# Next session, call C (not yet run; on call B's machine, right after it): the whole matrix under
# the box's Triton 3.6, cold then warm (an A/A pair), and the Triton axis on one card: 3.9 (call
# B's run) against 3.6's cold run.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
export GEMMWATCH_NATIVE_KERNELS=1
RUNS="t36 t36warm" INJECT= PACK=$out/ev36.tgz WORK=/tmp/w36 bash ci/gpu_evidence.sh /tmp/ev36 560 2>&1 | tail -n 6
python3 -m ci.cli compare --axis triton --base-results /tmp/ev36/run-t36.json --head-results /tmp/ev39/run-t39.json \
  > "$out/compare-triton.md" 2>&1; echo "compare: exit $?"; head -n 40 "$out/compare-triton.md"
