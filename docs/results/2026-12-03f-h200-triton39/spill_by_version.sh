#!/usr/bin/env bash
# Offline (no GPU): the fp32-ieee 8192^3 TMA configs compiled for sm_90 by each Triton version,
# registers and spilled bytes per thread (`gemmwatch resources`). Each version in its own
# environment (ci/make_triton_env.sh VERSION /tmp/tenv-VERSION), from the repository root:
#   bash docs/results/2026-12-03f-h200-triton39/spill_by_version.sh 3.6.0 3.7.0 3.8.0 3.9.0
# BKS (K steps, default "32") and VARIANTS (default "tma"; "tma_store": the output by TMA store)
# widen the set; TRITON_PY names a Python whose Triton is the one version given, instead of an
# environment made for it.
set -euo pipefail
key='matmul|fp32|ieee|rowrow|8192x8192x8192'
for v in "$@"; do
  py=${TRITON_PY:-/tmp/tenv-$v/bin/python}
  [ -x "$py" ] || GEMMWATCH_PYTHON=${GEMMWATCH_PYTHON:-python3} bash ci/make_triton_env.sh "$v" "/tmp/tenv-$v" > /dev/null
  for variant in ${VARIANTS:-tma}; do
    for bk in ${BKS:-32}; do
      for cfg in "128 128 4" "256 128 8" "128 256 8"; do
        set -- $cfg
        lib=$(mktemp --suffix=.json)
        python3 - "$lib" "$v" "$key" "$variant" "$bk" "$1" "$2" "$3" <<'PY'
import json, sys
path, version, key, variant, bk, bm, bn, warps = sys.argv[1:]
config = dict(block_m=int(bm), block_n=int(bn), block_k=int(bk), num_stages=4, num_warps=int(warps), group_m=8,
              split_k=1, variant=variant)
entry = {"cell": "fp32-ieee 8192x8192x8192", "config": config, "tried": {}, "failed": {}}
json.dump({"target": "h200", "triton": version, "meta": {}, "entries": {key: entry}}, open(path, "w"))
PY
        echo "triton $v $("$py" -m ci.cli resources --target h200 --library "$lib" 2>/dev/null | tail -1)"
        rm -f "$lib"
      done
    done
  done
done
