"""Per-cell speedups of two `gemmwatch table` outputs (the H200's warm run and the H100's), set side
by side: the geometric mean of their ratio, the cells that moved most, and which are below native on
one chip or both. Usage: python3 compare.py H200_TABLE H100_TABLE"""

import math
import re
import sys

ROW = re.compile(r"\| (\S+ [^|]+?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \|")


def read(path):
    return {m[1]: (float(m[2]), float(m[3]), float(m[4])) for line in open(path) if (m := ROW.match(line))}


a, b = read(sys.argv[1]), read(sys.argv[2])
common = [c for c in a if c in b and not c.startswith("fp32")]
ratios = [b[c][2] / a[c][2] for c in common]
print(
    f"{len(common)} cells; geomean of (H100 speedup / H200 speedup) {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}"
)
order = sorted(common, key=lambda c: b[c][2] / a[c][2])
print(f"{'cell':32s} {'H200':>6s} {'H100':>6s}  native TFLOP/s H200 / H100")
for c in order[:8] + order[-5:]:
    print(f"{c:32s} {a[c][2]:6.3f} {b[c][2]:6.3f}  {a[c][0]:5.0f} / {b[c][0]:5.0f}")
print(
    "below native on both:",
    sum(a[c][2] < 1 and b[c][2] < 1 for c in common),
    "on the H100 only:",
    sum(a[c][2] >= 1 > b[c][2] for c in common),
    "on the H200 only:",
    sum(a[c][2] < 1 <= b[c][2] for c in common),
)
