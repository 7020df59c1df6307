#!/usr/bin/env bash
# Next session, call E (not yet run; the box's Triton 3.6): which measurement between two of a cell's
# measurements moves its native time (call 3: bf16 128x3584x18944 50.2 -> 49.3 us, fp16 1x3584x18944
# 43.9 -> 44.8 us, alike in every process, with the other ten cells measured in between). Three
# processes each: nothing between the repetitions, the first five of those ten, the last five.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
probe=("bf16 128x3584x18944" "fp16 1x3584x18944")
first=("fp16 128x3584x18944" "fp16 1x4608x3584" "bf16 1x4608x3584" "fp16 16x3584x3584" "bf16 16x3584x3584")
last=("fp8_e4m3 128x4608x3584" "fp16 1x57344x8192" "fp16 1000x1000x1000" "bf16 127x4097x1023" "fp8_e4m3 128x8192x8192")
for i in 0 1 2; do
  for set in none first last; do
    case $set in
      none) between=() ;;
      first) between=(--between "${first[@]}") ;;
      last) between=(--between "${last[@]}") ;;
    esac
    timeout 80 python3 -m ci.state_probe --out "$out/between-$set-$i.json" --reps 3 --rounds 30 --phases fixed \
      --cold-l2 suite --cells "${probe[@]}" "${between[@]}" > "$out/between-$set-$i.txt" 2>> "$out/between.err" ||
      echo "process $set-$i: rc $?"
    echo "$set $i: $(grep -h '^   ' "$out/between-$set-$i.txt" | tr -s ' ' | tr '\n' ' ')"
  done
done
