#!/usr/bin/env bash
# Whichever card the call gets: an H200 runs the whole matrix on the library re-tuned by call_1.sh
# beside this file (2026-12-06, first session: the profile, then the re-tune of 13 buckets),
# an H100 SXM its first library's call (docs/results/2026-12-05d-h100-library/call_1.sh), going on
# from where the first one (2026-12-06, first session) stopped: the library it wrote is committed,
# so its seeding step is skipped.
#
#   OUT=$OUT bash docs/results/2026-12-06a-h200-profile/any.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "card: $name"
case "$name" in
  *H200*) EVIDENCE_COMMIT=1 DEADLINE=${TOTAL:-560} exec bash docs/results/2026-12-03i-h200-arena/call_5.sh ;;
  *H100*) exec bash docs/results/2026-12-05d-h100-library/call_1.sh 2026-12-06T03:27:20+00:00 ;;
  *) echo "no script for $name"; exit 2 ;;
esac
