#!/usr/bin/env bash
# Next session, call 1 (not yet run; the box's Triton 3.6, carry .whl): the extra-column Gluon tiles
# (`GemmConfig.extra_n`, "-xnE") on the GPU: their correctness tests, then `gemmwatch try` on the
# fp8 M = 128 cells whose tiles make a wave and a bit (the library's config timed beside them in
# the same interleaved rounds); then the cool start's GPU test.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "xn or extra" 2>&1 | tail -n 6 | tee "$out/tests-extra.txt"
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_timing.py -k "cool_start" 2>&1 | tail -n 3 | tee "$out/tests-cool.txt"
try() {  # try CELL CONFIG...
  local cell=$1; shift
  timeout 150 python3 -m ci.cli try --cells "$cell" --configs "$@" --json "$out/try-${cell// /_}.json" 2>&1 | tail -n 12
}
try "fp8_e4m3 128x4608x3584" BM64-BN64-BK128-w4-s8-g8-gluon-ws-xn8 BM64-BN64-BK128-w4-s12-g8-gluon-ws-xn8 \
  BM64-BN64-BK128-w4-s6-g8-gluon-ws-xn8
try "fp8_e4m3 128x6144x4096" BM64-BN64-BK128-w4-s8-g8-gluon-ws-xn32 BM64-BN64-BK128-w4-s6-g8-gluon-ws-xn32
try "fp8_e4m3 128x10240x8192" BM128-BN64-BK128-w8-s6-g8-gluon-wg-xn16 BM128-BN64-BK128-w8-s5-g8-gluon-wg-xn16 \
  BM128-BN64-BK128-w8-s6-g8-gluon-ws-xn16
# 16-bit, B row-major: 3000x5000x1000 in 128 x 192 tiles (648, 4.9 waves) where 128 x 256 make 480 (3.6)
try "fp16 3000x5000x1000" BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64 BM128-BN128-BK64-w8-s4-g8-gluon-ws-xn64 \
  BM128-BN128-BK64-w8-s3-g8-gluon-wg-xn64
try "bf16 3000x5000x1000" BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64 BM128-BN128-BK64-w8-s4-g8-gluon-ws-xn64
