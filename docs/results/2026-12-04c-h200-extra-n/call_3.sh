#!/usr/bin/env bash
# Call 3 (the box's Triton 3.6, carry .whl): call 2's fp16 tune ended in an illegal memory access
# in its first bucket (128x4608x3584 + 128x6144x4096). Every extra-column candidate of the LLM
# M = 128 cells (fp16, bf16; fp8 for the first bucket), each in a process of its own (8 at a
# time), checked against torch's product: which config faults.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh
here=docs/results/2026-12-04c-h200-extra-n
python3 "$here/xn_list.py" > "$out/cases.txt"
wc -l < "$out/cases.txt"
xargs -P 8 -L 1 timeout 120 python3 "$here/xn_probe.py" < "$out/cases.txt" > "$out/probe.txt" 2>&1
grep -c " OK " "$out/probe.txt"; grep -v " OK " "$out/probe.txt" | grep -E "^(fp|bf)" | head -n 60
