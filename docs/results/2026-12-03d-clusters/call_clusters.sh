#!/usr/bin/env bash
# The Gluon kernel's clusters on the H200 under Triton 3.9 (carried: pack_triton.sh), one call:
# their GPU tests, then each cluster config timed beside its one-CTA twin and the native library
# (`gemmwatch try --no-library`: Triton 3.9 has no tuned library yet), on the cells where cuBLAS
# runs clusters and ours lose (`gemmwatch explain`, 2026-12-03 third session). From the repository
# root on the box, every part of .t39 there (the first carried by an earlier call), asv's wheels in
# .whl; logs and JSON under $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/t39
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
if [ ! -f /tmp/t39/triton/__init__.py ]; then
  [ -d .t39/p0 ] || cp -r /tmp/t39parts/p0 .t39/  # carried by the call before, kept in /tmp
  (cd .t39 && cat p*/part* | sha256sum -c <(sed 's/triton.tar.xz/-/' SHA256)) || exit 1
  cat .t39/p*/part* | xz -d | tar -x -C /tmp/t39 || exit 1
fi
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, triton.__file__)" | tee "$out/versions.txt"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw --format=csv | tee -a "$out/versions.txt"

# 0. the smallest problems first: one K step (no slot reused), then 4 and 16 (the ring wraps)
for shape in 256x128x64 256x128x256 256x128x1024 128x256x1024; do
  timeout -s KILL 60 python3 -m ci.cli try --no-library --rounds 2 --cells "fp16 $shape" --configs \
    BM128-BN128-BK64-w8-s4-g8-gluon-ws-cm2 BM128-BN128-BK64-w8-s4-g8-gluon-ws-cn2 > "$out/probe-$shape.md" 2>&1
  rc=$?; echo "== probe fp16 $shape: exit $rc"; grep "named\|rror" "$out/probe-$shape.md" | head -4
  [ $rc -ne 137 ] || { echo "a cluster kernel did not finish in 60 s: stopping here"; exit 1; }
done

# 1. correct, and finishing (a cluster that deadlocks would hang: each test under a timeout)
timeout 200 python3 -m pytest -q -p no:cacheprovider --timeout 120 -n 4 -m gpu tests/test_gluon.py -k "cluster or cm2 or cn2" \
  > "$out/pytest-clusters.txt" 2>&1
tail -25 "$out/pytest-clusters.txt"
# (timed even where some fail: `try` checks each config against the float64 reference itself and
# reports a wrong one, a hang is stopped by its timeout)
grep -q " passed" "$out/pytest-clusters.txt" || { echo "no cluster test passed: no timing"; exit 1; }

# 2. timed: one-CTA twin, along M, along N (fp8 128-row cells: cuBLAS's 64-72 x 64 tiles in 2-8 CTA clusters)
try() {  # NAME "CELL,CELL,..." "CONFIG CONFIG ..."
  local cells configs
  IFS=, read -ra cells <<< "$2"
  read -ra configs <<< "$3"
  [ "$SECONDS" -lt 470 ] || { echo "== try $1: no time left"; return; }
  timeout 100 python3 -m ci.cli try --no-library --json "$out/try-$1.json" --cells "${cells[@]}" \
    --configs "${configs[@]}" > "$out/try-$1.md" 2> "$out/try-$1.log"
  echo "== try $1: exit $?"; cat "$out/try-$1.md"
}
try fp8-128 "fp8_e4m3 128x4096x4096,fp8_e4m3 128x4608x3584,fp8_e4m3 128x3584x3584,fp8_e4m3 128x8192x8192" \
  "BM64-BN64-BK128-w4-s8-g8 BM64-BN64-BK128-w4-s8-g8-gluon-ws BM64-BN64-BK128-w4-s8-g8-gluon-ws-cm2 BM64-BN64-BK128-w4-s8-g8-gluon-ws-cn2 BM64-BN128-BK128-w4-s8-g8-gluon-ws-cm2"
try fp8-128w "fp8_e4m3 128x10240x8192,fp8_e4m3 128x6144x4096" \
  "BM128-BN64-BK128-w8-s8-g8-gluon-wg BM128-BN64-BK128-w8-s8-g8-gluon-wg-cn2 BM128-BN128-BK128-w8-s6-g8-gluon-wg BM128-BN128-BK128-w8-s6-g8-gluon-wg-cn2 BM128-BN64-BK128-w8-s8-g8-gluon-ws-cm2"
try fp8-big "fp8_e4m3 4096x3584x3584,fp8_e4m3 8192x8192x8192,fp8_e4m3 2048x2048x2048" \
  "BM128-BN256-BK128-w8-s3-g8-gluon-wg BM128-BN256-BK128-w8-s3-g8-gluon-ws-cm2 BM128-BN128-BK128-w8-s6-g8-gluon-wg BM128-BN128-BK128-w8-s6-g8-gluon-wg-cn2 BM128-BN128-BK128-w8-s6-g8-gluon-ws-cm2"
try 16bit "fp16 1024x1024x1024,bf16 128x4096x4096,fp16 4096x4096x4096,bf16 3000x5000x1000" \
  "BM64-BN128-BK128-w4-s4-g8-gluon-ws BM64-BN128-BK128-w4-s4-g8-gluon-ws-cm2 BM128-BN64-BK64-w4-s6-g8-gluon-ws-cn2 BM64-BN64-BK64-w4-s8-g8-gluon-ws-cm2 BM128-BN128-BK64-w8-s6-g8-gluon-wg BM128-BN128-BK64-w8-s6-g8-gluon-wg-cn2 BM128-BN256-BK64-w8-s3-g8-gluon-ws-cm2"

# 3. the rest of the Gluon kernel's GPU tests under 3.9 (the Triton axis on the GPU), if the call has time left
[ "$SECONDS" -lt 420 ] || { echo "no time left for the rest of the Gluon tests"; exit 0; }
timeout $((560 - SECONDS)) python3 -m pytest -q -p no:cacheprovider --timeout 120 -n 8 -m gpu tests/test_gluon.py -k "not (cluster or cm2 or cn2)" \
  2>&1 | tail -15 | tee "$out/pytest-gluon-39.txt"
