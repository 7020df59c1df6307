#!/usr/bin/env bash
# Call 2 (the box's Triton 3.6, carry .whl): the extra-column tiles' corrected edge test, then the
# buckets whose cells get extra-column candidates (`extra_n_width`: the M = 128 and 4096 LLM cells
# whose tiles make a wave and a bit) tuned over those candidates only (`--match=-xn`), the library's
# configs timed beside them, into /tmp/tuned (also returned in $OUT): fp8 first, then fp16/bf16.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "extra" 2>&1 | tail -n 3 | tee "$out/tests-extra.txt"
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.6.0.json /tmp/tuned/
shapes="128x4608x3584 128x6144x4096 128x10240x8192 128x28672x4096 128x57344x8192 128x37888x3584 4096x4608x3584 4096x3584x3584 4096x3584x18944"
tune() {  # tune SECONDS DTYPE...
  local seconds=$1; shift
  timeout "$seconds" python3 -m ci.cli tune --shapes $shapes --dtypes "$@" --match=-xn --top-k 24 \
    --dir /tmp/tuned --deadline "$((seconds - 25))" > "$out/tune-$1.log" 2>&1
  echo "tune $*: exit $?"
  grep -E "^\[|->|kept|replaced|not reached" "$out/tune-$1.log" | tail -n 30
}
tune "${FP8_SECONDS:-230}" fp8_e4m3
tune "${HALF_SECONDS:-230}" fp16 bf16
cp /tmp/tuned/h200-triton3.6.0.json "$out/"
