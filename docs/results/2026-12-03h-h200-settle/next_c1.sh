#!/usr/bin/env bash
# Next session (not yet run; right after docs/results/2026-12-03g-h200-flush/next_b.sh on the same
# machine): the Triton axis on one card, one whole run per call: the box's Triton 3.6, cold, alone
# in its call, then `compare --axis triton` against next_b.sh's 3.9 run. (next_c.sh there put a
# cold and a warm run in one call; this session two such pairs did not fit in 600 s.)
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
GEMMWATCH_NATIVE_KERNELS=1 RUNS="t36" INJECT= PACK=$out/ev36.tgz WORK=/tmp/w36 \
  bash ci/gpu_evidence.sh /tmp/ev36 570 2>&1 | tail -n 4
python3 -m ci.cli compare --axis triton --base-results /tmp/ev36/run-t36.json --head-results /tmp/ev39/run-t39.json \
  > "$out/compare-triton.md" 2>&1
echo "compare: exit $?"
head -n 40 "$out/compare-triton.md"
