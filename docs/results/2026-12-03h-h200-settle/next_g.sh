#!/usr/bin/env bash
# Next session, call G (not yet run; the box's Triton 3.6): the operand arena's GPU test, then the
# split-K and other noisy cells, five repetitions in one process, with the copies cloned anew each
# repetition (the protocol) and in the process's arena (the same places every repetition): does the
# native time's sequence across repetitions (bf16 128x3584x18944: 49.5, 49.3, 48.7, 48.7 us) go flat?
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_validation.py -k "arena or bad_out" \
  > "$out/pytest-arena.txt" 2>&1 || { tail -n 30 "$out/pytest-arena.txt"; exit 1; }
tail -n 1 "$out/pytest-arena.txt"
cells=("bf16 128x3584x18944" "fp16 1x3584x18944" "fp16 1x4608x3584" "fp16 16x3584x3584" "fp8_e4m3 128x4608x3584")
for m in suite suite_arena; do
  timeout 200 python3 -m ci.state_probe --out "$out/arena-$m.json" --reps 6 --rounds 30 --phases fixed \
    --cold-l2 "${m/_/+}" --cells "${cells[@]}" > "$out/arena-$m.txt" 2>> "$out/arena.err"
  echo "$m: rc $?"; cat "$out/arena-$m.txt"
done
