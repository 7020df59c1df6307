#!/usr/bin/env bash
# Swap-AB tiles past the decode rows (SWAP_MAX_M 32 -> 128), and the Gluon kernel's K splits in 3 and
# 6 (36 tiles of 128 x 128, or 18 of 128 x 256, in one wave), on the 128-row cells: fp8's lose 7-20%
# to cuBLAS on the H200 (0.80x at 128x4608x3584) where its one- and sixteen-row cells, on swap-AB
# tiles, beat it. Only those configs (--match), each bucket's incumbent timed beside them, into a
# copy of this card's library, which comes back under $OUT (any card; the box's Triton 3.6, carry .whl).
#
#   OUT=$OUT [TOTAL=seconds, default 560] bash docs/results/2026-12-07b-swap128/call_1.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
tune_match='(-swap|gluon-w[gs]-sk[36])$'
tune fp8 $((total * 3 / 5)) --dtypes fp8_e4m3 --shapes 128x4608x3584 128x3584x3584 128x37888x3584 128x8192x28672 128x4096x14336 \
  128x28672x4096 128x10240x8192 128x57344x8192 128x8192x8192
tune half $((total - 10)) --dtypes fp16 bf16 --shapes 128x3584x3584 128x37888x3584 128x4096x4096 128x8192x8192
cp "/tmp/tuned/$card_library" "$out/"
