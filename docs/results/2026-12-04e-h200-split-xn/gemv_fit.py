"""One-row (M = 1) cells of a whole-matrix run: time against the bytes of B, fitted per side as
t = fixed + bytes / bandwidth (least squares over the cells up to --max-mb), and each cell's time
beside the fit. Offline, from an asv result file of `gemmwatch run`:

    python3 docs/results/2026-12-04e-h200-split-xn/gemv_fit.py \
        docs/results/2026-12-04e-h200-split-xn/call_3/ev-warm/run-warm.json.gz
"""

import argparse

from ci.table import cell_rows

BYTES = {"fp16": 2, "bf16": 2, "fp8_e4m3": 1}


def fit(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - slope * mx, slope  # (us, us per MB)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--max-mb", type=float, default=300.0)
    args = parser.parse_args()
    cells = []
    for name, row in cell_rows(args.run).items():
        parts = name.split()
        if len(parts) != 2 or parts[0] not in BYTES or not row["native_s"]:
            continue
        m, n, k = map(int, parts[1].split("x"))
        if m == 1:
            cells.append((name, n * k * BYTES[parts[0]] / 1e6, row["triton_s"] * 1e6, row["native_s"] * 1e6))
    cells.sort(key=lambda c: c[1])
    small = [c for c in cells if c[1] <= args.max_mb]
    for side, col in (("ours", 2), ("native", 3)):
        fixed, per_mb = fit([(c[1], c[col]) for c in small])
        print(
            f"{side:7s} t = {fixed:5.2f} us + bytes / {1 / per_mb:4.2f} TB/s  ({len(small)} cells <= {args.max_mb:g} MB)"
        )
    print(f"\n{'cell':28s} {'MB':>6s} {'ours us':>8s} {'native us':>9s} {'x native':>8s}")
    for name, mb, ours, native in cells:
        print(f"{name:28s} {mb:6.1f} {ours:8.2f} {native:9.2f} {native / ours:8.3f}")


if __name__ == "__main__":
    main()
