#!/usr/bin/env bash
# Call 4: docs/results/2026-12-03g-h200-flush/next_e.sh cut to one process per set (the device
# time left): the two split-K cells, 3 repetitions, nothing / five cells / five other cells
# measured between the repetitions.
set -uo pipefail
out=${OUT:-/tmp/out}
sed -i 's/for i in 0 1 2; do/for i in 0; do/; s/timeout 80/timeout 65/' docs/results/2026-12-03g-h200-flush/next_e.sh
OUT=$out bash docs/results/2026-12-03g-h200-flush/next_e.sh 2>&1 | tail -n 12
