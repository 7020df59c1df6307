#!/usr/bin/env bash
# Whichever card the call gets: an H200 runs call_1.sh beside this file (profile, then re-tune),
# an H100 SXM its first library's call (docs/results/2026-12-05d-h100-library/call_1.sh).
#
#   OUT=$OUT bash docs/results/2026-12-06a-h200-profile/any.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "card: $name"
case "$name" in
  *H200*) exec bash docs/results/2026-12-06a-h200-profile/call_1.sh ;;
  *H100*) exec bash docs/results/2026-12-05d-h100-library/call_1.sh ;;
  *) echo "no script for $name"; exit 2 ;;
esac
