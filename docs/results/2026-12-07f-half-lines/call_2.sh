#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: docs/results/2026-12-07d-phase/h200.sh: the `-phase` configs (whole lines: the
#     half-line ones lost on an H100 SXM, call_1/) tuned into its library's fp16/bf16 1000^3 and
#     3000x5000x1000 buckets, B's and A's copies alone into the 3000x5000x1000 ones, the sixteen-row
#     swap tiles unsplit into the fp8 one-row ones, then the goal's call (the swap-AB tiles into
#     the 128-row buckets, then the whole matrix through the asv suite, cold then warm);
#   - any other card, at most 150 s: the same one-row tune on its own library (the H100 SXM's fp8
#     1x3584x3584 runs 9.31 us on its entry, 8.86 on the 12-stage swap tile, cuBLAS 8.24), into a
#     copy of it ($OUT/<library>.json, one-row.log); with H200_ONLY=1 nothing there (run on an
#     H100 SXM on 2026-12-07, sixth session: call_2/).
#
#   OUT=$OUT [TOTAL=seconds, default 560] [H200_ONLY=1] bash docs/results/2026-12-07f-half-lines/call_2.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
source docs/results/2026-12-07d-phase/h200.sh
if [ -n "${H200_ONLY:-}" ]; then echo "not an H200, H200_ONLY set: nothing run"; exit 0; fi
total=$((total < 150 ? total : 150))
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
tune_match='^BM16-BN64-BK(128|256)-w[48]-s(8|12|16)-g8-swap$' tune_margin=15
tune one-row $((total - 10)) --dtypes fp8_e4m3 --shapes 1x3584x3584 1x4096x4096 1x4608x3584
cp "/tmp/tuned/$card_library" "$out/"
