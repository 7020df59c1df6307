#!/usr/bin/env bash
# Call 6 (the box's Triton 3.6, carry .whl; the session's last ~200 s of device time): ping-pong
# tiles ("gluon_pp") on the GPU: their correctness tests (a hang is cut by the timeout), then
# `gemmwatch try` beside the library's config on three cells with several tiles per SM. (The variant was
# built again by mistake: 2026-12-03, ninth session, had measured it no faster and taken it out. It
# faulted here, before the order barriers that version had; taken out again after this call.)
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 75 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "gluon_pp" -x 2>&1 | tail -n 8 \
  | tee "$out/tests-pp.txt"
try() {  # try CELL CONFIG...
  local cell=$1; shift
  timeout 35 python3 -m ci.cli try --cells "$cell" --configs "$@" --json "$out/try-${cell// /_}.json" 2>&1 | tail -n 6
}
try "fp16 4096x4096x4096" BM128-BN128-BK64-w8-s4-g8-gluon-pp BM64-BN256-BK64-w8-s3-g8-gluon-pp
try "fp16 3000x5000x1000" BM128-BN128-BK64-w8-s4-g8-gluon-pp BM64-BN256-BK64-w8-s3-g8-gluon-pp
try "fp8_e4m3 4096x3584x3584" BM128-BN64-BK128-w8-s6-g8-gluon-pp BM64-BN128-BK128-w8-s6-g8-gluon-pp
