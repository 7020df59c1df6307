#!/usr/bin/env bash
# Call 3 on the H200, after call_clusters.sh on the same machine (Triton 3.9 unpacked in /tmp/t39):
# a Triton 3.9 library for the buckets that lose to the native library (last whole-matrix run,
# Triton 3.6), seeded with the 3.6 library's configs (re-timed under 3.9, the incumbents) and
# tuned with the Gluon kernel's cluster candidates (GLUON_CLUSTER_TRITON naming 3.9). Stops
# starting buckets at the deadline; what is timed is written ($OUT/tuned).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
[ -f /tmp/t39/triton/__init__.py ] || { echo "Triton 3.9 is not unpacked in /tmp/t39 (a fresh machine)"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c "import triton; from targets import configs; print('triton', triton.__version__, 'clusters offered', configs.gluon_clusters_offered())" | tee "$out/versions.txt"
timeout 560 python3 -m ci.cli tune --shapes llm square odd --dtypes fp16 bf16 fp8_e4m3 --below 1.0 \
  --run docs/results/2026-12-03c-h200-gemv/ev2/run-warm.json --seed targets/tuned/h200-triton3.6.0.json \
  --match "${MATCH:--c[mn]2$}" --top-k 16 --refine 1 --finalists 2 --deadline "${DEADLINE:-480}" \
  --dir "$out/tuned" > "$out/tune-clusters.log" 2>&1
echo "== tune: exit $?"; tail -40 "$out/tune-clusters.log"
