#!/usr/bin/env bash
# Call 5 (the box's Triton 3.6): the cooldown after each round of the long cells, 1 (the protocol)
# against 2, on the cells that reach the power cap: the squares and four 4096-row LLM shapes in
# fp16, bf16 and fp8, one process per run, the two settings alternating (w0, a Triton-cache warm-up
# at cooldown 1, then a1 b1 a2 b2 a3 b3; a = cooldown 2, b = cooldown 1), each packed into $OUT as
# it ends.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
export GEMMWATCH_NATIVE_KERNELS=1 TRITON_CACHE_DIR=/tmp/tc-sub EVIDENCE_COMMIT=1 INJECT=
shapes="square 4096x57344x8192 4096x8192x28672 4096x3584x18944 4096x10240x8192"
start=$(date +%s)
for step in w0:1 a1:2 b1:1 a2:2 b2:1 a3:2 b3:1; do
  name=${step%:*}
  left=$((${DEADLINE:-400} - ($(date +%s) - start)))
  [ "$left" -gt 60 ] || { echo "$name: skipped, $left s left"; continue; }
  GEMMWATCH_COOLDOWN=${step#*:} RUNS=$name RUN_ARGS="--shapes $shapes --dtypes fp16 bf16 fp8_e4m3" \
    PACK=$out/ev-$name.tgz WORK=/tmp/w-sub bash ci/gpu_evidence.sh /tmp/ev-$name "$left" 2>&1 | grep -E "exit|cells measured"
done
