#!/usr/bin/env bash
# Call 1: the seventh session's next_f.sh as it stands (the settle time's GPU test, then a cold and a
# warm run with GEMMWATCH_SETTLE=0.2 on an empty Triton cache; the warm run was cut by the deadline
# and made in call 2).
exec bash docs/results/2026-12-03g-h200-flush/next_f.sh
