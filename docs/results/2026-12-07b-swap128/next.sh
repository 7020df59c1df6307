#!/usr/bin/env bash
# The next GPU call, whichever card comes (the box's Triton 3.6, carry .whl):
#   - an H200: call_1.sh on its own library: the 128-row buckets, where fp8 loses 7-20% to cuBLAS,
#     on the swapped tiles of up to 128 rows (timed so far on an H100 SXM only); then, in later
#     calls, 2026-12-06e-one-pad/call_1.sh and the whole matrix (2026-12-06b-whole-matrix/any.sh);
#   - an H100 SXM: the whole matrix on its library as committed (with the three fp8 128-row cells on
#     swapped tiles and the near-native re-tune's one new entry), through the asv suite, cold then warm.
#
#   OUT=$OUT [TOTAL=seconds, default 560] bash docs/results/2026-12-07b-swap128/next.sh
set -uo pipefail
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case "$name" in
  *H200*) exec bash docs/results/2026-12-07b-swap128/call_1.sh ;;
  *H100*) TOTAL=${TOTAL:-545} exec bash docs/results/2026-12-06b-whole-matrix/any.sh ;;
  *) echo "next.sh: no call for $name" >&2; exit 2 ;;
esac
