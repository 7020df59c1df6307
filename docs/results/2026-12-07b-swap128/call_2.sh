#!/usr/bin/env bash
# The GPU tests of the tree with the swap-AB tiles of up to 128 rows (call 1's): first those of the
# one-tile and TMA kernels' decode and swap-AB configs (test_matmul.py runs on the GPU where there is
# one), then every `gpu` test for at most 240 s (any card; the box's
# Triton 3.6, carry .whl).
#
#   OUT=$OUT bash docs/results/2026-12-07b-swap128/call_2.sh
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_matmul.py -k "swap or decode" > "$out/pytest-gpu-swap.txt" 2>&1
echo "swap and decode: exit $?"; tail -n 3 "$out/pytest-gpu-swap.txt"
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 -m gpu tests > "$out/pytest-gpu-all.txt" 2>&1
echo "all gpu tests: exit $?"; tail -n 12 "$out/pytest-gpu-all.txt"
