#!/usr/bin/env bash
# Sourced by call_2.sh and call_3.sh after prologue.sh: on an H200, the `-phase` configs tuned into
# its library's buckets of fp16/bf16 1000^3 and 3000x5000x1000 for 50 s, then the copies of one
# operand (`-pada`, `-padb`: never timed on an H200; on an H100 B's copy took 3000x5000x1000 from
# 0.77 to 0.90x) into the 3000x5000x1000 buckets until second 80, then the sixteen-row swap tiles
# unsplit (fp8 16x3584x3584's; never timed on the H200's one-row cells, which run a serial split
# 0.80 us behind cuBLAS; on an H100 SXM the 12-stage one took fp8 1x3584x3584 from 9.31 to 8.86 us)
# into the fp8 one-row buckets until second 105 (in targets/tuned, which the next step copies), then
# the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the swap-AB tiles into the 128-row
# buckets, then the whole matrix) with 140 s for its tunes (with TUNES_ONLY=1: the library after the
# first three tunes into $OUT instead); on other cards nothing.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*)
    tune_match='-phase$' tune_margin=10
    tune phase 50 --dtypes fp16 bf16 --shapes 1000x1000x1000 3000x5000x1000 --dir targets/tuned
    tune_match='-pad[ab]$'
    tune one-pad 80 --dtypes fp16 bf16 --shapes 3000x5000x1000 --dir targets/tuned
    tune_match='^BM16-BN64-BK(128|256)-w[48]-s(8|12|16)-g8-swap$'
    tune one-row 105 --dtypes fp8_e4m3 --shapes 1x3584x3584 1x4096x4096 1x4608x3584 --dir targets/tuned
    if [ -n "${TUNES_ONLY:-}" ]; then cp "targets/tuned/$card_library" "$out/"; echo "TUNES_ONLY: the library in \$OUT"; exit 0; fi
    TOTAL=$((total - ($(date +%s) - begin))) TUNE_S=140 OUT=$out exec bash docs/results/2026-12-07c-h200/call_1.sh ;;
esac
