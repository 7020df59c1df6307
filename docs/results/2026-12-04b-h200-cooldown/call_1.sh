#!/usr/bin/env bash
# Call 1 (card 50e66c4e) and call 6 (card c828feed): the whole matrix cold and warm with the cooldown
# after each round of the long cells doubled (GEMMWATCH_COOLDOWN=2, protocol "2026-12-03+cooldown=2").
set -uo pipefail
exec bash docs/results/2026-12-04-h200-kmajor/call_4.sh
