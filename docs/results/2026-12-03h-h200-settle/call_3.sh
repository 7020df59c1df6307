#!/usr/bin/env bash
# Next session, call D (not yet run; on call C's machine, its Triton 3.6 cache warm): two warm runs
# with each placed side's replay captured in eight graphs (GEMMWATCH_CAPTURES=8), an A/A pair with
# no compile between the cells.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
GEMMWATCH_CAPTURES=8 RUNS="cg8a cg8b" INJECT= PACK=$out/evcg.tgz WORK=/tmp/w36 \
  bash ci/gpu_evidence.sh /tmp/evcg 560 2>&1 | tail -n 8
