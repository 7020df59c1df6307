#!/usr/bin/env bash
# Call 3 (the box's Triton 3.6): the historically noisy cells measured in 8 short processes, one
# graph per side (GEMMWATCH_CAPTURES=1, the protocol) and eight, alternating; each process times
# each cell twice (its first measurement, as a whole-matrix run has, then a second).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
cells=("bf16 128x3584x18944" "fp16 1x3584x18944" "fp16 128x3584x18944" "fp16 1x4608x3584" "bf16 1x4608x3584"
  "fp16 16x3584x3584" "bf16 16x3584x3584" "fp8_e4m3 128x4608x3584" "fp16 1x57344x8192" "fp16 1000x1000x1000"
  "bf16 127x4097x1023" "fp8_e4m3 128x8192x8192")
for i in 0 1 2 3; do
  for c in 1 8; do
    GEMMWATCH_CAPTURES=$c timeout 80 python3 -m ci.state_probe --out "$out/procs-C$c-$i.json" --reps 2 --rounds 30 \
      --phases fixed --cold-l2 suite --cells "${cells[@]}" > /dev/null 2>> "$out/procs.err" || echo "process C$c-$i: rc $?"
  done
done
python3 docs/results/2026-12-03g-h200-flush/procs.py "$out" | tee "$out/procs.txt"
