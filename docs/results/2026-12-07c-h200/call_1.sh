#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl), the goal's figure on it:
#   - an H200: the swapped tiles of up to 128 rows tuned into its library on the 128-row buckets
#     (only the `-swap` configs, each bucket's incumbent timed beside them: fp8 first, then fp16 and
#     bf16; on an H100 SXM they took three fp8 cells +1.6-3.6%), then the whole default matrix on the
#     result through the asv suite, cold then warm as the time allows;
#   - an H100 SXM (its library holds those tiles already): the whole matrix alone, measured on
#     2026-12-07 (third session, call_1/); with H200_ONLY=1 it runs nothing there.
# The library and the runs come back under $OUT.
#
#   OUT=$OUT [TOTAL=seconds, default 575] [TUNE_S=190] [H200_ONLY=1] bash docs/results/2026-12-07c-h200/call_1.sh
source docs/results/2026-12-07a-h100/prologue.sh 575
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*)
    mkdir -p /tmp/tuned && cp "targets/tuned/$card_library" /tmp/tuned/
    tune_match='-swap$' tune_margin=15
    tune_s=${TUNE_S:-190}
    tune fp8 $((tune_s * 2 / 3)) --dtypes fp8_e4m3 --shapes 128x4608x3584 128x3584x3584 128x37888x3584 \
      128x8192x28672 128x4096x14336 128x28672x4096 128x10240x8192 128x57344x8192 128x8192x8192
    tune half "$tune_s" --dtypes fp16 bf16 --shapes 128x3584x3584 128x4096x4096 128x8192x8192
    cp "/tmp/tuned/$card_library" "$out/" && cp "/tmp/tuned/$card_library" targets/tuned/
    ;;
  *) if [ -n "${H200_ONLY:-}" ]; then echo "not an H200, H200_ONLY set: nothing run"; exit 0; fi ;;
esac
TOTAL=$((total - ($(date +%s) - begin))) OUT=$out exec bash docs/results/2026-12-06b-whole-matrix/any.sh
