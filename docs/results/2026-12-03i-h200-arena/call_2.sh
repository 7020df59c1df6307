#!/usr/bin/env bash
# Call 2 (the box's Triton 3.6): the eighth session's next_h.sh as it stands, with RUN=cold: the
# whole matrix with the operand arena on an empty Triton cache (the warm run meant to follow found
# no machine: call 3).
RUN=cold exec bash docs/results/2026-12-03h-h200-settle/next_h.sh
