#!/usr/bin/env bash
# One H200 call (the box's Triton 3.6, carry .whl) holding two steps, to spend one start:
#   1. 2026-12-06d-pad/next.sh: the copy of one operand alone (pad_a, pad_b) timed beside pad and
#      none on 3000x5000x1000 and 1000^3, then those buckets re-tuned on the three kinds of copy;
#   2. 2026-12-06a-h200-profile/next_2.sh on the library step 1 left: the deep fp8 one- and
#      sixteen-row swap tiles, then the re-tune of the buckets below native, in the time left.
# The library comes back under $OUT (h200-triton3.6.0.json).
#
#   OUT=$OUT [TOTAL=seconds, default 580] [PAD_S=240] bash docs/results/2026-12-06e-one-pad/call_1.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-580}
mkdir -p "$out"
TOTAL=${PAD_S:-240} OUT=$out bash docs/results/2026-12-06d-pad/next.sh
cp /tmp/tuned/*.json targets/tuned/
TOTAL=$((total - ($(date +%s) - begin))) OUT=$out exec bash docs/results/2026-12-06a-h200-profile/next_2.sh
