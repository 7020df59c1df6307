"""`gemmwatch noise`: run-to-run variation of the same commit (A/A), per cell.

Given two or more asv result files of one commit measured in separate
processes, reports for every cell the coefficient of variation of the per-run
medians and the largest relative difference between runs, for the
Triton/native ratio and the absolute Triton and native times.
"""

from __future__ import annotations

import statistics
import sys

from ci.asv_results import ResultsError, load

METRICS = (("track_ratio", "ratio"), ("track_triton_time", "triton"), ("track_native_time", "native"))


def spread(values: list[float]) -> tuple[float, float]:
    """(coefficient of variation, (max - min) / mean), both as fractions."""
    mean = statistics.fmean(values)
    if mean == 0:
        return 0.0, 0.0
    return statistics.stdev(values) / mean, (max(values) - min(values)) / mean


def noise_table(files) -> list[dict]:
    runs = [load(path) for path in files]
    rows: dict[str, dict] = {}
    for metric, label in METRICS:
        per_run = [run.metric(metric) for run in runs]
        cells = set.intersection(*(set(m) for m in per_run)) if per_run else set()
        for cell in sorted(cells):
            entries = [m[cell] for m in per_run]
            if any(e.failed or e.skipped for e in entries):
                continue
            cv, rng = spread([e.value for e in entries])
            rows.setdefault(cell, {"cell": cell})
            rows[cell][f"{label}_cv"] = cv
            rows[cell][f"{label}_range"] = rng
    return list(rows.values())


def main(args) -> int:
    if len(args.files) < 2:
        print("gemmwatch noise: give at least two result files of the same commit", file=sys.stderr)
        return 2
    try:
        rows = noise_table(args.files)
    except ResultsError as err:
        print(f"gemmwatch noise: {err}", file=sys.stderr)
        return 2
    if not rows:
        print("gemmwatch noise: the files share no measured cell", file=sys.stderr)
        return 2
    header = f"{'cell':<42} {'ratio CV':>9} {'ratio max-diff':>14} {'triton CV':>9} {'native CV':>9}"
    print(header)
    print("-" * len(header))

    def pct(row, key):
        return f"{100 * row[key]:.2f}%" if key in row else "-"

    for row in sorted(rows, key=lambda r: -r.get("ratio_cv", r.get("triton_cv", 0))):
        print(
            f"{row['cell']:<42} {pct(row, 'ratio_cv'):>9} {pct(row, 'ratio_range'):>14} "
            f"{pct(row, 'triton_cv'):>9} {pct(row, 'native_cv'):>9}"
        )
    worst = max(max(r.get("ratio_cv", 0), r.get("triton_cv", 0), r.get("native_cv", 0)) for r in rows)
    over = [r["cell"] for r in rows if max(r.get("ratio_cv", 0), r.get("triton_cv", 0)) > args.target]
    print(
        f"\n{len(rows)} cells over {len(args.files)} runs; worst CV {100 * worst:.2f}%; "
        f"{len(over)} cells above the {100 * args.target:.1f}% goal (ratio or Triton time)"
    )
    return 0
