#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: the `-phase` configs tuned into its library's buckets of fp16/bf16 1000^3 and
#     3000x5000x1000 for 50 s, then the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the
#     swap-AB tiles into the 128-row buckets, then the whole matrix), with 140 s for its tunes;
#   - any other card: the whole matrix through the asv suite on the card's committed library (on an
#     H100 SXM: fp16/bf16 1000^3 on the phase tiles since call_2), cold then warm.
#
#   OUT=$OUT [TOTAL=seconds, default 560; other cards than an H200 take at most 470] bash docs/results/2026-12-07d-phase/call_3.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
source docs/results/2026-12-07d-phase/h200.sh
total=$((total < 470 ? total : 470))
TOTAL=$((total - ($(date +%s) - begin))) OUT=$out exec bash docs/results/2026-12-06b-whole-matrix/any.sh
