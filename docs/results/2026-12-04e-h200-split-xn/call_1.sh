#!/usr/bin/env bash
# Call 1 (the box's Triton 3.6, carry .whl): the extra-column tiles split in K on the GPU, then,
# only if every extra-column test passes, their tune on the 128-row buckets:
#
#   OUT=$OUT bash docs/results/2026-12-04e-h200-split-xn/call_1.sh
#
# 1. `-m gpu tests/test_gluon.py -k "xn or extra"`: the split cases (a product check on three
#    shapes, two fp8 precision checks) beside the unsplit ones.
# 2. Where all pass: "3.6." listed in targets.configs.GLUON_EXTRA_N_SPLIT_TRITON in the box's copy
#    of the tree (committed after this call, only if it passed), and the 128-row buckets tuned over
#    the split configs, the library's configs timed beside them (tune.sh, MATCH).
set -uo pipefail
out=${OUT:-/tmp/out}
begin=$(date +%s)
source docs/results/2026-12-03g-h200-flush/box.sh
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gluon.py -k "xn or extra" -rfE > "$out/tests-extra.txt" 2>&1
echo "tests: exit $?"
grep -E "passed|failed|FAILED|ERROR" "$out/tests-extra.txt" | grep -v leaked | tail -n 12
if ! grep -qE "^[0-9]+ passed" <(grep -E "passed|failed" "$out/tests-extra.txt" | grep -v leaked | tail -n 1) \
   || grep -qE "failed|error" <(grep -E "passed|failed" "$out/tests-extra.txt" | grep -v leaked | tail -n 1); then
  echo "not all passed: no tune"; exit 0
fi
sed -i 's/^GLUON_EXTRA_N_SPLIT_TRITON: tuple\[str, ...\] = ()$/GLUON_EXTRA_N_SPLIT_TRITON: tuple[str, ...] = ("3.6.",)/' targets/configs.py
grep -n "^GLUON_EXTRA_N_SPLIT_TRITON" targets/configs.py
left=$((570 - ($(date +%s) - begin)))
MATCH='-sk[248](-xn[0-9]+)?$' SECONDS_LEFT=$left bash docs/results/2026-12-04d-h200-per-cell/tune.sh \
  "128x4608x3584 128x3584x3584" fp8_e4m3 fp16 bf16
