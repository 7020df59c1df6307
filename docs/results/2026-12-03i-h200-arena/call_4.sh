#!/usr/bin/env bash
# Call 4 (the box's Triton 3.6), right after call 3 on the same card and Triton cache: a third run
# of the whole matrix with the operand arena (warm2), to pair with call 3's cold and warm runs.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
TRITON_CACHE_DIR=/tmp/tc-arena GEMMWATCH_ARENA=1 GEMMWATCH_NATIVE_KERNELS=1 RUNS="warm2" INJECT= \
  PACK=$out/ev-arena-warm2.tgz WORK=/tmp/w-arena2 bash ci/gpu_evidence.sh /tmp/ev-arena2 400 2>&1 | tail -n 8
