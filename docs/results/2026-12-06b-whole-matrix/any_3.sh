#!/usr/bin/env bash
# With the few minutes any_2.sh left: on an H100, its re-tune goes on from where the deadline stopped
# it (--resume-since); on an H200, next_2.sh of 2026-12-06a (the one-row fp8 swap tiles, then the
# re-tune) in the time given.
#
#   OUT=$OUT TOTAL=seconds bash docs/results/2026-12-06b-whole-matrix/any_3.sh
set -uo pipefail
here=docs/results/2026-12-06b-whole-matrix
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case "$name" in
  *H200*) exec bash docs/results/2026-12-06a-h200-profile/next_2.sh ;;
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
  --resume-since 2026-12-06T06:38:45+00:00 --dir "$dir" --deadline "$((left - 30))" > "$out/tune.log" 2>&1
echo "tune: exit $?"; grep -E "^\[[0-9]+/[0-9]+\] .*(ms|failed)|gemmwatch tune: [0-9]+ entries" "$out/tune.log" | tail -n 20
cp "$dir/h100-sxm-triton3.6.0.json" "$out/"
