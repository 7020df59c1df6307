#!/usr/bin/env bash
# One H200 call (the box's Triton 3.6, carry .whl) for a session with little device time:
#   1. next_2.sh: one-row fp8 configs with no split timed beside the library's and cuBLAS, and
#      Nsight Compute (clocks as found) on fp8 1x3584x3584 and 128x4608x3584, ours against cuBLAS:
#      durations, and the megabytes each reads at L2 and from DRAM (the reason the tables give for
#      the 128-row fp8 cells: ours reads 1.36x cuBLAS's L2 bytes, it multicasts);
#   2. with the time left, next_1.sh's re-tune of the buckets below native (its xn step skipped).
#
#   OUT=$OUT [TOTAL=seconds, default 575] bash docs/results/2026-12-06a-h200-profile/call_1.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
bash docs/results/2026-12-05a-tune-order/next_2.sh
left=$((${TOTAL:-575} - ($(date +%s) - begin)))
echo "== re-tune, $left s left =="
[ "$left" -gt 120 ] && SKIP_XN=1 TOTAL=$left bash docs/results/2026-12-05a-tune-order/next_1.sh
