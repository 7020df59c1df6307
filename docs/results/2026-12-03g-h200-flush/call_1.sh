#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6): the flush buffers' GPU tests; the flush-placement probe (does a
# native time follow where the L2 flush buffer lies, and do 8 buffers taken in turn average it
# out?); then the whole matrix cold and warm with GEMMWATCH_FLUSH_BUFFERS=8 (an A/A pair).
set -uo pipefail
out=${OUT:-/tmp/out}
start=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py \
  -k "flush_buffers or placements_are_issued or early_workspaces" > "$out/pytest-flush.txt" 2>&1 ||
  { tail -n 30 "$out/pytest-flush.txt"; exit 1; }
tail -n 2 "$out/pytest-flush.txt"
timeout 200 python3 -m ci.state_probe --out "$out/flush-probe.json" --reps 8 --rounds 30 --phases fixed flush \
  --cold-l2 suite+fb1 suite+fb8 --cells "bf16 128x3584x18944" "fp16 1x3584x18944" "fp16 1x4608x3584" \
  "fp8_e4m3 128x8192x8192" > "$out/flush-probe.txt" 2> "$out/flush-probe.err"
echo "probe rc $?"; grep -v '^   ' "$out/flush-probe.txt"; tail -n 3 "$out/flush-probe.err"
left=$((590 - ($(date +%s) - start)))
echo "whole matrix: $left s left"
GEMMWATCH_FLUSH_BUFFERS=8 EVIDENCE_COMMIT=1 GEMMWATCH_NATIVE_KERNELS=1 RUNS="cold warm" INJECT= \
  PACK=$out/ev.tgz WORK=/tmp/w bash ci/gpu_evidence.sh /tmp/ev "$left" 2>&1 | tail -n 12
