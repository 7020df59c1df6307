#!/usr/bin/env bash
# After the whole matrix on the re-tuned library (any.sh on an H200), one more H200 call (the box's
# Triton 3.6, carry .whl):
#   1. the one-row fp8 cells on the sixteen-row swap tile with the deep pipeline that won the fp8
#      16-row buckets this session (BM16-BN64-BK128-w4-s12-g8-swap, 0.861 -> 1.017x on 16x4608x3584),
#      with and without a serial split, timed beside the library's 1 x 64 split and cuBLAS: Nsight
#      Compute found cuBLAS's deep TMA pipeline (56 CTAs) reading the same bytes as ours at 38.7% of DRAM
#      bandwidth against our 32.9%, so the gap is bytes in flight, not bytes;
#      (and the unsplit 1 x 16 FMA tile, which took the H100's 1x4096x4096 from 0.91 to 0.97x, and
#      the 1 x 32 GEMV tile split in two and four: neither was ever timed on the H200's 1x3584x3584
#      and 1x4096x4096, ranked 77th-1170th of their candidates), then
#      the sixteen-row fp8 cells on the H100's 16-stage swap tile;
#   2. with the time left, the re-tune of the buckets below native that the first call of 2026-12-06
#      did not reach, the 1- and 16-row ones first (where the 12-stage swap tile and the TMA swap
#      tile won, on the H200 and the H100), then the rest (--resume-since), each bucket also timing
#      the config the other chip's library runs on its cells (--also; the card picks which library is tuned).
#
#   OUT=$OUT [TOTAL=seconds, default 575] bash docs/results/2026-12-06a-h200-profile/next_2.sh
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
total=${TOTAL:-575}
source docs/results/2026-12-03g-h200-flush/box.sh
timeout $((total / 4)) python3 -m ci.cli try --cells "fp8_e4m3 1x3584x3584" "fp8_e4m3 1x4096x4096" "fp8_e4m3 1x4608x3584" \
  --configs BM16-BN64-BK128-w4-s12-g8-swap BM16-BN64-BK128-w4-s12-g8-sks2-swap BM16-BN64-BK128-w4-s12-g8-sks4-swap \
  BM16-BN64-BK256-w4-s6-g8-sks4-swap BM16-BN64-BK128-w8-s12-g8-sks2-swap BM1-BN16-BK1024-w4-s1-g8-fma \
  BM1-BN16-BK1024-w8-s1-g8-fma BM1-BN32-BK512-w4-s1-g8-sks2-fma BM1-BN32-BK512-w4-s1-g8-sks4-fma \
  --json "$out/try-one-row-deep.json" > "$out/try-one-row-deep.txt" 2>&1
echo "try: exit $?"; tail -n 34 "$out/try-one-row-deep.txt"
# the 16-stage swap tile that won three fp8 sixteen-row buckets on the H100 (2026-12-06, second
# session), on the H200's sixteen-row fp8 cells still below native that never timed it
timeout $((total / 6)) python3 -m ci.cli try --cells "fp8_e4m3 16x8192x8192" "fp8_e4m3 16x8192x28672" "fp8_e4m3 16x10240x8192" \
  --configs BM16-BN64-BK128-w4-s16-g8-swap BM16-BN64-BK128-w4-s12-g8-swap \
  --json "$out/try-sixteen-row-deep.json" > "$out/try-sixteen-row-deep.txt" 2>&1
echo "try: exit $?"; tail -n 12 "$out/try-sixteen-row-deep.txt"
# The card's own library, its latest warm run and the other chip's library (--also); on an H100 the
# whole library is re-tuned since 2026-12-06 (third session), so no --resume-since.
source docs/results/2026-12-07a-h100/libraries.sh
case "$card_library" in
h200-*) since=2026-12-06T04:06:22+00:00 run=docs/results/2026-12-06d-pad/call_3/ev-warm/run-warm.json.gz ;;
*) since= run=docs/results/2026-12-07a-h100/call_2/ev-warm/run-warm.json.gz ;;
esac
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
# retune LOG SHAPES...: the buckets below native among SHAPES not re-tuned since the first call
# stopped, into /tmp/tuned (each step starts from the one before), in the time left.
retune() {
  local log=$1; shift
  local left=$((total - ($(date +%s) - begin)))
  echo "== re-tune ($*), $left s left =="
  [ "$left" -gt 120 ] || return 0
  timeout "$left" python3 -m ci.cli tune --shapes "$@" --dtypes fp8_e4m3 fp16 bf16 --run "$run" \
    --below 1.0 --top-k 16 --also "targets/tuned/$sibling_library" ${since:+--resume-since "$since"} --dir /tmp/tuned \
    --deadline "$((left - 40))" > "$out/$log" 2>&1
  echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/$log" | tail -n 40
  cp "/tmp/tuned/$card_library" "$out/"
}
retune tune-small-m.log 16x8192x8192 16x3584x18944 16x8192x28672 16x10240x8192 16x6144x4096 16x4608x3584 \
  16x4096x14336 1x8192x8192 1x1001x4095 1x8192x28672 1x4096x14336
retune tune.log llm odd square
