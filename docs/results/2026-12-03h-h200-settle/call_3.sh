#!/usr/bin/env bash
# Call 3: the seventh session's next_d.sh as it stands (two runs with GEMMWATCH_CAPTURES=8, the first
# on the fresh machine's empty Triton cache; the second was cut by the deadline).
exec bash docs/results/2026-12-03g-h200-flush/next_d.sh
