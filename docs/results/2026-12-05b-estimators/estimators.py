"""Would another statistic of a cell's rounds than their median agree better between processes?

From the raw rounds asv keeps (`--record-samples`) of the same-commit pairs of the default
protocol (2026-12-03) on record, each statistic's cross-process coefficient of variation per cell
(as `gemmwatch noise` computes it for the median), and the cells over the 0.5% goal (no GPU):

    python3 docs/results/2026-12-05b-estimators/estimators.py
"""

import math
import statistics

from ci.asv_results import load
from ci.noise import spread

R = "docs/results/"
PAIRS = [
    ("2026-12-03i-h200-arena/call_3/ev/run-cold", "2026-12-03i-h200-arena/call_3/ev/run-warm"),
    ("2026-12-03i-h200-arena/call_3/ev/run-warm", "2026-12-03i-h200-arena/call_4/ev/run-warm2"),
    ("2026-12-03i-h200-arena/call_5/ev-cold/run-cold", "2026-12-03i-h200-arena/call_5/ev-warm/run-warm"),
    ("2026-12-04-h200-kmajor/call_2/ev-cold/run-cold", "2026-12-04-h200-kmajor/call_2/ev-warm/run-warm"),
    ("2026-12-04-h200-kmajor/call_2/ev-warm/run-warm", "2026-12-04-h200-kmajor/call_3/ev-warm2/run-warm2"),
    ("2026-12-04-h200-kmajor/call_2/ev-cold/run-cold", "2026-12-04-h200-kmajor/call_3/ev-warm2/run-warm2"),
    ("2026-12-04d-h200-per-cell/call_6/ev-cold/run-cold", "2026-12-04d-h200-per-cell/call_6/ev-warm/run-warm"),
    ("2026-12-04e-h200-split-xn/call_3/ev-cold/run-cold", "2026-12-04e-h200-split-xn/call_3/ev-warm/run-warm"),
]
GOAL = 0.005


def quantile(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def trimmed(xs, share=0.2):
    xs = sorted(xs)
    cut = int(len(xs) * share)
    return statistics.fmean(xs[cut : len(xs) - cut])


STATISTICS = {
    "median (the protocol's)": statistics.median,
    "mean": statistics.fmean,
    "20% trimmed mean": trimmed,
    "25th percentile": lambda xs: quantile(xs, 0.25),
    "10th percentile": lambda xs: quantile(xs, 0.10),
    "minimum": min,
    "75th percentile": lambda xs: quantile(xs, 0.75),
}
METRICS = {"track_ratio": "ratio", "track_triton_time": "Triton time", "track_native_time": "native time"}


def main() -> None:
    over = {(m, s): [] for m in METRICS for s in STATISTICS}
    for a, b in PAIRS:
        runs = [load(R + a + ".json.gz"), load(R + b + ".json.gz")]
        for metric in METRICS:
            first, second = (run.metric(metric) for run in runs)
            cells = [c for c in first if c in second and first[c].samples and second[c].samples]
            for name, stat in STATISTICS.items():
                n = sum(spread([stat(first[c].samples), stat(second[c].samples)])[0] > GOAL for c in cells)
                over[metric, name].append(n)
    print(f"{len(PAIRS)} pairs of 181 cells; cells over {GOAL:.1%} CV in each pair (and in all)\n")
    print("| statistic of the rounds | " + " | ".join(METRICS.values()) + " |")
    print("|---|" + "---|" * len(METRICS))
    for name in STATISTICS:
        row = [f"{' '.join(map(str, over[m, name]))} ({sum(over[m, name])})" for m in METRICS]
        print(f"| {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
