#!/usr/bin/env bash
# Sourced first by the call scripts that work on the card's tuned library, from the repository root
# on the GPU box, with the call's default length in seconds as its argument: `out` ($OUT), `begin`,
# `total` ($TOTAL or the default), the wheels and the card's versions (box.sh), then the card's
# library and its die sibling's (libraries.sh).
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-$1}
mkdir -p "$out"
source docs/results/2026-12-03g-h200-flush/box.sh
source docs/results/2026-12-07a-h100/libraries.sh

# tune LOG UNTIL ARGS...: `gemmwatch tune` over the configs matching $tune_match (16 per cell) into
# the copy of the card's library in /tmp/tuned, ending by second UNTIL of the call ($tune_margin
# seconds, default 20, kept for writing), logged to $out/LOG.log; ARGS go to the tune.
tune() {
  local log=$1 until=$2; shift 2
  local left=$((until - ($(date +%s) - begin)))
  timeout "$left" python3 -m ci.cli tune --match="$tune_match" --top-k 16 --dir /tmp/tuned \
    --deadline $((left - ${tune_margin:-20})) "$@" > "$out/$log.log" 2>&1
  echo "tune $log: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/$log.log" | tail -n 12
}
