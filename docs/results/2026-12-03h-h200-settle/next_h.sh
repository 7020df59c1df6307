#!/usr/bin/env bash
# Next session, calls H and I (not yet run; the box's Triton 3.6): the whole matrix with the operand
# arena (GEMMWATCH_ARENA=1), one run per call (a cold run takes 220-335 s, a warm one 170-230 s:
# two in one call's 600 s were cut twice this session): `RUN=cold` on an empty Triton cache in
# /tmp/tc-arena, then, right after on the same machine, `RUN=warm`. Compare offline:
#   python3 -m ci.cli noise --clocks COLD WARM
set -uo pipefail
out=${OUT:-/tmp/out}
run=${RUN:?RUN=cold or RUN=warm}
source docs/results/2026-12-03g-h200-flush/box.sh
TRITON_CACHE_DIR=/tmp/tc-arena GEMMWATCH_ARENA=1 GEMMWATCH_NATIVE_KERNELS=1 RUNS="$run" INJECT= \
  PACK=$out/ev-arena-$run.tgz WORK=/tmp/w-arena-$run bash ci/gpu_evidence.sh /tmp/ev-arena-$run 570 2>&1 | tail -n 8
