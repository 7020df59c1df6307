#!/usr/bin/env bash
# The next GPU call (the box's Triton 3.6, carry .whl; not run: the 2026-12-07 first session's
# budget ran out), whichever card comes:
#   - an H200: 2026-12-06e-one-pad/call_1.sh in the time there is (pad / pad_a / pad_b timed and
#     tuned on 3000x5000x1000 and 1000^3, then the deep fp8 one- and sixteen-row tries);
#   - an H100 SXM (calls 1 and 2 of this session got one): the fp8 one-row buckets on the swap tiles
#     (--match 'swap$'), then the buckets whose cells call 2 measured
#     just below native (0.95-1.00x), each also timing the config the H200's library runs there
#     (--also), into a copy of the H100's library, which comes back under $OUT.
#
#   OUT=$OUT [TOTAL=seconds, default 565] bash docs/results/2026-12-07a-h100/call_3.sh
source docs/results/2026-12-07a-h100/prologue.sh 565
case "$card_library" in
h200-*)
  TOTAL=$total PAD_S=$((total * 2 / 5)) OUT=$out exec bash docs/results/2026-12-06e-one-pad/call_1.sh ;;
esac
mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
# first the fp8 one-row buckets on the sixteen-row swap tiles, which call 1 timed faster than the
# library's one-row tile there (1x3584x3584 8.86 against 9.31 us; 1x4608x3584 10.25 against 10.34)
timeout 100 python3 -m ci.cli tune --dtypes fp8_e4m3 --shapes 1x3584x3584 1x4608x3584 --match 'swap$' \
  --top-k 8 --dir /tmp/tuned --deadline 80 > "$out/tune-one-row-swap.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune-one-row-swap.log" | tail -n 8
left=$((total - ($(date +%s) - begin)))
timeout "$left" python3 -m ci.cli tune --dtypes fp8_e4m3 fp16 bf16 \
  --shapes 4096x37888x3584 16x8192x8192 16x8192x28672 128x3584x18944 1x8192x8192 1x3584x18944 \
  16x4608x3584 128x37888x3584 4096x6144x4096 1x3584x3584 \
  --run docs/results/2026-12-07a-h100/call_2/ev-warm/run-warm.json.gz --below 1.0 --top-k 16 \
  --also "targets/tuned/$sibling_library" --dir /tmp/tuned --deadline $((left - 30)) > "$out/tune-near.log" 2>&1
echo "tune: exit $?"; grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune-near.log" | tail -n 30
cp "/tmp/tuned/$card_library" "$out/"
