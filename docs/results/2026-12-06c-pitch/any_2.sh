#!/usr/bin/env bash
# After the pitch probe (call_1): `pad` configs now copy A and B onto rows 128-byte multiples apart
# (PAD_ROW_BYTES) and are offered where rows are not such multiples. Timed beside cuBLAS and the
# library's choice: the cells whose rows are 2000 bytes apart (K = 1000), on their configs with and
# without the copy; and two cells whose library entry is a `pad` config (its copies now wider).
#
#   OUT=$OUT [TOTAL=seconds, default 400] bash docs/results/2026-12-06c-pitch/any_2.sh
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout "${TOTAL:-400}" python3 -m ci.cli try --cells "fp16 3000x5000x1000" "bf16 3000x5000x1000" \
  "fp16 1000x1000x1000" "bf16 1000x1000x1000" "fp16 127x4097x1023" "fp32-ieee 1x1001x4095" \
  --configs BM128-BN256-BK64-w8-s4-g8-tma-pad BM128-BN256-BK64-w8-s3-g8-gluon-wg-pad \
  BM64-BN128-BK128-w4-s4-g8-tma BM64-BN128-BK128-w4-s4-g8-tma-pad BM128-BN64-BK64-w4-s4-g8-tma-pad \
  --json "$out/try-pad.json" > "$out/try-pad.txt" 2>&1
echo "try: exit $?"; tail -n 40 "$out/try-pad.txt"
