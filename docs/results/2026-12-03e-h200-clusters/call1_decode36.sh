#!/usr/bin/env bash
# Call 1 on the H200 (Triton 3.6, the box's): the decode tiles the third session built and never
# timed (swap-AB in the persistent TMA kernel, `-tma-swap`; 64-row tiles of the TMA kernels) beside
# the tuned library's choice and the native library (`gemmwatch try`), then a tune of the losing
# decode buckets with the swap-AB candidates. Also keeps .t39/p0 (Triton 3.9's first part) in /tmp
# for the next call. From the repository root on the box; logs under $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/t39parts
cp -r .t39/p0 /tmp/t39parts/ 2>/dev/null
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 GEMMWATCH_TUNED_DIR=$PWD/targets/tuned
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" | tee "$out/versions.txt"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$out/versions.txt"
git rev-parse HEAD 2>/dev/null | tee -a "$out/versions.txt"

try() {  # NAME "CELL,CELL,..." "CONFIG CONFIG ..."
  local cells configs
  IFS=, read -ra cells <<< "$2"
  read -ra configs <<< "$3"
  timeout 150 python3 -m ci.cli try --json "$out/try-$1.json" --cells "${cells[@]}" \
    --configs "${configs[@]}" > "$out/try-$1.md" 2> "$out/try-$1.log"
  echo "== try $1: exit $?"; cat "$out/try-$1.md"
}
try fp8-decode "fp8_e4m3 1x3584x3584,fp8_e4m3 1x4608x3584,fp8_e4m3 1x4096x4096,fp8_e4m3 16x4608x3584,fp8_e4m3 16x3584x3584,fp8_e4m3 1x8192x8192" \
  "BM16-BN64-BK128-w4-s12-g8-tma-swap BM16-BN64-BK128-w4-s16-g8-tma-swap BM16-BN64-BK128-w4-s16-g8-tma-lp-swap BM16-BN128-BK128-w4-s8-g8-tma-swap BM64-BN64-BK128-w4-s12-g8-gluon-ws BM64-BN64-BK128-w4-s8-g8-tma"
try 16bit-decode "fp16 1x4608x3584,bf16 1x4608x3584,bf16 1x8192x8192,bf16 1x8192x28672,fp16 16x4608x3584,bf16 16x3584x18944" \
  "BM16-BN64-BK64-w4-s12-g8-tma-swap BM16-BN64-BK64-w4-s16-g8-tma-swap BM16-BN128-BK64-w4-s8-g8-tma-swap BM64-BN64-BK64-w4-s12-g8-gluon-ws BM64-BN128-BK64-w4-s8-g8-gluon-ws"

# the swap-AB candidates on every losing decode bucket of the last whole-matrix run (kept: what is timed)
timeout 200 python3 -m ci.cli tune --shapes llm odd --dtypes fp8_e4m3 fp16 bf16 --below 1.0 \
  --run docs/results/2026-12-03c-h200-gemv/ev2/run-warm.json --match 'tma(-lp)?-swap$' \
  --top-k 48 --refine 1 --finalists 3 --deadline 150 --dir "$out/tuned" > "$out/tune-swap.log" 2>&1
echo "== tune: exit $?"; tail -30 "$out/tune-swap.log"
ls /usr/local/cuda*/bin/ptxas /opt/torch/.venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ 2>&1 | head
