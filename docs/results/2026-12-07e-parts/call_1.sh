#!/usr/bin/env bash
# One call, whichever card comes (the box's Triton 3.6, carry .whl): the steps of
# docs/results/2026-12-07d-phase/call_2.sh with the probe beside this file:
#   - an H200: docs/results/2026-12-07d-phase/h200.sh (the phase configs tuned into its library's
#     fp16/bf16 1000^3 and 3000x5000x1000 buckets, B's and A's copies alone into the 3000x5000x1000
#     ones, the sixteen-row swap tiles unsplit into the fp8 one-row ones, then the goal's call: the
#     swap-AB tiles into the 128-row buckets, then the whole matrix);
#   - any other card, at most 300 s:
#       1. the phase tiles' correctness tests on the card (tests/test_matmul.py -k phase);
#       2. the probe beside this file (whole lines against half lines, fp16), $OUT/parts.txt;
#       3. a tune of the four cells whose A rows are off the lines (fp16/bf16 1000^3 and
#          3000x5000x1000) over the phase configs alone (`-phase` and `-phase-hl`), each bucket's
#          entry timed beside them, into a copy of the card's library ($OUT/<library>.json,
#          tune-phase.log).
#
# Ran on 2026-12-07 (sixth session) on an H100 SXM, at commit ad685f1, where the tune's match and
# candidates held both `-phase` and `-phase-hl`: docs/results/2026-12-07f-half-lines/call_1/. The
# half lines lost; since then both are whole lines only (`-phase`), and the next call is
# docs/results/2026-12-07f-half-lines/call_2.sh.
#
#   OUT=$OUT [TOTAL=seconds, default 560; other cards than an H200 take at most 300] bash docs/results/2026-12-07e-parts/call_1.sh
CAP=300 PROBE=docs/results/2026-12-07e-parts/parts_probe.py PROBE_OUT=parts.txt PROBE_S=130 \
  exec bash docs/results/2026-12-07d-phase/call_2.sh
