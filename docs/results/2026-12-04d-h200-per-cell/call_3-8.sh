#!/usr/bin/env bash
# Calls 3-8 of 2026-12-04 (fourth session), in order, on one warm H200 (the idle release is 30 s):
#   3, 4  carry .t39/p0, then .t39/p1:   bash docs/results/2026-12-04b-h200-cooldown/call_2.sh p0   (then p1)
#   5     carry .t39/p2 .t39/SHA256 .whl: OUT=$OUT bash docs/results/2026-12-04c-h200-extra-n/next_39.sh
#         (Triton 3.9: the extra-column GPU tests, whose summary line tail -n 4 lost behind nanobind's
#         leak report, and the fp32-tf32 cubes tuned on -kb configs)
#   6     carry .whl: OUT=$OUT EVIDENCE_COMMIT=1 DEADLINE=540 bash docs/results/2026-12-03i-h200-arena/call_5.sh
#         (the whole matrix cold and warm, Triton 3.6, the library of calls 1-2)
#   7, 8  this script (Triton 3.9 left unpacked in /tmp/t39 by call 5): `bash call_3-8.sh tests`, then
#         `bash call_3-8.sh tune`, with "3.9." added to targets.configs.GLUON_EXTRA_N_TRITON for call 8.
set -uo pipefail
out=${OUT:-/tmp/out}
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1 GEMMWATCH_TUNED_DIR=$PWD/targets/tuned
case ${1:?tests or tune} in
  tests)
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "xn or extra" -rfE > "$out/tests-extra-39.txt" 2>&1
    grep -E "passed|failed|FAILED|ERROR|skipped" "$out/tests-extra-39.txt" | grep -v leaked | tail -n 15 ;;
  tune)
    mkdir -p /tmp/tuned39 && cp targets/tuned/h200-triton3.9.0.json /tmp/tuned39/
    timeout 270 python3 -m ci.cli tune --shapes 128x10240x8192 128x4608x3584 128x37888x3584 \
      --dtypes fp8_e4m3 fp16 bf16 --match=-xn --top-k 24 --dir /tmp/tuned39 --deadline 230 > "$out/tune-xn-39.log" 2>&1
    echo "tune: exit $?"; grep -E "^\[|not reached|Error" "$out/tune-xn-39.log" | tail -n 20
    cp /tmp/tuned39/h200-triton3.9.0.json "$out/" ;;
esac
