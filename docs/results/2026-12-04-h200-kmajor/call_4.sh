#!/usr/bin/env bash
# Call 4 (another machine): the whole matrix cold and warm with the cooldown after each round of
# the long cells doubled (GEMMWATCH_COOLDOWN=2, recorded as the protocol "2026-12-03+cooldown=2"),
# to see whether the cells that reach the power cap still move between runs.
set -uo pipefail
GEMMWATCH_COOLDOWN=2 EVIDENCE_COMMIT=1 DEADLINE=${DEADLINE:-560} exec bash docs/results/2026-12-03i-h200-arena/call_5.sh
