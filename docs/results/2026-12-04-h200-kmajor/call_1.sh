#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6): the kmajor_b configs' tests on the GPU, the K-major copy timed,
# and the four fp32-tf32 cubes tuned over the kmajor_b configs (`--match`), the library's
# incumbents timed beside them, into /tmp/tuned (also returned in $OUT).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider tests/test_matmul.py -k "kmajor or k_major or aligned" 2>&1 | tail -n 3 | tee "$out/tests.txt"
python3 docs/results/2026-12-04-h200-kmajor/copy_timing.py 2>&1 | tee "$out/copy.txt"
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.6.0.json /tmp/tuned/
timeout "${TUNE_SECONDS:-300}" python3 -m ci.cli tune --shapes square --dtypes fp32-tf32 --match='-kb$' --top-k 24 \
  --dir /tmp/tuned --deadline "$((${TUNE_SECONDS:-300} - 20))" > "$out/tune.log" 2>&1
echo "tune: exit $?"
tail -n 25 "$out/tune.log"
cp /tmp/tuned/h200-triton3.6.0.json "$out/"
