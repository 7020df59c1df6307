#!/usr/bin/env bash
# Offline (no GPU): the fp32-ieee 8192^3 TMA configs compiled for sm_90 by the installed Triton
# (`gemmwatch resources`), by K step (BK) and output store, registers and spilled bytes per thread:
#   PY=.venv/bin/python bash docs/results/2026-12-03g-h200-flush/spill_bk.sh
set -euo pipefail
py=${PY:-python3}
key='matmul|fp32|ieee|rowrow|8192x8192x8192'
version=$("$py" -c 'import triton; print(triton.__version__)')
for variant in tma tma_store; do
  for bk in 16 32; do
    for cfg in "128 128 4" "256 128 8" "128 256 8"; do
      set -- $cfg
      lib=$(mktemp --suffix=.json)
      python3 - "$lib" "$version" "$key" "$variant" "$bk" "$1" "$2" "$3" <<'PY'
import json, sys
path, version, key, variant, bk, bm, bn, warps = sys.argv[1:]
config = dict(block_m=int(bm), block_n=int(bn), block_k=int(bk), num_stages=4, num_warps=int(warps), group_m=8,
              split_k=1, variant=variant)
entry = {"cell": "fp32-ieee 8192x8192x8192", "config": config, "tried": {}, "failed": {}}
json.dump({"target": "h200", "triton": version, "meta": {}, "entries": {key: entry}}, open(path, "w"))
PY
      echo "triton $version $("$py" -m ci.cli resources --target h200 --library "$lib" 2>&1 | tail -1)"
      rm -f "$lib"
    done
  done
done
