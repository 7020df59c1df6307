#!/usr/bin/env bash
# Noise-floor evidence on a GPU box: the same commit measured by `gemmwatch run`
# in separate processes (A/A), an injected-slowdown run, the A/A noise report,
# and optionally (RECHECK=1) the PR workflow's second stage on the same code.
# Runs share one work dir, so the first run is cold (empty Triton cache when
# the machine is fresh) and the later ones warm; each run's wall time is printed.
# Everything is bounded by DEADLINE_SECONDS: a step that would pass it is cut
# (its partial output discarded and said so), and the steps' files land in
# OUT_DIR as they finish, so a caller killed at its own limit keeps them.
#
#   ci/gpu_evidence.sh OUT_DIR [DEADLINE_SECONDS]
#
# Exit status 1 when a run failed or was cut; every step's status is in OUT_DIR/walltimes.txt.
# Each finished run's result file is also copied to OUT_DIR/run-NAME.json and its per-cell context
# packed into OUT_DIR/NAME-context.tgz (unpacked as NAME/context beside NAME/results, `gemmwatch
# noise --clocks` reads it); OUT_DIR/explain.md is `gemmwatch explain` of the last run (the cells
# below native, our launch beside the native kernel's).
#
# Environment: RUNS (default "cold warm warm2"), RUN_ARGS (extra `gemmwatch run`
# arguments, e.g. "--shapes square"), WORK (the shared work dir, default OUT_DIR/work;
# one outside OUT_DIR lets a later call on the same machine start warm), INJECT
# ("CELL=FRACTION;...", default a 3% slowdown of fp16 4096^3 and of the fp16 decode
# cell 16x4096x4096; INJECT= skips the injected run; `gemmwatch compare` of it against the last
# run of RUNS goes to OUT_DIR/compare-injected.md), INJECT_ARGS (what it measures),
# EVIDENCE_COMMIT=1 (commit uncommitted changes of the code first; without it they stop the
# script, since the runs measure HEAD), RECHECK=1 (every cell rechecked A/A side by side in RECHECK_PARTS processes, then
# `simulate --recheck`), PACK (a .tgz path: the result files, reports, logs and packed contexts
# of OUT_DIR in one archive at the end, e.g. "$OUT/evidence.tgz" on a device box that returns
# only a few files).
#
# Resuming: a run whose OUT_DIR/run-NAME.json exists (its NAME-context.tgz unpacked beside it for
# `noise --clocks`), and a recheck part whose OUT_DIR/recheck-aa-NN.json exists, is kept, not
# measured again; so a later call can unpack an earlier call's PACK into OUT_DIR and go on where
# the deadline cut it (e.g. RUNS=" " RECHECK=1 INJECT= for the recheck alone).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: ci/gpu_evidence.sh OUT_DIR [DEADLINE_SECONDS]}
deadline=${2:-540}
# `gemmwatch run` measures a commit from a clean worktree, not the checkout's files: a copied tree
# whose changes are not committed (a GPU box given a copy of a working tree with an older .git)
# would be measured as the older commit. Refuse, or with EVIDENCE_COMMIT=1 commit the tree first.
changed=$(git status --porcelain --untracked-files=all -- kernels targets benchmarks ci 2>/dev/null)
if [ -n "$changed" ]; then
  if [ "${EVIDENCE_COMMIT:-0}" = 1 ]; then
    git add -A kernels targets benchmarks ci &&
      git -c user.name=gemmwatch -c user.email=gemmwatch@localhost commit -qm "gpu_evidence: the tree measured" ||
      exit 2
    echo "gpu_evidence: committed the checkout's changes as $(git rev-parse --short HEAD) (EVIDENCE_COMMIT=1)"
  else
    echo "gpu_evidence: kernels/, targets/, benchmarks/ or ci/ have uncommitted changes, which \`gemmwatch run\`" \
      "would not measure (it measures HEAD from a clean worktree); commit them, or set EVIDENCE_COMMIT=1:" >&2
    echo "$changed" | head -n 5 >&2
    exit 2
  fi
fi
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
work=${WORK:-$out/work}
start=$(date +%s)
left() { echo $((deadline - ($(date +%s) - start))); }
status=0 # 1 when a run failed or was cut
note() { echo "$*" | tee -a "$out/walltimes.txt"; }

run() { # run NAME [args...]: one gemmwatch run into its own results dir, cut at the deadline
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  timeout "$(left)" python3 -m ci.cli run --results-dir "$out/$name/results" --work-dir "$work" "$@" \
    >"$out/$name.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || status=1
  if [ "$rc" = 124 ]; then
    note "$name: cut by the deadline after $(($(date +%s) - t0))s (results discarded)"
    rm -rf "$out/$name/results"
  else
    note "$name: exit $rc, wall $(($(date +%s) - t0))s"
    # For fetching from a GPU box: the result file beside the others, and the run's per-cell context
    # (clock states, configs, timing method, calls per replay, native kernels) that `noise --clocks` reads.
    find "$out/$name/results" -mindepth 2 -maxdepth 2 -name '*-*.json' ! -name machine.json \
      -exec cp {} "$out/run-$name.json" \; 2>/dev/null
    [ -d "$out/$name/context" ] && tar czf "$out/$name-context.tgz" -C "$out/$name" context
  fi
  tail -n 2 "$out/$name.log"
  return "$rc"
}

kept() { # kept NAME: an earlier call's run, its context unpacked back beside a copy of its result
  # file as `gemmwatch run` laid them out (NAME/results/MACHINE, NAME/context/MACHINE: `noise --clocks`)
  local name=$1 machine
  note "$name: kept from an earlier call"
  [ -s "$out/$name-context.tgz" ] && [ ! -d "$out/$name/context" ] || return 0
  mkdir -p "$out/$name" && tar xzf "$out/$name-context.tgz" -C "$out/$name" || return 0
  for machine in "$out/$name"/context/*/; do
    machine=$(basename "$machine")
    mkdir -p "$out/$name/results/$machine" && cp "$out/run-$name.json" "$out/$name/results/$machine/"
  done
}

# shellcheck disable=SC2086
for name in ${RUNS:-cold warm warm2}; do
  [ -s "$out/run-$name.json" ] && { kept "$name"; continue; }
  [ "$(left)" -gt 30 ] || { note "$name: skipped, deadline"; continue; }
  run "$name" ${RUN_ARGS:-}
done
inject=${INJECT-fp16 4096x4096x4096=0.03;fp16 16x4096x4096=0.03}
if [ -n "$inject" ] && [ ! -s "$out/run-injected.json" ] && [ "$(left)" -gt 60 ]; then
  # shellcheck disable=SC2086
  GEMMWATCH_INJECT_SLOWDOWN="$inject" run injected ${INJECT_ARGS:---shapes 4096x4096x4096 16x4096x4096 --dtypes fp16}
fi

files=""
# shellcheck disable=SC2086
for name in ${RUNS:-cold warm warm2}; do # the run's own results (its context beside), else the kept copy
  f=$(find "$out/$name/results" -mindepth 2 -maxdepth 2 -name '*-*.json' ! -name machine.json 2>/dev/null | head -n 1)
  [ -z "$f" ] && [ -s "$out/run-$name.json" ] && f=$out/run-$name.json
  [ -n "$f" ] && files+="$f"$'\n'
done
files=${files%$'\n'}
if [ -n "$files" ]; then
  # shellcheck disable=SC2086
  python3 -m ci.cli noise --clocks $files >"$out/noise.txt" 2>&1 && tail -n 3 "$out/noise.txt"
  # the cells below native in the last run, our launch beside the native kernel's (its context beside it)
  python3 -m ci.cli explain "${files##*$'\n'}" >"$out/explain.md" 2>&1 && tail -n 1 "$out/explain.md"
fi
# The injected run against the last clean run, as a PR's comparison stage would call it (exit 1:
# a regression called, which is what the injection asks for).
if [ -n "$files" ] && [ -s "$out/run-injected.json" ]; then
  python3 -m ci.cli compare --base-results "${files##*$'\n'}" --head-results "$out/run-injected.json" \
    >"$out/compare-injected.md" 2>&1
  note "compare-injected: exit $? (1: a regression called)"
  head -n 1 "$out/compare-injected.md"
fi

# The PR workflow's second stage on the same code (RECHECK=1): every cell of the matrix
# rechecked base = head = HEAD side by side in one process (A/A, per-round samples kept),
# in parts so that a deadline keeps the parts done; then `simulate --recheck`: false alarms
# per 100 PR runs with the recheck applied.
if [ "${RECHECK:-0}" = 1 ] && [ -n "$files" ]; then
  # The cells the runs measured (RUN_ARGS may narrow the matrix; skipped cells have no value).
  python3 -c 'import sys; from ci.asv_results import load; print("\n".join(load(sys.argv[1]).measured_cells()))' \
    "${files%%$'\n'*}" >"$out/recheck-cells.txt"
  split -n "l/${RECHECK_PARTS:-4}" -d "$out/recheck-cells.txt" "$out/recheck-cells-part"
  for part in "$out"/recheck-cells-part*; do
    name=recheck-aa-${part##*-part}
    [ -s "$out/$name.json" ] && { note "$name: kept from an earlier call"; continue; }
    [ "$(left)" -gt 30 ] || { note "$name: skipped, deadline"; continue; }
    mapfile -t cells <"$part"
    t0=$(date +%s)
    timeout "$(left)" python3 -m ci.cli recheck --base HEAD --head HEAD --cells "${cells[@]}" --work-dir "$work" \
      --output "$out/$name.json" >"$out/$name.log" 2>&1
    note "$name (${#cells[@]} cells): exit $?, wall $(($(date +%s) - t0))s"
  done
  reports=$(find "$out" -maxdepth 1 -name 'recheck-aa-*.json' | sort)
  if [ -n "$reports" ]; then
    partial=""
    # A part cut by the deadline: count only the cells the finished parts cover.
    [ "$(echo "$reports" | wc -l)" -lt "$(find "$out" -maxdepth 1 -name 'recheck-cells-part*' | wc -l)" ] &&
      partial=--only-rechecked
    # shellcheck disable=SC2086
    python3 -m ci.cli simulate $files --recheck $reports $partial >"$out/simulate-recheck.txt" 2>&1
    note "simulate --recheck: exit $?"
    cat "$out/simulate-recheck.txt"
  fi
fi
if [ -n "${PACK:-}" ]; then
  (cd "$out" && find . -maxdepth 1 -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' -o -name '*.tgz' -o -name '*.md' \) \
    ! -name "$(basename "$PACK")" -print0 | tar czf "$PACK" --null -T -) && echo "packed: $PACK"
fi
exit "$status"
