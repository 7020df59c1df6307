#!/usr/bin/env bash
# Next session, calls 1-3 (not yet run; the box's Triton 3.6, carry .whl): every bucket with a cell
# below native in the last whole-matrix run re-tuned, the slowest first, each cell's coarse pass
# taking its first 24 candidates in the library's order (`--order library`, the default since
# 2026-12-05: the space ordered by the rankings of the cell's nearest cells, alternating with the
# target's own order) plus the first of each kernel path they leave out (`--each-path 1`). What it
# will time, bucket by bucket, is in plan-next.txt (`gemmwatch tune --plan`, no GPU). A call stopped
# by its deadline prints the --resume-since time; the next call passes it:
#
#   OUT=$OUT bash docs/results/2026-12-05a-tune-order/next_1.sh [RESUME_SINCE]
#
# Then copy the returned library over targets/tuned/h200-triton3.6.0.json (after each call: the
# next call starts from the committed one) and run the whole matrix
# (docs/results/2026-12-03i-h200-arena/call_5.sh).
set -uo pipefail
RESUME_SINCE=${1:-} RUN=docs/results/2026-12-04e-h200-split-xn/call_3/ev-warm/run-warm.json.gz BELOW=1.0 \
  SECONDS_LEFT=570 bash docs/results/2026-12-04d-h200-per-cell/tune.sh "llm odd square" fp8_e4m3 fp16 bf16
