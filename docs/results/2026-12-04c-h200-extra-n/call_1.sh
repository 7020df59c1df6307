#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6, carry .whl): the previous session's next_1.sh as it was: the
# extra-column tiles' GPU tests, the cool start's GPU test, and `gemmwatch try` on five cells.
exec bash docs/results/2026-12-04b-h200-cooldown/next_1.sh "$@"
