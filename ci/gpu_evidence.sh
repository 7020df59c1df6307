#!/usr/bin/env bash
# Noise-floor evidence on a GPU box: the same commit measured by `gemmwatch run`
# in separate processes (A/A), then one run with an injected slowdown, then the
# A/A report. Runs share one work dir, so the first run is cold (empty Triton
# cache, autotuning) and the later ones warm; each run's wall time is printed.
#
#   ci/gpu_evidence.sh OUT_DIR [DEADLINE_SECONDS]
#
# Environment: RUN_ARGS (extra `gemmwatch run` arguments, e.g. "--shapes square"),
# INJECT ("CELL=FRACTION;...", default a 3% slowdown of fp16 4096^3 and of the
# fp16 decode cell 16x4096x4096), INJECT_ARGS (what the injected run measures),
# RECHECK=1 (then every cell rechecked A/A side by side, and `simulate --recheck`).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: ci/gpu_evidence.sh OUT_DIR [DEADLINE_SECONDS]}
deadline=${2:-540}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
work="$out/work"
start=$(date +%s)
last=0
run() {  # run NAME [args...]: one gemmwatch run into its own results dir
  local name=$1; shift
  local t0; t0=$(date +%s)
  python3 -m ci.cli run --results-dir "$out/$name/results" --work-dir "$work" "$@" 2>&1 | tee "$out/$name.log" | tail -n 3
  local rc=${PIPESTATUS[0]}
  last=$(( $(date +%s) - t0 ))
  echo "$name: exit $rc, wall ${last}s" | tee -a "$out/walltimes.txt"
  return "$rc"
}
enough_time() { [ $(( $(date +%s) - start + ${1:-$last} )) -lt "$deadline" ]; }

# shellcheck disable=SC2086
run cold ${RUN_ARGS:-} || exit 1
if enough_time; then run warm ${RUN_ARGS:-}; fi
if enough_time; then run warm2 ${RUN_ARGS:-}; fi
inject=${INJECT:-fp16 4096x4096x4096=0.03;fp16 16x4096x4096=0.03}
# shellcheck disable=SC2086
if enough_time 60; then GEMMWATCH_INJECT_SLOWDOWN="$inject" run injected ${INJECT_ARGS:---shapes 4096x4096x4096 16x4096x4096 --dtypes fp16}; fi

files=$(ls "$out"/{cold,warm,warm2}/results/*/*-*.json 2>/dev/null | grep -v machine.json)
# shellcheck disable=SC2086
python3 -m ci.cli noise --clocks $files > "$out/noise.txt" 2>&1 && tail -n 3 "$out/noise.txt"

# The PR workflow's second stage on the same code (RECHECK=1): every cell of the matrix
# rechecked base = head = HEAD side by side in one process (A/A, per-round samples kept),
# then `simulate --recheck`: false alarms per 100 PR runs with the recheck applied.
if [ "${RECHECK:-0}" = 1 ] && enough_time 240; then
  mapfile -t cells < <(python3 -c 'from benchmarks import matrix
for c in matrix.select(matrix.load(), interpreter=False).cells: print(c.name)')
  python3 -m ci.cli recheck --base HEAD --head HEAD --cells "${cells[@]}" --work-dir "$work" \
    --output "$out/recheck-aa.json" > "$out/recheck-aa.log" 2>&1
  echo "recheck A/A: exit $?" | tee -a "$out/walltimes.txt"
  # shellcheck disable=SC2086
  python3 -m ci.cli simulate $files --recheck "$out/recheck-aa.json" > "$out/simulate-recheck.txt" 2>&1 &&
    cat "$out/simulate-recheck.txt"
fi
