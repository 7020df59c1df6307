#!/usr/bin/env bash
# After the whole matrix on the re-tuned library (any.sh on an H200), one more H200 call (the box's
# Triton 3.6, carry .whl):
#   1. the one-row fp8 cells on the sixteen-row swap tile with the deep pipeline that won the fp8
#      16-row buckets this session (BM16-BN64-BK128-w4-s12-g8-swap, 0.861 -> 1.017x on 16x4608x3584),
#      with and without a serial split, timed beside the library's 1 x 64 split and cuBLAS: Nsight
#      Compute found cuBLAS's 16-stage TMA tile reading the same bytes as ours at 38.7% of DRAM
#      bandwidth against our 32.9%, so the gap is bytes in flight, not bytes;
#   2. with the time left, the re-tune of the buckets below native going on where the first call of
#      2026-12-06 stopped (--resume-since).
#
#   OUT=$OUT [TOTAL=seconds, default 575] bash docs/results/2026-12-06a-h200-profile/next_2.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-575}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 170 python3 -m ci.cli try --cells "fp8_e4m3 1x3584x3584" "fp8_e4m3 1x4096x4096" "fp8_e4m3 1x4608x3584" \
  --configs BM16-BN64-BK128-w4-s12-g8-swap BM16-BN64-BK128-w4-s12-g8-sks2-swap BM16-BN64-BK128-w4-s12-g8-sks4-swap \
  BM16-BN64-BK256-w4-s6-g8-sks4-swap BM16-BN64-BK128-w8-s12-g8-sks2-swap \
  --json "$out/try-one-row-deep.json" > "$out/try-one-row-deep.txt" 2>&1
echo "try: exit $?"; tail -n 22 "$out/try-one-row-deep.txt"
left=$((total - ($(date +%s) - begin)))
echo "== re-tune, $left s left =="
[ "$left" -gt 120 ] && SKIP_XN=1 TOTAL=$left bash docs/results/2026-12-05a-tune-order/next_1.sh 2026-12-06T04:06:22+00:00
