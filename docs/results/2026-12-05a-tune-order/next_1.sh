#!/usr/bin/env bash
# Next session, calls 1-3 (not yet run; the box's Triton 3.6, carry .whl).
#   First call only: fp8 128x6144x4096 (0.884x) has never timed the tile of cuBLAS's geometry there,
#   64 x 96 (a Gluon 64 x 64 tile with 32 extra columns, 128 tiles on 132 SMs), which its bucket's
#   other cell, 128x4608x3584, runs as 64 x 72 (0.782 -> 0.810x): its bucket tuned over the unsplit
#   extra-column tiles (--match), the library's configs timed beside them.
#   Every call: every bucket with a cell below native in the last whole-matrix run re-tuned, the
#   slowest first, each cell's coarse pass taking its first 16 candidates in the library's order
#   (`--order library`, the default since 2026-12-05; on the library's own rankings its first 16 held
#   a config within 1% of the best in 138 of 154 cells, its first 24 in 143: the fewer, the more
#   buckets a call reaches) plus the first of each kernel path they leave out (`--each-path 1`);
#   plan-next.txt lists them (`gemmwatch tune --plan --top-k 16`, no GPU). A call stopped
#   by its deadline prints the --resume-since time; the next call passes it:
#
#   OUT=$OUT bash docs/results/2026-12-05a-tune-order/next_1.sh [RESUME_SINCE]
#
# (TOTAL=seconds shortens the call from 570 s, for a call that ran something else before it;
# SKIP_XN=1 leaves out the first step.)
#
# Then copy the returned library over targets/tuned/h200-triton3.6.0.json (after each call: the
# next call starts from the committed one) and run the whole matrix
# (docs/results/2026-12-03i-h200-arena/call_5.sh).
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.6.0.json /tmp/tuned/
if [ -z "${1:-}" ] && [ -z "${SKIP_XN:-}" ]; then
  timeout 150 python3 -m ci.cli tune --shapes 128x6144x4096 --dtypes fp8_e4m3 --match='-gluon-w[sg]-xn[0-9]+$' \
    --dir /tmp/tuned --deadline 140 > "$out/tune-xn.log" 2>&1
  echo "tune xn: exit $?"; grep -E "^\[|gemmwatch tune" "$out/tune-xn.log"
fi
left=$((${TOTAL:-570} - ($(date +%s) - begin)))
timeout "$left" python3 -m ci.cli tune --shapes llm odd square --dtypes fp8_e4m3 fp16 bf16 \
  --run docs/results/2026-12-04e-h200-split-xn/call_3/ev-warm/run-warm.json.gz --below 1.0 --top-k 16 \
  ${1:+--resume-since "$1"} --dir /tmp/tuned --deadline "$((left - 40))" > "$out/tune.log" 2>&1
echo "tune: exit $?"
grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune.log" | tail -n 40
cp /tmp/tuned/h200-triton3.6.0.json "$out/"
