#!/usr/bin/env bash
# Call 2 (the box's Triton 3.6): is a placed cell's time set per graph capture? The probe times
# the same cells on the same operands again and again in one process, each repetition capturing
# its graphs anew, with one graph per side (the protocol) and with eight (GEMMWATCH_CAPTURES=8).
# Where eight narrow the spread, the whole matrix cold and warm with eight (an A/A pair).
set -uo pipefail
out=${OUT:-/tmp/out}
start=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "flush_buffers" \
  > "$out/pytest-captures.txt" 2>&1 || { tail -n 30 "$out/pytest-captures.txt"; exit 1; }
tail -n 1 "$out/pytest-captures.txt"
timeout 200 python3 -m ci.state_probe --out "$out/captures-probe.json" --reps 10 --rounds 30 --phases fixed \
  --cold-l2 suite suite+cg8 --cells "fp16 1x4608x3584" "bf16 128x3584x18944" "fp16 1x3584x18944" \
  "fp16 16x3584x3584" "fp8_e4m3 128x4608x3584" > "$out/captures-probe.txt" 2> "$out/captures-probe.err"
echo "probe rc $?"; grep -v '^   ' "$out/captures-probe.txt"
python3 - "$out/captures-probe.json" <<'PY' || exit 0
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["rows"]
def cv(phase, key):
    out = []
    for cell in {r["cell"] for r in rows}:
        xs = [r[key] for r in rows if r["cell"] == cell and r["phase"] == phase]
        out.append(statistics.stdev(xs) / statistics.fmean(xs))
    return statistics.fmean(out)
one, eight = (cv(p, "native_s") + cv(p, "triton_s") for p in ("suite-fixed", "suite+cg8-fixed"))
print(f"mean CV (native + Triton): one graph {100 * one:.3f}%, eight {100 * eight:.3f}%")
sys.exit(0 if eight < 0.7 * one else 1)
PY
left=$((590 - ($(date +%s) - start)))
echo "eight graphs narrow the spread: the whole matrix with them, $left s left"
GEMMWATCH_CAPTURES=8 EVIDENCE_COMMIT=1 GEMMWATCH_NATIVE_KERNELS=1 RUNS="cold warm" INJECT= \
  PACK=$out/ev.tgz WORK=/tmp/w bash ci/gpu_evidence.sh /tmp/ev "$left" 2>&1 | tail -n 12
