#!/usr/bin/env bash
# The pitch probe (pitch_probe.py) on whichever card the call gets; then, on an H100 SXM, the second
# H100 re-tune pass goes on in the time left (docs/results/2026-12-06b-whole-matrix/any_2.sh, from
# where its third call stopped); an H200 stops after the probe (its whole matrix is a call of its own).
#
#   OUT=$OUT [TOTAL=seconds, default 580] bash docs/results/2026-12-06c-pitch/any.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 200 python3 docs/results/2026-12-06c-pitch/pitch_probe.py > "$out/pitch.txt" 2>&1
echo "probe: exit $?"; cat "$out/pitch.txt" | tail -n 60
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case "$name" in
  *H100*) TOTAL=$((${TOTAL:-580} - ($(date +%s) - begin))) \
            bash docs/results/2026-12-06b-whole-matrix/any_2.sh 2026-12-06T06:38:45+00:00 ;;
esac
