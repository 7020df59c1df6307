#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: the goal's call (docs/results/2026-12-07d-phase/h200.sh: the phase, one-operand copy
#     and one-row tunes, the swap-AB tiles into the 128-row buckets, then the whole matrix);
#   - any other card: with MIXED_PROBE=1 the probe beside this file (fp8 128-row tiles with A and B
#     on different copy engines, $OUT/mixed.txt, at most 150 s; run on an H100 SXM on 2026-12-07,
#     seventh session: call_1/, two engines lose), then every `gpu` test of the tree (the last full run
#     was at the swap-AB tiles of 2026-12-07, second session; the phase tiles, half lines and
#     unsplit one-row swap tiles came since) on four workers (eight ran an H100 out of memory), the
#     failures again in one process, and test_timing.py in one process (the tests asserting
#     timings skip under -n).
#
#   (With the probe and TOTAL under about 330, the tests are left out.)
#
#   OUT=$OUT [TOTAL=seconds, default 560] [TUNES_ONLY=1] [MIXED_PROBE=1] bash docs/results/2026-12-07g-tree/call_1.sh
source docs/results/2026-12-07a-h100/prologue.sh 560
source docs/results/2026-12-07d-phase/h200.sh
left() { echo $((total - ($(date +%s) - begin))); }
if [ -n "${MIXED_PROBE:-}" ]; then
  timeout $(($(left) < 160 ? $(left) - 10 : 150)) python3 docs/results/2026-12-07g-tree/mixed_probe.py > "$out/mixed.txt" 2>&1
  echo "probe: exit $?"; cat "$out/mixed.txt"
fi
if [ "$(left)" -lt 180 ]; then echo "$(left) s left: no time for the tests"; exit 0; fi
timeout $(($(left) - 120)) python3 -m pytest -q -p no:cacheprovider -n 4 -m gpu tests > "$out/pytest-gpu-all.txt" 2>&1
echo "all gpu tests (-n 4): exit $?"; tail -n 15 "$out/pytest-gpu-all.txt"
failed=$(grep -oE '^FAILED [^ ]+' "$out/pytest-gpu-all.txt" | cut -d' ' -f2 | sort -u)
if [ -n "$failed" ]; then
  # shellcheck disable=SC2086
  timeout $(($(left) - 60)) python3 -m pytest -q -p no:cacheprovider $failed > "$out/pytest-gpu-serial.txt" 2>&1
  echo "the failures again, one process: exit $?"; tail -n 8 "$out/pytest-gpu-serial.txt"
fi
timeout $(($(left) - 10)) python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_timing.py > "$out/pytest-gpu-timing.txt" 2>&1
echo "timing tests: exit $?"; tail -n 5 "$out/pytest-gpu-timing.txt"
