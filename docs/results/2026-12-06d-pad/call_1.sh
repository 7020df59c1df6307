#!/usr/bin/env bash
# The pad twins on the cells whose rows are 2000 bytes apart (2026-12-06c-pitch found the pitch costs
# the 64 x 128 TMA tile 10.66 against 6.90 us on 1000^3), then a re-tune of those buckets on the pad
# twins alone (--match 'pad$'; the library's entry is timed beside them and kept unless one is faster).
#   1. 2026-12-06c-pitch/any_2.sh: configs with and without the copy beside cuBLAS and the library,
#      and the two cells whose entry already is a pad config (their copies now wider);
#   2. tune of 1000x1000x1000 and 3000x5000x1000 (fp16, bf16), then 127x4097x1023 (fp16, bf16,
#      fp32-ieee) and 1x1001x4095 (fp32-ieee), into /tmp/tuned; every library of the card's target
#      comes back under $OUT.
#
#   OUT=$OUT [TOTAL=seconds, default 580] bash docs/results/2026-12-06d-pad/call_1.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-580}
TOTAL=$((total * 2 / 5)) bash docs/results/2026-12-06c-pitch/any_2.sh
source docs/results/2026-12-03g-h200-flush/box.sh
mkdir -p /tmp/tuned && cp targets/tuned/*.json /tmp/tuned/
tune() {
  local log=$1; shift
  local left=$((total - ($(date +%s) - begin)))
  echo "== tune ($*), $left s left =="
  [ "$left" -gt 90 ] || return 0
  timeout "$left" python3 -m ci.cli tune "$@" --match 'pad$' --top-k 16 --dir /tmp/tuned \
    --deadline "$((left - 30))" > "$out/$log" 2>&1
  echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/$log" | tail -n 30
  cp /tmp/tuned/*.json "$out/"
}
tune tune-pitch.log --shapes 1000x1000x1000 3000x5000x1000 --dtypes fp16 bf16
tune tune-pad-cells.log --shapes 127x4097x1023 1x1001x4095 --dtypes fp16 bf16 fp32-ieee
