#!/usr/bin/env bash
# Call 2 (right after call_1.sh, on its machine): call 1's library in the checkout (committed by
# EVIDENCE_COMMIT=1 as the tree measured), then the whole matrix cold and warm on the default
# protocol (docs/results/2026-12-03i-h200-arena/call_5.sh), each run packed into $OUT as it ends.
set -uo pipefail
[ -f /tmp/tuned/h200-triton3.6.0.json ] || { echo "no /tmp/tuned: not the machine of call 1"; exit 3; }
cp /tmp/tuned/h200-triton3.6.0.json targets/tuned/
EVIDENCE_COMMIT=1 DEADLINE=${DEADLINE:-560} exec bash docs/results/2026-12-03i-h200-arena/call_5.sh
