#!/usr/bin/env bash
# The pad twins won 3000x5000x1000 on the H100 (call_1/call_2: fp16 72.13 -> 63.63 us, 0.776 ->
# 0.879x; 1000^3 lost: its copy costs more than the pitch). One call, the session's last:
#   1. the card's 3000x5000x1000 and 127x4097x1023 buckets (fp16, bf16) re-tuned on the pad twins
#      (the library's entry timed beside them, kept unless one is faster), into the checkout;
#   2. the whole matrix through the asv suite on that library (EVIDENCE_COMMIT=1 commits it on the
#      box first), cold, then warm in the time left.
#
#   OUT=$OUT [TOTAL=seconds, default 580] [TUNE_S=150] [SHAPES="3000x5000x1000 127x4097x1023"]
#     [MATCH='pad$': the candidates the tune takes] bash docs/results/2026-12-06d-pad/call_3.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-580}
source docs/results/2026-12-03g-h200-flush/box.sh
mkdir -p /tmp/tuned && cp targets/tuned/*.json /tmp/tuned/
tune_s=${TUNE_S:-150}
timeout "$tune_s" python3 -m ci.cli tune --shapes ${SHAPES:-3000x5000x1000 127x4097x1023} --dtypes fp16 bf16 --match "${MATCH:-pad\$}" \
  --top-k 16 --dir /tmp/tuned --deadline $((tune_s - 30)) > "$out/tune-pad.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune-pad.log" | tail -n 12
cp /tmp/tuned/*.json "$out/" && cp /tmp/tuned/*.json targets/tuned/
TOTAL=$((total - ($(date +%s) - begin))) exec bash docs/results/2026-12-06b-whole-matrix/any.sh
