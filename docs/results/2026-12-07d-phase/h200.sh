#!/usr/bin/env bash
# Sourced by call_2.sh and call_3.sh after prologue.sh: on an H200, the `-phase` configs tuned into
# its library's buckets of fp16/bf16 1000^3 and 3000x5000x1000 for 50 s (in targets/tuned, which the
# next step copies), then the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the swap-AB tiles
# into the 128-row buckets, then the whole matrix) with 140 s for its tunes; on other cards nothing.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*)
    tune_match='-phase$' tune_margin=10
    tune phase 50 --dtypes fp16 bf16 --shapes 1000x1000x1000 3000x5000x1000 --dir targets/tuned
    TOTAL=$((total - ($(date +%s) - begin))) TUNE_S=140 OUT=$out exec bash docs/results/2026-12-07c-h200/call_1.sh ;;
esac
