#!/usr/bin/env bash
# One H200 call (the box's Triton 3.6, carry .whl) for when a single start is all the budget holds:
#   1. the 3000x5000x1000 and 1000^3 buckets (fp16, bf16) re-tuned on the copy of both operands and
#      of one alone (`pad`, `pad_a`, `pad_b`; the library's entry timed beside them and kept unless
#      one is faster), into the checkout's library;
#   2. the whole matrix through the asv suite on that library (EVIDENCE_COMMIT=1 commits it on the
#      box first), cold, then warm in the time left.
#
#   OUT=$OUT [TOTAL=seconds, default 560] [TUNE_S=130] [SHAPES="3000x5000x1000 1000x1000x1000"]
#     [MATCH='pad[ab]?$'] bash docs/results/2026-12-06e-one-pad/tune_then_matrix.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-560}
mkdir -p "$out"
source docs/results/2026-12-03g-h200-flush/box.sh
mkdir -p /tmp/tuned && cp targets/tuned/*.json /tmp/tuned/
tune_s=${TUNE_S:-130}
timeout "$tune_s" python3 -m ci.cli tune --shapes ${SHAPES:-3000x5000x1000 1000x1000x1000} --dtypes fp16 bf16 \
  --match "${MATCH:-pad[ab]?\$}" --top-k 16 --dir /tmp/tuned --deadline $((tune_s - 30)) > "$out/tune-pad.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune-pad.log" | tail -n 12
cp /tmp/tuned/*.json "$out/" && cp /tmp/tuned/*.json targets/tuned/
TOTAL=$((total - ($(date +%s) - begin))) exec bash docs/results/2026-12-06b-whole-matrix/any.sh
