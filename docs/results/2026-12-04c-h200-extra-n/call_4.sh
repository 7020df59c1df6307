#!/usr/bin/env bash
# Call 4 (the box's Triton 3.6, carry .whl): the refusal's GPU test and the extra-column tests, then
# the tune call 2 did not finish, over the extra-column candidates only (`--match=-xn`; now without
# the 16-byte extra tiles in 128-deep K steps call 3 found wrong, and without fp8 tiles that need
# promotion by halves), the library's configs timed beside them: the fp16/bf16 LLM M = 128 buckets,
# then fp8 128x37888x3584. The library (from call 2's) is returned in $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "extra" 2>&1 | tail -n 3 | tee "$out/tests-extra.txt"
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.6.0.json /tmp/tuned/
tune() {  # tune SECONDS "SHAPES" DTYPE...
  local seconds=$1 shapes=$2; shift 2
  timeout "$seconds" python3 -m ci.cli tune --shapes $shapes --dtypes "$@" --match=-xn --top-k 24 \
    --dir /tmp/tuned --deadline "$((seconds - 25))" > "$out/tune-$1.log" 2>&1
  echo "tune $*: exit $?"
  grep -E "^\[|not reached|Error" "$out/tune-$1.log" | tail -n 30
}
tune "${HALF_SECONDS:-330}" "128x4608x3584 128x6144x4096 128x10240x8192 128x28672x4096 128x57344x8192 128x37888x3584" \
  fp16 bf16
tune "${FP8_SECONDS:-60}" 128x37888x3584 fp8_e4m3
cp /tmp/tuned/h200-triton3.6.0.json "$out/"
