#!/usr/bin/env bash
# Call 5b (carry .whl; the machine of call 5, still warm, right after it): call 5's warm run was cut
# by its deadline 10 s before its end, so the warm run alone, on the same Triton cache, with the
# cool start (GEMMWATCH_COOL_START=2), packed into $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh >/dev/null
GEMMWATCH_COOL_START=2 EVIDENCE_COMMIT=1 TRITON_CACHE_DIR=/tmp/tc-default GEMMWATCH_NATIVE_KERNELS=1 RUNS=warm INJECT= \
  PACK=$out/ev-default-warm.tgz WORK=/tmp/w-default-warm2 bash ci/gpu_evidence.sh /tmp/ev-default-warm2 330 2>&1 | tail -n 6
