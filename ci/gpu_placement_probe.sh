#!/usr/bin/env bash
# Placement evidence on a GPU box: do the split-K cells that move between whole-matrix runs (2-4% on
# the H200, docs/BENCHMARKS.md) move with where their memory lands, and does GEMMWATCH_STREAMS
# spread that out? Each probe process measures the cells after holding SHIFT MiB of device memory
# (a few 2 MiB pages: every later allocation lands elsewhere, low address bits included), once per
# STREAMS setting; then `cold_l2_probe report --pool-shifts`: per setting, the CV across placements.
#
#   ci/gpu_placement_probe.sh OUT_DIR [DEADLINE_SECONDS]
#
# Environment: SHIFTS (MiB, default "0 2 6 34"), STREAMS (default "1 4"), ROUNDS (default 30),
# CELLS (';'-separated, default the decode split-K cells and two references).
# Writes OUT_DIR/s<S>-shift<N>.json and .log per process and OUT_DIR/report.txt; a process that would
# pass the deadline is not started (said in OUT_DIR/steps.txt). Exit 1 when a process failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: ci/gpu_placement_probe.sh OUT_DIR [DEADLINE_SECONDS]}
deadline=${2:-540}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
start=$(date +%s)
left() { echo $((deadline - ($(date +%s) - start))); }
IFS=';' read -r -a cells <<<"${CELLS:-fp16 16x4096x4096;bf16 1x4096x4096;fp16 16x3584x3584;bf16 128x3584x3584;bf16 16x4608x3584;fp16 1x3584x18944;fp16 4096x4096x4096;fp16 1024x1024x1024}"
status=0
for streams in ${STREAMS:-1 4}; do
  for shift in ${SHIFTS:-0 2 6 34}; do
    name="s$streams-shift$shift"
    if [ "$(left)" -lt 45 ]; then
      echo "$name: skipped, deadline" | tee -a "$out/steps.txt"
      continue
    fi
    t0=$(date +%s)
    timeout "$(left)" python3 -m ci.cold_l2_probe run --mode flush --rounds "${ROUNDS:-30}" --shift-mb "$shift" \
      --streams "$streams" --cells "${cells[@]}" --out "$out/$name.json" >"$out/$name.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || status=1
    echo "$name: exit $rc, wall $(($(date +%s) - t0))s" | tee -a "$out/steps.txt"
  done
done
shopt -s nullglob
files=("$out"/s*-shift*.json)
if [ ${#files[@]} -gt 0 ]; then
  python3 -m ci.cold_l2_probe report --pool-shifts "${files[@]}" >"$out/report.txt" 2>&1
  cat "$out/report.txt"
fi
exit "$status"
