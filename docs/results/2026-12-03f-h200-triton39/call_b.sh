#!/usr/bin/env bash
# Call B on the H200 (the call before carried .t39/p0 to /tmp/t39parts): Triton 3.9 unpacked to
# /tmp/t39, then the fifth session's prepared comparison (how many clusters fit at once; the cluster
# kernel as it is against the one-arrival protocol of one_arrival.patch, applied to the box's copy).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
source docs/results/2026-12-03f-h200-triton39/unpack_t39.sh
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" | tee "$out/versions.txt"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw --format=csv | tee -a "$out/versions.txt"
here=docs/results/2026-12-03e-h200-clusters
timeout 60 python3 $here/max_clusters.py 2>&1 | tee "$out/max-clusters.md"
cells=("fp8_e4m3 128x4096x4096" "fp8_e4m3 128x8192x8192" "fp16 4096x4096x4096" "bf16 3000x5000x1000" "fp16 4096x6144x4096")
configs=(BM64-BN64-BK128-w4-s8-g8-gluon-ws BM64-BN64-BK128-w4-s8-g8-gluon-ws-cm2 BM128-BN128-BK64-w8-s6-g8-gluon-wg
         BM128-BN128-BK64-w8-s6-g8-gluon-wg-cn2 BM128-BN256-BK64-w8-s3-g8-gluon-ws BM128-BN256-BK64-w8-s3-g8-gluon-ws-cm2)
timeout 140 python3 -m ci.cli try --no-library --json "$out/try-now.json" --cells "${cells[@]}" --configs "${configs[@]}" \
  > "$out/try-now.md" 2> "$out/try-now.log"; echo "== as it is: exit $?"; cat "$out/try-now.md"
patch -p1 < $here/one_arrival.patch || exit 1
timeout 130 python3 -m pytest -q -p no:cacheprovider --timeout 120 -n 4 -m gpu tests/test_gluon.py \
  -k "cluster or cm2 or cn2" > "$out/pytest-one-arrival.txt" 2>&1; tail -3 "$out/pytest-one-arrival.txt"
timeout 140 python3 -m ci.cli try --no-library --json "$out/try-one.json" --cells "${cells[@]}" --configs "${configs[@]}" \
  > "$out/try-one.md" 2> "$out/try-one.log"; echo "== one arrival: exit $?"; cat "$out/try-one.md"
