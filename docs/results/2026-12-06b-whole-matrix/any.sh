#!/usr/bin/env bash
# The whole default matrix through the asv suite (cold, then warm, on the default protocol) on the
# committed library of whichever card the call gets: the H200's re-tuned one (2026-12-06, first
# session) or the H100 SXM's, finished this session (docs/results/2026-12-05d-h100-library/call_2).
#
#   OUT=$OUT [TOTAL=seconds, default 560] bash docs/results/2026-12-06b-whole-matrix/any.sh
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
EVIDENCE_COMMIT=1 DEADLINE=${TOTAL:-560} exec bash docs/results/2026-12-03i-h200-arena/call_5.sh
