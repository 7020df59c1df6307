#!/usr/bin/env bash
# Next GPU call (any card; the box's Triton 3.6, carry .whl): the copy of one operand alone
# (`pad_a`, `pad_b`: half the copy of `pad`, built after call_3) on the cells whose rows are all
# 16-byte multiples and none a 128-byte one, beside the copy of both and none, then those buckets
# re-tuned on all three kinds of copy (the library's entry timed beside them, kept unless one is
# faster), into the checkout's library, which comes back under $OUT.
#
#   OUT=$OUT [TOTAL=seconds, default 300] bash docs/results/2026-12-06d-pad/next.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-300}
source docs/results/2026-12-03g-h200-flush/box.sh
configs=()
for tile in BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64 BM128-BN256-BK64-w8-s4-g8-tma BM64-BN128-BK128-w4-s4-g8-tma; do
  configs+=("$tile" "$tile-pad" "$tile-pada" "$tile-padb")
done
timeout $((total / 2)) python3 -m ci.cli try --cells "fp16 3000x5000x1000" "bf16 3000x5000x1000" \
  "fp16 1000x1000x1000" "bf16 1000x1000x1000" --configs "${configs[@]}" \
  --json "$out/try-one-pad.json" > "$out/try-one-pad.txt" 2>&1
echo "try: exit $?"; tail -n 60 "$out/try-one-pad.txt"
left=$((total - ($(date +%s) - begin)))
[ "$left" -gt 90 ] || exit 0
mkdir -p /tmp/tuned && cp targets/tuned/*.json /tmp/tuned/
# the other chip's library (--also): the H100's put 3000x5000x1000 on `BM128-BN256-BK64-w8-s4-g8-tma-padb`
# (2026-12-07, first session)
source docs/results/2026-12-07a-h100/libraries.sh
timeout "$left" python3 -m ci.cli tune --shapes 3000x5000x1000 1000x1000x1000 --dtypes fp16 bf16 --match 'pad[ab]?$' \
  --top-k 24 --also "targets/tuned/$sibling_library" --dir /tmp/tuned --deadline $((left - 30)) > "$out/tune-one-pad.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune-one-pad.log" | tail -n 12
cp /tmp/tuned/*.json "$out/"
