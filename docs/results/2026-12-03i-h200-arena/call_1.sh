#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6): the eighth session's next_g.sh as it stands: the arena's GPU tests,
# then five cells' repetitions with fresh clones ("suite") and in the arena ("suite+arena").
exec bash docs/results/2026-12-03h-h200-settle/next_g.sh
