#!/usr/bin/env bash
# Whichever card comes: on an H200, the whole matrix on its re-tuned library (never yet measured by
# the asv suite; 2026-12-06b-whole-matrix/any.sh); on another card, call_1.sh (the pad twins).
#
#   OUT=$OUT bash docs/results/2026-12-06d-pad/any.sh
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TOTAL=${TOTAL:-545} exec bash docs/results/2026-12-06b-whole-matrix/any.sh
fi
exec bash docs/results/2026-12-06d-pad/call_1.sh
