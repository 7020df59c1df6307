#!/usr/bin/env bash
# Call 2 on the H100 SXM (the box's Triton 3.6, carry .whl): the default protocol's cold and warm
# runs with the H200's tuned library served as the H100's (the same GH100 die and SM count; its
# memory is slower), so the gate dispatches from a library instead of autotuning each cell, which
# took ~8-10 s a cell in call 1 and was cut after 55 of 122 cells. Measures how the H200's configs
# fare against cuBLAS on the H100 and the A/A noise of the protocol on a second chip.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
mkdir -p /tmp/tuned-h100
python3 - <<'PY'
import json
d = json.load(open("targets/tuned/h200-triton3.6.0.json"))
d["target"] = "h100-sxm"
d.setdefault("meta", {})["borrowed_from"] = "h200"
json.dump(d, open("/tmp/tuned-h100/h100-sxm-triton3.6.0.json", "w"))
PY
export GEMMWATCH_TUNED_DIR=/tmp/tuned-h100
start=$(date +%s)
for run in cold warm; do
  left=$((${DEADLINE:-500} - ($(date +%s) - start)))
  [ "$left" -gt 120 ] || { echo "$run: skipped, $left s left"; continue; }
  TRITON_CACHE_DIR=/tmp/tc-default GEMMWATCH_NATIVE_KERNELS=1 RUNS="$run" INJECT= \
    PACK=$out/ev-default-$run.tgz WORK=/tmp/w-default-$run bash ci/gpu_evidence.sh /tmp/ev-default-$run "$left" 2>&1 | tail -n 5
done
