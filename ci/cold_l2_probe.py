"""Cross-process noise of timing-protocol choices: the cold-L2 method (flush-and-subtract
vs rotating copies) and the cooldown between rounds.

Evidence tool for the timing protocol, run on a GPU box:

    for i in 1 2 3; do for mode in flush rotate; do
        python3 -m ci.cold_l2_probe run --mode $mode --out OUT/$mode-$i.json; done; done
    python3 -m ci.cold_l2_probe report OUT/*.json

(`--cooldown X` adds X times each round's duration of idle after it; `--shift-mb N` holds N MiB of
device memory first, so that the operands land on other physical memory: whether placement is
what moves a cell between processes (shift by a few 2 MiB pages, e.g. 2, 6, 34: a multiple of 4 GiB
keeps every address bit below 32); `--counter-offset N` starts the serial split-K's tile counters N
int32s further into their buffer, moving only them; `--streams S` issues each replay's calls on S
streams in turn (GEMMWATCH_STREAMS); `--cells` measures other cells. The native kernels each process
ran are recorded, and the report says where they differ.) Each `run` is
a separate process that measures the probe cells with the suites' code
(benchmarks.measure.measure_cells, GEMMWATCH_COLD_L2=MODE, GEMMWATCH_COOLDOWN=X)
and writes the per-cell medians and the SM clock before and after each cell;
`report` prints, per cell and setting, the coefficient of variation across
processes of the Triton/native ratio and of both times.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from collections import defaultdict

# Cells whose A/A noise was over the 0.5% goal with the flush (docs/BENCHMARKS.md), and two references.
CELLS = (
    ("fp16", 16, 4096, 4096),
    ("bf16", 1, 4096, 4096),
    ("bf16", 16, 4608, 3584),
    ("fp8_e4m3", 16, 6144, 4096),
    ("fp16", 1, 3584, 18944),
    ("bf16", 128, 3584, 18944),
    ("fp16", 1024, 1024, 1024),
    ("fp16", 4096, 4096, 4096),
    # Power-capped in full runs (SM clock 1980 -> 1575-1650 MHz): the cooldown's target.
    ("fp8_e4m3", 4096, 10240, 8192),
    ("fp8_e4m3", 4096, 57344, 8192),
    ("fp8_e4m3", 8192, 8192, 8192),
    ("bf16", 4096, 8192, 28672),
)


def offset_counters(offset: int) -> None:
    """Serial split-K's and stream-K's tile counters start `offset` int32s into their buffer from
    now on in this process: the counters' cache lines, and so the L2 slices their atomics go
    to, move while everything else stays where it was."""
    import importlib

    matmul = importlib.import_module("kernels.matmul")  # the module (`kernels.matmul` is also its function)
    kept = matmul._tile_counters

    def shifted(device, tiles):
        return kept(device, tiles + offset)[offset:]  # a view: zero, and left zero, as the whole

    matmul._tile_counters = shifted


def run(
    mode: str,
    out: str,
    rounds: int,
    cooldown: float = 0.0,
    shift_mb: int = 0,
    counter_offset: int = 0,
    cells: list | None = None,
    streams: int = 1,
) -> int:
    os.environ["GEMMWATCH_COLD_L2"] = mode
    os.environ["GEMMWATCH_STREAMS"] = str(streams)
    os.environ["GEMMWATCH_COOLDOWN"] = str(cooldown)
    os.environ["GEMMWATCH_NATIVE_KERNELS"] = "1"  # GPU only: which cuBLAS kernels each process ran
    import torch

    from benchmarks.cells import Cell
    from benchmarks.measure import measure_cells

    label = f"{mode}+cooldown{cooldown:g}" if cooldown else mode
    held = None
    if shift_mb:
        # Memory taken first, and held: the cells' operands land on other physical memory than in
        # a run without it (a fresh process on an idle GPU otherwise gets the same placement).
        label += f"+shift{shift_mb}MiB"
        held = torch.empty(shift_mb << 20, dtype=torch.uint8, device="cuda" if torch.cuda.is_available() else "cpu")
    if streams > 1:
        label += f"+{streams}streams"
    if counter_offset:
        label += f"+counters{counter_offset}"
        offset_counters(counter_offset)
    cells = cells or [Cell(d, m, n, k) for d, m, n, k in CELLS]
    measured = measure_cells(cells, rounds=rounds, label=f"probe-{label}")
    rows = {}
    for name, res in measured["cells"].items():
        if res.failed:
            rows[name] = {"error": res.error}
            continue
        rows[name] = {
            "ratio": res.median("ratio"),
            "triton_s": res.median("triton_s"),
            "native_s": res.median("native_s"),
            "method": res.method,
            "inner": res.inner,
            "native_kernels": res.native_kernels,
            "sm_clock_mhz": [(state or {}).get("sm_clock_mhz") for state in (res.state_before, res.state_after)],
        }
    with open(out, "w") as f:
        json.dump({"mode": label, "rounds": rounds, "cells": rows, "context": measured["context"]}, f, default=str)
    del held
    return 0


def report(files: list[str], pool_shifts: bool = False) -> int:
    """`pool_shifts`: processes that differ only by --shift-mb count as one setting, so its CV
    columns are the spread across placements (e.g. with and without --streams)."""
    by_mode: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for path in files:
        with open(path) as f:
            data = json.load(f)
        mode = re.sub(r"\+shift\d+MiB", "", data["mode"]) if pool_shifts else data["mode"]
        for cell, row in data["cells"].items():
            if "error" not in row:
                by_mode[mode][cell].append(row)
    print(
        f"{'cell':<26} {'method':<16} {'n':>2} {'ratio CV':>9} {'triton CV':>9} {'native CV':>9}  ratio median"
        "  SM MHz before-after (per run)"
    )
    cells = list(dict.fromkeys(c for rows in by_mode.values() for c in rows))
    for cell in cells:
        for mode in sorted(by_mode):
            rows = by_mode[mode].get(cell, [])
            if not rows:
                continue

            def cv(key, rows=rows):
                values = [r[key] for r in rows if r[key] is not None]
                if len(values) < 2:
                    return "  -"  # one process: no spread to tell
                return f"{100 * statistics.stdev(values) / statistics.fmean(values):.2f}%"

            ratio = statistics.median(r["ratio"] for r in rows)
            clocks = " ".join("-".join(str(c) for c in r.get("sm_clock_mhz") or ()) for r in rows)
            kernels = {tuple(r["native_kernels"]) for r in rows if r.get("native_kernels")}
            print(
                f"{cell:<26} {mode:<16} {len(rows):>2} {cv('ratio'):>9} {cv('triton_s'):>9} "
                f"{cv('native_s'):>9}  {ratio:.4f}        {clocks}"
                + (
                    f"  native kernels differ: {' | '.join(', '.join(k) for k in sorted(kernels))}"
                    if len(kernels) > 1
                    else ""
                )
            )
    modes = sorted(by_mode)
    if len(modes) > 1:
        # Between settings (e.g. with and without --shift-mb): each setting's median time against
        # the first setting's, so that one process per setting already answers "did it move?".
        first = modes[0]
        print(f"\nchange of the median against {first!r} (Triton time / native time / ratio):")
        for cell in cells:
            base = by_mode[first].get(cell)
            if not base:
                continue
            parts = []
            for mode in modes[1:]:
                rows = by_mode[mode].get(cell)
                if rows:
                    change = [
                        100 * (statistics.median(r[k] for r in rows) / statistics.median(r[k] for r in base) - 1)
                        for k in ("triton_s", "native_s", "ratio")
                    ]
                    parts.append(f"{mode}: {change[0]:+.2f}% / {change[1]:+.2f}% / {change[2]:+.2f}%")
            if parts:
                print(f"{cell:<26} " + "; ".join(parts))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.cold_l2_probe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--mode", choices=("flush", "rotate"), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rounds", type=int, default=30)
    r.add_argument("--cooldown", type=float, default=0.0, help="idle after each round, x its duration")
    r.add_argument("--shift-mb", type=int, default=0, metavar="MIB",
                   help="hold this much device memory first, so the operands land elsewhere in memory")  # fmt: skip
    r.add_argument("--counter-offset", type=int, default=0, metavar="INTS",
                   help="start the serial split-K tile counters this many int32s into their buffer")  # fmt: skip
    r.add_argument("--cells", nargs="+", metavar="CELL",
                   help="measure these cells ('fp16 16x4096x4096') instead of the probe's set")  # fmt: skip
    r.add_argument("--streams", type=int, default=1, metavar="S",
                   help="issue each replay's calls in turn on S CUDA streams (GEMMWATCH_STREAMS)")  # fmt: skip
    p = sub.add_parser("report")
    p.add_argument("files", nargs="+")
    p.add_argument("--pool-shifts", action="store_true",
                   help="count processes that differ only by --shift-mb as one setting (CV across placements)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "report":
        return report(args.files, args.pool_shifts)
    if args.shift_mb < 0:
        parser.error(f"--shift-mb must be >= 0 (MiB of device memory to hold), got {args.shift_mb}")
    if args.counter_offset < 0:
        parser.error(f"--counter-offset must be >= 0 (int32s into the counter buffer), got {args.counter_offset}")
    from benchmarks.timing import MAX_STREAMS

    if not 1 <= args.streams <= MAX_STREAMS:
        parser.error(f"--streams must be in 1..{MAX_STREAMS}, got {args.streams}")
    cells = None
    if args.cells:
        from benchmarks.matrix import MatrixError, parse_cell

        try:
            cells = [parse_cell(text)[1] for text in args.cells]
        except MatrixError as err:
            parser.error(f"--cells: {err}")
    return run(args.mode, args.out, args.rounds, args.cooldown, args.shift_mb, args.counter_offset, cells, args.streams)


if __name__ == "__main__":
    sys.exit(main())
