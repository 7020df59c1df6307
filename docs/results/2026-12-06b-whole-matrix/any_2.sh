#!/usr/bin/env bash
# After call_1 (the whole matrix on the H100 SXM's finished library): on an H200, the whole matrix on
# its re-tuned library (any.sh); on an H100, a second re-tune pass over the buckets with a cell below
# cuBLAS in call_1's warm run, the slowest first, each over 16 candidates plus the first of each
# kernel path left out (the H200's re-tune recipe of 2026-12-06; the first H100 pass took 8).
#
# Call 3 stopped at its deadline: with the --resume-since time it printed, the H100 pass goes on
# (2026-12-06T06:38:45+00:00; an H200 still runs the whole matrix).
#
#   OUT=$OUT [TOTAL=seconds, default 560] bash docs/results/2026-12-06b-whole-matrix/any_2.sh [RESUME_SINCE]
set -uo pipefail
here=docs/results/2026-12-06b-whole-matrix
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case "$name" in
  *H200*) exec bash "$here/any.sh" ;;
  *H100*) ;;
  *) echo "no script for $name"; exit 2 ;;
esac
out=${OUT:-/tmp/out}
begin=$(date +%s)
dir=/tmp/tuned-h100
mkdir -p "$dir" && cp targets/tuned/h100-sxm-triton3.6.0.json "$dir/"
source docs/results/2026-12-03g-h200-flush/box.sh
left=$((${TOTAL:-560} - ($(date +%s) - begin)))
timeout "$left" python3 -m ci.cli tune --shapes llm odd square --dtypes fp8_e4m3 fp16 bf16 \
  --run "$here/call_1/ev-warm/run-warm.json.gz" --below 1.0 --top-k 16 --each-path 1 \
  ${1:+--resume-since "$1"} --dir "$dir" --deadline "$((left - 40))" > "$out/tune.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune.log" | tail -n 40
cp "$dir/h100-sxm-triton3.6.0.json" "$out/"
