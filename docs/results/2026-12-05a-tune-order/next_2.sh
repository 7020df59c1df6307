#!/usr/bin/env bash
# Next session, after the re-tune and the whole matrix if device time is left (not yet run; the box's
# Triton 3.6, carry .whl): where the one-row start and the fp8 128-row reads go.
#   1. fp8 1x3584x3584 (8.37 us against cuBLAS's 7.59; ours an 8-way serial split of 1 x 64 tiles,
#      cuBLAS 56 CTAs with no split): one-row tiles with no split and a deeper K loop, timed beside
#      the library's config and cuBLAS (`gemmwatch try`).
#   2. Nsight Compute (clocks as found) on that cell and on fp8 128x4608x3584: each side's duration,
#      L2 and DRAM megabytes (whether ours reads 62 MB at L2 where cuBLAS reads 46).
#
#   OUT=$OUT [TOTAL=seconds] bash docs/results/2026-12-05a-tune-order/next_2.sh
#
# TOTAL (default 500) bounds both steps: 2/5 of it for the try, the rest for Nsight Compute.
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-500}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout $((total * 2 / 5)) python3 -m ci.cli try --cells "fp8_e4m3 1x3584x3584" "fp8_e4m3 1x4096x4096" \
  --configs BM1-BN64-BK1024-w4-s1-g8-fma BM1-BN32-BK1024-w4-s1-g8-fma BM1-BN64-BK512-w4-s2-g8-fma \
  BM1-BN32-BK256-w4-s2-g8-fma BM1-BN32-BK512-w8-s2-g8-fma --json "$out/try-one-row.json" > "$out/try-one-row.txt" 2>&1
echo "try: exit $?"; tail -n 20 "$out/try-one-row.txt"
timeout $((total - ($(date +%s) - begin) - 5)) python3 -m ci.ncu_probe --out "$out/ncu" --cells "fp8_e4m3 1x3584x3584" "fp8_e4m3 128x4608x3584" \
  > "$out/ncu.txt" 2>&1
echo "ncu: exit $?"; tail -n 30 "$out/ncu.txt"
