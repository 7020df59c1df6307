#!/usr/bin/env bash
# Sourced by call_2.sh and call_3.sh after prologue.sh: on an H200, the `-phase` configs tuned into
# its library's buckets of fp16/bf16 1000^3 and 3000x5000x1000 for 50 s, then the copies of one
# operand (`-pada`, `-padb`: never timed on an H200; on an H100 B's copy took 3000x5000x1000 from
# 0.77 to 0.90x) into the 3000x5000x1000 buckets until second 80 (in targets/tuned, which the next
# step copies), then the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the swap-AB tiles
# into the 128-row buckets, then the whole matrix) with 140 s for its tunes; on other cards nothing.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*)
    tune_match='-phase$' tune_margin=10
    tune phase 50 --dtypes fp16 bf16 --shapes 1000x1000x1000 3000x5000x1000 --dir targets/tuned
    tune_match='-pad[ab]$'
    tune one-pad 80 --dtypes fp16 bf16 --shapes 3000x5000x1000 --dir targets/tuned
    TOTAL=$((total - ($(date +%s) - begin))) TUNE_S=140 OUT=$out exec bash docs/results/2026-12-07c-h200/call_1.sh ;;
esac
