#!/usr/bin/env bash
# Call 4 (carry .t39/p2, .t39/SHA256, .whl; after calls 2-3 on the same machine): the whole matrix
# under Triton 3.9.0, cold.
set -uo pipefail
exec bash docs/results/2026-12-03g-h200-flush/next_b.sh
