#!/usr/bin/env bash
# Both Triton versions' whole matrix on one card, so `gemmwatch compare --axis triton` can call
# cells (it calls nothing across cards). Call E2 (the call before carried .t39/p0 to /tmp/t39parts):
# Triton 3.9 unpacked, its library's fp32-ieee 8192^3 bucket re-tuned with candidates (the 3.6
# config re-timed in call C spills under 3.9: 339 ms), then the whole matrix under Triton 3.9.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/tuned
source docs/results/2026-12-03f-h200-triton39/unpack_t39.sh
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw --format=csv | tee "$out/versions.txt"
cp targets/tuned/*.json /tmp/tuned/
timeout 110 python3 -m ci.cli tune --shapes 8192x8192x8192 --dtypes fp32-ieee --top-k 8 --refine 0 --finalists 1 \
  --deadline 60 --dir /tmp/tuned > "$out/tune-fp32.log" 2>&1; echo "== tune: exit $?"; grep "^\[" "$out/tune-fp32.log"
mkdir -p "$out/tuned"; cp /tmp/tuned/h200-triton3.9.0.json "$out/tuned/"
export PYTHONPATH=/tmp/t39:/tmp/site
EVIDENCE_COMMIT=1 GEMMWATCH_NATIVE_KERNELS=1 GEMMWATCH_TUNED_DIR=/tmp/tuned RUNS="t39" INJECT= \
  PACK=$out/ev39.tgz WORK=/tmp/w bash ci/gpu_evidence.sh /tmp/ev39 330 2>&1 | tail -5
