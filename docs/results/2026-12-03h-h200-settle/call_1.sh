#!/usr/bin/env bash
# Next session, call F (not yet run; the box's Triton 3.6): the settle time's GPU test, then a cold
# and a warm run with GEMMWATCH_SETTLE=0.2 (each cell's rounds start after 0.2 s of untimed
# replays), the cold one on an empty Triton cache of its own: does the A/A pair of a cold and a
# warm run then agree in the cells a compile's idle preceded?
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "flush_buffers" \
  > "$out/pytest-settle.txt" 2>&1 || { tail -n 30 "$out/pytest-settle.txt"; exit 1; }
tail -n 1 "$out/pytest-settle.txt"
TRITON_CACHE_DIR=/tmp/tc-settle GEMMWATCH_SETTLE=0.2 GEMMWATCH_NATIVE_KERNELS=1 RUNS="cold warm" INJECT= \
  PACK=$out/evsettle.tgz WORK=/tmp/wsettle bash ci/gpu_evidence.sh /tmp/evsettle 540 2>&1 | tail -n 12
