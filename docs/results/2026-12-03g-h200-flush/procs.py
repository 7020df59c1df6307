"""Between-process spread of the cells' first and second measurements, per GEMMWATCH_CAPTURES:
reads the state_probe JSON files named procs-C<captures>-<i>.json in the given directory."""

import glob
import json
import os
import statistics
import sys

runs: dict[str, list[list[dict]]] = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "procs-C*-*.json"))):
    captures = os.path.basename(path).split("-")[1]
    runs.setdefault(captures, []).append(json.load(open(path))["rows"])


def cv(xs):
    return 100 * statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else float("nan")


cells = list(dict.fromkeys(r["cell"] for rows in next(iter(runs.values())) for r in rows))
print(f"{'cell':<26}" + "".join(f" {c + ' rep' + str(k) + ' Tri/nat/ratio CV':>34}" for c in runs for k in (0, 1)))
for cell in cells:
    line = f"{cell:<26}"
    for procs in runs.values():
        for k in (0, 1):
            mine = [r for rows in procs for r in rows if r["cell"] == cell and r["rep"] == k]
            line += f" {cv([r['triton_s'] for r in mine]):>10.2f}% {cv([r['native_s'] for r in mine]):>9.2f}% {cv([r['ratio'] for r in mine]):>9.2f}%"
    print(line)
for c, procs in runs.items():
    for k in (0, 1):
        worst = []
        for cell in cells:
            mine = [r for rows in procs for r in rows if r["cell"] == cell and r["rep"] == k]
            worst.append(max(cv([r["triton_s"] for r in mine]), cv([r["ratio"] for r in mine])))
        print(
            f"{c} rep{k}: {len(procs)} processes, cells over 0.5% (Triton or ratio CV): "
            f"{sum(w > 0.5 for w in worst)} of {len(cells)}, mean {statistics.fmean(worst):.3f}%"
        )
