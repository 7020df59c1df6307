#!/usr/bin/env bash
# Call 3 (the box's Triton 3.6): the warm run of call 2 could not follow on the same machine (none
# could be started), so this call makes a fresh cold run and the warm run after it on one card,
# both with the operand arena (GEMMWATCH_ARENA=1); if the deadline cuts the warm run, the cold run
# still pairs with call 2's (another process, maybe another card).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
TRITON_CACHE_DIR=/tmp/tc-arena GEMMWATCH_ARENA=1 GEMMWATCH_NATIVE_KERNELS=1 RUNS="cold warm" INJECT= \
  PACK=$out/ev-arena-pair.tgz WORK=/tmp/w-arena bash ci/gpu_evidence.sh /tmp/ev-arena 580 2>&1 | tail -n 12
