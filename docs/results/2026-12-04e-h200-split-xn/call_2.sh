#!/usr/bin/env bash
# Call 2 (the box's Triton 3.6, carry .whl): the one-row (M = 1) buckets with a cell below native in
# the last whole-matrix run, tuned over the target's first 128 candidates of each cell. The tunes
# since the per-cell ranking ran with --top-k 24, where the one-row FMA configs start at the 29th
# (fp16 1x4608x3584: BM1-BN128-BK64-w4-s3-g8-sks16-fma, which wins 1x3584x3584 at 1.12x, 31st).
#
#   OUT=$OUT bash docs/results/2026-12-04e-h200-split-xn/call_2.sh
set -uo pipefail
TOP_K=all RUN=docs/results/2026-12-04d-h200-per-cell/call_6/ev-warm/run-warm.json.gz BELOW=1.0 SECONDS_LEFT=570 \
  bash docs/results/2026-12-04d-h200-per-cell/tune.sh \
  "1x6144x4096 1x4096x4096 1x28672x4096 1x4096x14336 1x10240x8192 1x8192x8192 1x57344x8192 1x8192x28672 1x4608x3584 1x3584x3584 1x37888x3584 1x3584x18944 1x1001x4095" \
  fp16 bf16 fp8_e4m3
