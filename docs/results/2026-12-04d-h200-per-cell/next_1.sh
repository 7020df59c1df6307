#!/usr/bin/env bash
# Next session, call 1 (not yet run; the box's Triton 3.6, carry .whl): extra-column tiles split in K
# (`-skS-xnE`, built 2026-12-04 fourth session) on the GPU: the extra-column tests (the split cases
# among them), then `gemmwatch try` on the fp8 M = 128 cells, where a unit of a split 128 x 72 tile
# reads about a quarter less of A and B per SM than the 64 x 72 tile the library runs (the per-SM
# intake these cells are bound by: docs/BENCHMARKS.md, 2026-12-02 seventh session), beside the
# plain 128 x 64 split in two, which the tune's first 24 candidates never reach. If the tests pass,
# list the Triton version in targets.configs.GLUON_EXTRA_N_SPLIT_TRITON and tune those buckets
# (`--match='-sk[248]-xn[0-9]+$'`, plus `-sk2$` on the 128x4096x4096 bucket).
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "xn or extra" -rfE > "$out/tests-extra.txt" 2>&1
grep -E "passed|failed|FAILED|ERROR" "$out/tests-extra.txt" | grep -v leaked | tail -n 12
try() {  # try CELL CONFIG...
  local cell=$1; shift
  timeout 150 python3 -m ci.cli try --cells "$cell" --configs "$@" --json "$out/try-${cell// /_}.json" 2>&1 | tail -n 10
}
try "fp8_e4m3 128x4608x3584" BM128-BN64-BK128-w8-s8-g8-gluon-wg-sk2-xn8 BM128-BN64-BK128-w8-s6-g8-gluon-wg-sk2-xn8 \
  BM128-BN64-BK128-w8-s8-g8-gluon-ws-sk2-xn8
try "fp8_e4m3 128x6144x4096" BM128-BN64-BK128-w8-s6-g8-gluon-wg-sk2-xn32 BM128-BN64-BK128-w8-s5-g8-gluon-wg-sk2-xn32
try "fp8_e4m3 128x3584x3584" BM128-BN64-BK128-w8-s8-g8-gluon-wg-sk2 BM128-BN64-BK128-w8-s6-g8-gluon-wg-sk2
try "fp8_e4m3 128x4096x4096" BM128-BN64-BK128-w8-s8-g8-gluon-wg-sk2 BM128-BN64-BK128-w8-s6-g8-gluon-wg-sk2
try "bf16 128x3584x3584" BM128-BN64-BK64-w4-s8-g8-gluon-ws-sk2 BM128-BN64-BK64-w8-s8-g8-gluon-wg-sk2
