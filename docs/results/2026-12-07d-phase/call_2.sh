#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: the `-phase` configs tuned into its library's four buckets of those cells (below, 3.)
#     for 50 s, then the goal's call (docs/results/2026-12-07c-h200/call_1.sh: the swap-AB tiles
#     into the 128-row buckets, then the whole matrix), with 140 s for its tunes;
#   - any other card: the phase tiles (`phase_a`, names ending in `-phase`) on the GPU:
#       1. their correctness tests (tests/test_matmul.py -k phase) on the card;
#       2. the probe beside this file (the same idea in a kernel of its own, against consecutive
#          rows, cuBLAS and the library's entry), $OUT/phase.txt;
#       3. a tune of the four cells whose A rows are off the lines (fp16/bf16 1000^3 and
#          3000x5000x1000) over the `-phase` configs alone, each bucket's entry timed beside them,
#          into a copy of the card's library ($OUT/<library>.json, tune-phase.log).
#
# (A later call runs the same steps with another probe: PROBE, its output's name PROBE_OUT, its
# limit PROBE_S, the other cards' length CAP.)
#
#   OUT=$OUT [TOTAL=seconds, default 560; other cards than an H200 take at most 480] bash docs/results/2026-12-07d-phase/call_2.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
source docs/results/2026-12-07d-phase/h200.sh
cap=${CAP:-480} probe=${PROBE:-docs/results/2026-12-07d-phase/phase_probe.py} probe_out=${PROBE_OUT:-phase.txt}
total=$((total < cap ? total : cap))
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_matmul.py -k phase > "$out/pytest-phase.txt" 2>&1
echo "pytest: exit $?"; tail -n 5 "$out/pytest-phase.txt"
timeout "${PROBE_S:-200}" python3 "$probe" > "$out/$probe_out" 2>&1
echo "probe: exit $?"; cat "$out/$probe_out"
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
tune_match='-phase$' tune_margin=15
tune phase $((total - 10)) --dtypes fp16 bf16 --shapes 1000x1000x1000 3000x5000x1000
cp "/tmp/tuned/$card_library" "$out/"
