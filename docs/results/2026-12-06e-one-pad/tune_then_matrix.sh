#!/usr/bin/env bash
# One H200 call (the box's Triton 3.6, carry .whl) for when a single start is all the budget holds:
# the fourth session's call_3.sh on other buckets and candidates:
#   1. the 3000x5000x1000 and 1000^3 buckets (fp16, bf16) re-tuned on the copy of both operands and
#      of one alone (`pad`, `pad_a`, `pad_b`; the library's entry timed beside them and kept unless
#      one is faster), into the checkout's library;
#   2. the whole matrix through the asv suite on that library, cold, then warm in the time left.
#
#   OUT=$OUT [TOTAL=seconds, default 560] [TUNE_S=130] [SHAPES="3000x5000x1000 1000x1000x1000"]
#     [MATCH='pad[ab]?$'] bash docs/results/2026-12-06e-one-pad/tune_then_matrix.sh
mkdir -p "${OUT:-/tmp/out}"
TOTAL=${TOTAL:-560} TUNE_S=${TUNE_S:-130} SHAPES=${SHAPES:-3000x5000x1000 1000x1000x1000} MATCH=${MATCH:-'pad[ab]?$'} \
  exec bash docs/results/2026-12-06d-pad/call_3.sh
