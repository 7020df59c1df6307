#!/usr/bin/env bash
# Next session, call B (not yet run; the call before carries .t39/p0 to /tmp/t39parts): the whole
# matrix under Triton 3.9, cold, alone in its call (a cold 3.9 run took over 300 s in call 4).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03f-h200-triton39/unpack_t39.sh
source docs/results/2026-12-03g-h200-flush/box.sh
export GEMMWATCH_NATIVE_KERNELS=1
PYTHONPATH=/tmp/t39:/tmp/site EVIDENCE_COMMIT=1 RUNS="t39" INJECT= PACK=$out/ev39.tgz WORK=/tmp/w39 \
  bash ci/gpu_evidence.sh /tmp/ev39 560 2>&1 | tail -n 4
