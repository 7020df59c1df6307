#!/usr/bin/env bash
# Call 5 (carry .whl; right after call 4 on the same machine): the whole matrix under the box's
# Triton 3.6.0, cold, and `compare --axis triton` against call 4's run.
set -uo pipefail
EVIDENCE_COMMIT=1 exec bash docs/results/2026-12-03h-h200-settle/next_c1.sh
