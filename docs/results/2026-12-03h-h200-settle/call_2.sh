#!/usr/bin/env bash
# Call 2 (right after call 1, same machine, its Triton cache /tmp/tc-settle filled by call 1's cold
# run): the warm run of the GEMMWATCH_SETTLE=0.2 pair, which call 1's deadline had cut.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh >/dev/null
TRITON_CACHE_DIR=/tmp/tc-settle GEMMWATCH_SETTLE=0.2 GEMMWATCH_NATIVE_KERNELS=1 RUNS="warm" INJECT= \
  PACK=$out/evsettlew.tgz WORK=/tmp/wsettle2 bash ci/gpu_evidence.sh /tmp/evsettle2 560 2>&1 | tail -n 8
