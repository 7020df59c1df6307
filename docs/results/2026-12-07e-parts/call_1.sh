#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: docs/results/2026-12-07d-phase/h200.sh (the `-phase` configs, now read in 64-byte
#     parts, tuned into its library's fp16/bf16 1000^3 and 3000x5000x1000 buckets, B's and A's
#     copies alone into the 3000x5000x1000 ones, then the goal's call: the swap-AB tiles into the
#     128-row buckets, then the whole matrix);
#   - any other card, at most 300 s:
#       1. the phase tiles' correctness tests on the card (tests/test_matmul.py -k phase);
#       2. the probe beside this file (parts of 128 bytes against 64, fp16), $OUT/parts.txt;
#       3. a tune of the four cells whose A rows are off the lines (fp16/bf16 1000^3 and
#          3000x5000x1000) over the `-phase` configs alone, each bucket's entry timed beside them,
#          into a copy of the card's library ($OUT/<library>.json, tune-phase.log).
#
#   OUT=$OUT [TOTAL=seconds, default 560; other cards than an H200 take at most 300] bash docs/results/2026-12-07e-parts/call_1.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
source docs/results/2026-12-07d-phase/h200.sh
total=$((total < 300 ? total : 300))
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_matmul.py -k phase > "$out/pytest-phase.txt" 2>&1
echo "pytest: exit $?"; tail -n 5 "$out/pytest-phase.txt"
timeout 130 python3 docs/results/2026-12-07e-parts/parts_probe.py > "$out/parts.txt" 2>&1
echo "probe: exit $?"; cat "$out/parts.txt"
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
tune_match='-phase$' tune_margin=15
tune phase $((total - 10)) --dtypes fp16 bf16 --shapes 1000x1000x1000 3000x5000x1000
cp "/tmp/tuned/$card_library" "$out/"
