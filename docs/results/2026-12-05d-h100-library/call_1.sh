#!/usr/bin/env bash
# The H100 SXM's first tuned library (the box's Triton 3.6, carry .whl), built on the H100 itself:
#   1. every bucket of the default matrix runs the H200's config, timed on the H100 beside cuBLAS
#      (`--top-k 0 --seed` the H200's library: a chip of the same die), so the gate dispatches from
#      a library measured here instead of autotuning each cell (8-10 s a cell, 2026-12-05c call 1);
#   2. then, while time is left, the buckets with a cell below cuBLAS in the H100 run of the H200's
#      configs (2026-12-05c call 2, warm) tuned over their first 8 candidates in the library's order,
#      the slowest first; a call stopped by its deadline prints the --resume-since time, which the
#      next call passes (step 1 is then skipped: the library it wrote is committed by then).
#
#   OUT=$OUT [TOTAL=seconds, default 570] bash docs/results/2026-12-05d-h100-library/call_1.sh [RESUME_SINCE]
#
# Then copy the returned h100-sxm-triton3.6.0.json to targets/tuned/ and run the whole matrix
# (docs/results/2026-12-03i-h200-arena/call_5.sh).
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
dir=/tmp/tuned-h100
mkdir -p "$dir"
cp targets/tuned/h100-sxm-triton3.6.0.json "$dir/" 2>/dev/null
source docs/results/2026-12-03g-h200-flush/box.sh
if [ ! -e "$dir/h100-sxm-triton3.6.0.json" ]; then
  timeout 420 python3 -m ci.cli tune --top-k 0 --seed targets/tuned/h200-triton3.6.0.json --dir "$dir" --fresh \
    --deadline 400 > "$out/seed.log" 2>&1
  echo "seed: exit $?"; grep -E "gemmwatch tune|Error" "$out/seed.log" | tail -n 20
  cp "$dir/h100-sxm-triton3.6.0.json" "$out/" 2>/dev/null
fi
left=$((${TOTAL:-570} - ($(date +%s) - begin)))
if [ "$left" -gt 90 ]; then
  timeout "$left" python3 -m ci.cli tune --shapes llm odd square --dtypes fp8_e4m3 fp16 bf16 \
    --run docs/results/2026-12-05c-h100-untuned/call_2/ev-warm/run-warm.json.gz --below 1.0 --top-k 8 \
    ${1:+--resume-since "$1"} --dir "$dir" --deadline "$((left - 40))" > "$out/tune.log" 2>&1
  echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune.log" | tail -n 40
fi
cp "$dir/h100-sxm-triton3.6.0.json" "$out/" 2>/dev/null
