#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6): the eighth session's next_g.sh as it stands: the arena's GPU tests,
# then five cells' repetitions with fresh clones ("suite") and in the arena ("suite+arena"). It ran on
# commit cdd2727, where the arena was off by default; GEMMWATCH_ARENA=0 keeps "suite" on fresh clones
# now that it is on.
GEMMWATCH_ARENA=0 exec bash docs/results/2026-12-03h-h200-settle/next_g.sh
