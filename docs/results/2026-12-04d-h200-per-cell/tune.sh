#!/usr/bin/env bash
# Calls 1-2 (the box's Triton 3.6, carry .whl): re-tune the buckets whose second cell lagged, each
# cell now ranking its own candidates (ci/tune.py, 2026-12-04 fourth session):
#
#   OUT=$OUT SECONDS_LEFT=540 [MATCH=REGEX] bash docs/results/2026-12-04d-h200-per-cell/tune.sh "SHAPES" DTYPE... [-- PYTEST_K]
#
# The library the launcher reads is copied to /tmp/tuned and returned in $OUT. MATCH (e.g.
# '-sk[248]-xn[0-9]+$', next session's split extra-column tiles once their gate lists the Triton
# version) narrows the candidates to the configs whose names it finds, the library's timed beside them.
# TOP_K (default 24; "all": the target's first 128 of each cell) sets --top-k; RUN (an asv result
# file) with BELOW (e.g. 1.0) tunes only the buckets with a cell below that speedup in it;
# RESUME_SINCE (an ISO time a stopped tune printed) skips the buckets measured since then.
set -uo pipefail
out=${OUT:-/tmp/out}
shapes=$1; shift
dtypes=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do dtypes+=("$1"); shift; done
[ "${1:-}" = "--" ] && { shift; tests_k=$1; }
begin=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
if [ -n "${tests_k:-}" ]; then
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "$tests_k" 2>&1 | tail -n 3 | tee "$out/tests.txt"
fi
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.6.0.json /tmp/tuned/
left=$((${SECONDS_LEFT:-540} - ($(date +%s) - begin)))
timeout "$left" python3 -m ci.cli tune --shapes $shapes --dtypes "${dtypes[@]}" ${MATCH:+"--match=$MATCH"} ${RUN:+--run "$RUN" --below "${BELOW:-1.0}"} ${RESUME_SINCE:+--resume-since "$RESUME_SINCE"} \
  $([ "${TOP_K:-24}" = all ] || echo "--top-k ${TOP_K:-24}") \
  --dir /tmp/tuned --deadline "$((left - 40))" > "$out/tune.log" 2>&1
echo "tune: exit $?"
grep -E "^\[|not reached|Error|gemmwatch tune" "$out/tune.log" | tail -n 30
cp /tmp/tuned/h200-triton3.6.0.json "$out/"
