#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the swap-AB tiles tuned into
#     its 128-row buckets, then the whole matrix);
#   - any other card: the phase probe (phase_probe.py beside this file: A's rows of one line offset
#     per tile, against consecutive rows, on 1000^3 and 3000x5000x1000), logged to $OUT/phase.txt.
#
#   OUT=$OUT bash docs/results/2026-12-07d-phase/call_1.sh
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*) OUT=$out exec bash docs/results/2026-12-07c-h200/call_1.sh ;;
esac
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 400 python3 docs/results/2026-12-07d-phase/phase_probe.py > "$out/phase.txt" 2>&1
echo "probe: exit $?"; cat "$out/phase.txt"
