#!/usr/bin/env bash
# Next session (not yet run): Triton 3.9 on the H200. Two calls first copy the pack's parts onto the
# machine (carry .t39/p0, then .t39/p1: `bash docs/results/2026-12-04b-h200-cooldown/call_2.sh p0`,
# then `... p1`; the pack: `bash docs/results/2026-12-03d-clusters/pack_triton.sh 3.9.0 .t39 20`);
# this call carries .t39/p2, .t39/SHA256 and .whl. Under 3.9: the extra-column GPU tests (if they
# pass, list 3.9 in GLUON_EXTRA_N_TRITON and tune those buckets in the next call), then the
# fp32-tf32 cubes tuned over the K-major copy configs (`-kb`), which the 3.9 library lacks (0.445x
# there). The library is returned in $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03f-h200-triton39/unpack_t39.sh
source docs/results/2026-12-03g-h200-flush/box.sh
export PYTHONPATH=/tmp/t39:/tmp/site:$PWD
python3 -c "import triton; print('triton', triton.__version__)" | tee -a "$out/versions.txt"
python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "xn or extra" > "$out/tests-extra.txt" 2>&1
grep -E "passed|failed|FAILED|ERROR" "$out/tests-extra.txt" | grep -v leaked | tail -n 8
mkdir -p /tmp/tuned && cp targets/tuned/h200-triton3.9.0.json /tmp/tuned/
timeout 200 python3 -m ci.cli tune --shapes square --dtypes fp32-tf32 --match='-kb$' --top-k 24 \
  --dir /tmp/tuned --deadline 180 > "$out/tune-tf32.log" 2>&1
echo "tune tf32: exit $?"; grep -E "^\[" "$out/tune-tf32.log"
cp /tmp/tuned/h200-triton3.9.0.json "$out/"
