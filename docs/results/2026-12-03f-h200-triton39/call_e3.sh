#!/usr/bin/env bash
# Call E3, on the card of call E2: the whole matrix under the box's Triton 3.6, its own library.
set -uo pipefail
out=${OUT:-/tmp/out}
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 -c "import triton; print('triton', triton.__version__)"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw --format=csv | tee "$out/versions.txt"
EVIDENCE_COMMIT=1 GEMMWATCH_NATIVE_KERNELS=1 GEMMWATCH_TUNED_DIR=$PWD/targets/tuned RUNS="t36" INJECT= \
  PACK=$out/ev36.tgz WORK=/tmp/w bash ci/gpu_evidence.sh /tmp/ev36 560 2>&1 | tail -5
