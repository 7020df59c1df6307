#!/usr/bin/env bash
# After call_1 (same card): the configs the tune chose on 3000x5000x1000 beside their unpadded twins,
# the 64 x 128 tile of the pitch probe with and without the copy, and fp32-ieee 1x1001x4095's old and
# new `pad` entries, beside cuBLAS and the library (its entries as committed before call_1).
#
#   OUT=$OUT bash docs/results/2026-12-06d-pad/call_2.sh
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh >/dev/null
timeout 250 python3 -m ci.cli try --cells "fp16 3000x5000x1000" "bf16 3000x5000x1000" "fp16 1000x1000x1000" "fp32-ieee 1x1001x4095" \
  --configs BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64-pad BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64 \
  BM128-BN256-BK64-w8-s4-g8-tma BM128-BN256-BK64-w8-s4-g8-tma-pad BM64-BN128-BK128-w4-s4-g8-tma \
  BM64-BN128-BK128-w4-s4-g8-tma-pad BM16-BN64-BK128-w8-s2-g8-sks16-pad BM16-BN32-BK32-w4-s3-g8-sks8-pad \
  --json "$out/try-pad.json" > "$out/try-pad.txt" 2>&1
echo "exit $?"; tail -n 45 "$out/try-pad.txt"
