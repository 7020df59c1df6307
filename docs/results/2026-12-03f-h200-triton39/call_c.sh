#!/usr/bin/env bash
# Call C (Triton 3.9 in /tmp/t39 from call B): the rest of the Triton 3.9 library, each bucket the
# 3.6 library's config re-timed under 3.9 (--seed, --top-k 0), the 21 entries of the fifth session
# kept (--resume); written to /tmp/tuned (kept on the box for call D) and copied to $OUT/tuned.
# With ONE_ARRIVAL=1 the box's copy takes one_arrival.patch first.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out/tuned" /tmp/tuned
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD PYTHONUNBUFFERED=1
[ "${ONE_ARRIVAL:-0}" = 1 ] && { patch -p1 < docs/results/2026-12-03e-h200-clusters/one_arrival.patch || exit 1; }
cp -n targets/tuned/*.json /tmp/tuned/
timeout 560 python3 -m ci.cli tune --shapes llm square odd --dtypes fp16 bf16 fp8_e4m3 fp32-ieee fp32-tf32 \
  --seed targets/tuned/h200-triton3.6.0.json --top-k 0 --resume --rounds 10 --deadline 500 --dir /tmp/tuned \
  > "$out/tune39.log" 2>&1; echo "== tune: exit $?"; tail -5 "$out/tune39.log"
cp /tmp/tuned/h200-triton3.9.0.json "$out/tuned/"
python3 -c "import json; d=json.load(open('/tmp/tuned/h200-triton3.9.0.json')); print(len(d['entries']), 'entries')"
