#!/usr/bin/env bash
# Call 5 (carry .whl; the library of calls 2 and 4): the whole matrix cold and warm with the cool start
# (GEMMWATCH_COOL_START=2: before each long cell's first call, idle until NVML shows no power cap
# and at most 200 W, at most 2 s), recorded as the protocol "2026-12-03+cool-start=2".
set -uo pipefail
GEMMWATCH_COOL_START=2 EVIDENCE_COMMIT=1 DEADLINE=${DEADLINE:-560} exec bash docs/results/2026-12-03i-h200-arena/call_5.sh
