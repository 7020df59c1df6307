#!/usr/bin/env bash
# Call D (Triton 3.9 in /tmp/t39, its library in /tmp/tuned from call C): the whole matrix under
# Triton 3.9, cold then warm, as the 3.6 runs of earlier sessions (ci/gpu_evidence.sh).
set -uo pipefail
out=${OUT:-/tmp/out}
export PYTHONPATH=/tmp/t39:/tmp/site PYTHONUNBUFFERED=1
[ "${ONE_ARRIVAL:-0}" = 1 ] && { patch -p1 < docs/results/2026-12-03e-h200-clusters/one_arrival.patch || exit 1; }
python3 -c "import triton; print('triton', triton.__version__)"
EVIDENCE_COMMIT=1 GEMMWATCH_NATIVE_KERNELS=1 GEMMWATCH_TUNED_DIR=/tmp/tuned RUNS="cold warm" INJECT= \
  PACK=$out/ev.tgz WORK=/tmp/w bash ci/gpu_evidence.sh /tmp/ev 560
