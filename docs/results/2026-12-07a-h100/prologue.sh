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
