#!/usr/bin/env bash
# Correctness tests and the bench table on a GPU box whose Python already has
# torch and triton (nothing is installed). Usage: ci/gpu_check.sh [LOG_DIR]
# Writes env.txt, pytest.txt, bench.txt and bench.json to LOG_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
log=${1:-gpu-logs}
mkdir -p "$log"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv 2>&1
  "$PY" -c 'import sys, torch, triton; p = torch.cuda.get_device_properties(0); print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "cuda", torch.version.cuda, p.name, "SMs", p.multi_processor_count, "L2", p.L2_cache_size, "smem_optin", getattr(p, "shared_memory_per_block_optin", "?"))'
} >"$log/env.txt" 2>&1
cat "$log/env.txt"

# Correctness: every test, on the GPU (the gpu-marked ones at real sizes). Several
# workers share the GPU; autotuning times only the top candidates here since
# these runs check results, not speed.
GEMMWATCH_AUTOTUNE_TOP_K=${GEMMWATCH_AUTOTUNE_TOP_K:-4} "$PY" -m pytest -p no:cacheprovider -q -n "${WORKERS:-8}" \
  2>&1 | tee "$log/pytest.txt" | tail -n 25
tests_rc=${PIPESTATUS[0]}
# The tests that assert GPU timings skip under -n (the workers share the GPU): alone, now.
"$PY" -m pytest -p no:cacheprovider -q -m gpu tests/test_timing.py 2>&1 | tee -a "$log/pytest.txt" | tail -n 5
timing_rc=${PIPESTATUS[0]}
tests_rc=$(( tests_rc || timing_rc ))

# The bench table, alone on the GPU.
"$PY" -m ci.cli bench --json "$log/bench.json" 2>&1 | tee "$log/bench.txt"
bench_rc=${PIPESTATUS[0]}
echo "pytest exit $tests_rc, bench exit $bench_rc"
exit $(( tests_rc || bench_rc ))
