"""Where does a cell's time go? Nsight Compute's counters of the Triton and native sides of cells.

Evidence tool for a cell below the native library (docs/BENCHMARKS.md asks for the reason found).
Each side of each cell runs in a process of its own under Nsight Compute: the project's kernel with
the library's config, or with each config named, and the native library. The side is compiled and
warmed up first; then only its `--launches` calls between cudaProfilerStart and cudaProfilerStop
are profiled (`ncu --profile-from-start off`), with the clocks left as they are (`--clock-control
none`) and ncu's own cache flush before each kernel (cold L2, as the suites time them):

    python3 -m ci.ncu_probe --out DIR --cells "fp8_e4m3 128x6144x4096" \\
        --configs BM128-BN64-BK128-w8-s8-g8-gluon-wg BM128-BN128-BK128-w8-s5-g8-gluon-wg-sk2
    python3 -m ci.ncu_probe --out DIR --cells "fp8_e4m3 128x6144x4096" --runners-up 2 [--dry-run]

(`--runners-up N`: the config the tuned-config library runs for the cell and the N fastest others
its tune timed on it, each named; `--dry-run` prints what would be profiled.)

DIR/<cell>--<side>.ncu-rep is ncu's report (open it in Nsight Compute), DIR/<cell>--<side>.csv its
details page; a table of each kernel's headline figures is printed (duration, SM and memory
throughput as % of peak, DRAM and L2 throughput, L2 hit rate, achieved occupancy, registers,
warp cycles per issued instruction, the megabytes read at L2 and from DRAM, launch geometry).
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Nsight Compute sections (their identifiers, `ncu --list-sections`): throughput against the peaks,
# the memory hierarchy, the issue slots, occupancy, the launch, where warps stall.
SECTIONS = (
    "SpeedOfLight",
    "MemoryWorkloadAnalysis",
    "ComputeWorkloadAnalysis",
    "Occupancy",
    "LaunchStats",
    "WarpStateStats",
    "SchedulerStats",
)
# Raw counters beside the sections (`--metrics`): the bytes read at the L2 slices, whatever asked for
# them (SMs' loads and TMA copies; a tile multicast to a cluster's CTAs once), and from DRAM. The
# fp8 128-row cells' times follow the operand bytes their tiles read (docs/BENCHMARKS.md, 2026-12-04
# fourth session): these say how many each side read.
METRICS = ("lts__t_sectors_op_read.sum", "dram__bytes_read.sum")
# The summary's columns: (heading, metric name on ncu's details page, the unit shown, its format).
SUMMARY = (
    ("us", "Duration", "us", ".1f"),
    ("SM %", "Compute (SM) Throughput", "%", ".1f"),
    ("mem %", "Memory Throughput", "%", ".1f"),
    ("DRAM %", "DRAM Throughput", "%", ".1f"),
    ("L2 %", "L2 Cache Throughput", "%", ".1f"),
    ("L2 hit %", "L2 Hit Rate", "%", ".1f"),
    ("occ %", "Achieved Occupancy", "%", ".1f"),
    ("regs", "Registers Per Thread", "", ".0f"),
    ("cyc/inst", "Warp Cycles Per Issued Instruction", "", ".1f"),
    ("L2 rd MB", "lts__t_sectors_op_read.sum", "MB", ".1f"),
    ("DRAM rd MB", "dram__bytes_read.sum", "MB", ".1f"),
)
# ncu's byte and sector units, in megabytes (a sector is 32 bytes)
_MB_UNITS = {
    "byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3,
    "sector": 32e-6, "Ksector": 32e-3, "Msector": 32.0, "Gsector": 32e3,
}  # fmt: skip
# ncu's time units, in microseconds
_TIME_UNITS = {
    "nsecond": 1e-3,
    "ns": 1e-3,
    "usecond": 1.0,
    "us": 1.0,
    "msecond": 1e3,
    "ms": 1e3,
    "second": 1e6,
    "s": 1e6,
}
_DETAILS_COLUMNS = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


class ProbeError(ValueError):
    """Bad input (a cell, a config, no ncu, an unreadable report); the message says which."""


def side_name(cell: str, side: str) -> str:
    """A file name for one side of one cell: 'fp8_e4m3-128x6144x4096--native'."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", cell.strip()) + "--" + re.sub(r"[^A-Za-z0-9_.-]+", "-", side)


def _number(text: str) -> float | None:
    text = (text or "").strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def read_details(path: Path) -> list[dict]:
    """ncu's details page as CSV (`ncu --import R --csv --page details`): one dict per profiled
    kernel, in launch order: {"id", "kernel", "block", "grid", "metrics": {name: [(value, unit), ...]}}."""
    text = path.read_text(errors="replace")
    # (ncu may print its own lines, "==PROF==" notices, before the table)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ProbeError(f'{path}: no ncu details table (a header row starting with "ID") in it')
    rows = list(csv.DictReader(lines[start:]))
    missing = [c for c in _DETAILS_COLUMNS if rows and c not in rows[0]]
    if missing:
        raise ProbeError(f"{path}: ncu details table without the columns {', '.join(missing)}")
    kernels: dict[str, dict] = {}
    for row in rows:
        kernel = kernels.setdefault(row["ID"], {
            "id": row["ID"], "kernel": row["Kernel Name"], "block": row.get("Block Size", ""),
            "grid": row.get("Grid Size", ""), "metrics": {},
        })  # fmt: skip
        # (a name may come in two sections, e.g. "Memory Throughput" as % and as bytes/s: both kept)
        kernel["metrics"].setdefault(row["Metric Name"], []).append((_number(row["Metric Value"]), row["Metric Unit"]))
    return sorted(kernels.values(), key=lambda k: int(k["id"]) if k["id"].isdigit() else 0)


def _value(kernel: dict, name: str, unit: str) -> float | None:
    for value, their_unit in kernel["metrics"].get(name, []):
        if value is None:
            continue
        if unit == "us":
            if their_unit in _TIME_UNITS:
                return value * _TIME_UNITS[their_unit]
        elif unit == "%":
            if their_unit == "%":
                return value
        elif unit == "MB":
            if their_unit in _MB_UNITS:
                return value * _MB_UNITS[their_unit]
        else:
            return value
    return None


def short_kernel_name(name: str, width: int = 64) -> str:
    """A kernel's name without its C++ signature and return type (`void`, or the SFINAE wrapper
    `std::enable_if<...>::type` of cuBLAS's GEMV kernels, whose parenthesis is not the signature's),
    cut at `width`."""
    name = name.removeprefix("void ")
    if name.startswith("std::enable_if") and ">::type " in name:
        name = name.split(">::type ", 1)[1]
    name = name.split("(", 1)[0].strip()
    return name if len(name) <= width else name[: width - 3] + "..."


def summary(sides: dict[str, list[dict]]) -> str:
    """A markdown table: a row per profiled kernel of each side, SUMMARY's columns."""
    head = ["side", "kernel", *(h for h, _, _, _ in SUMMARY), "grid x block"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for side, kernels in sides.items():
        if not kernels:
            out.append(f"| {side} | (no kernel profiled) |" + " |" * (len(head) - 2))
        for kernel in kernels:
            values = []
            for _, name, unit, fmt in SUMMARY:
                v = _value(kernel, name, unit)
                values.append("-" if v is None else format(v, fmt))
            values.append(f"{kernel['grid']} x {kernel['block']}".strip(" x") or "-")
            out.append(f"| {side} | {short_kernel_name(kernel['kernel'])} | " + " | ".join(values) + " |")
    return "\n".join(out)


def tuned_sides(path: Path, cell_name: str, runners_up: int) -> list[tuple[str, float | None]]:
    """[(config name, the tune's time in ms)]: the config the library at `path` runs for the cell
    (the cell's own where the tune found one faster, else its bucket's) and the `runners_up`
    fastest others its tune timed on that cell, fastest first."""
    import json

    from targets.library import Library

    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ProbeError(f"tuned-config library {path}: {err}") from None
    library = Library(data.get("target", ""), data.get("triton", ""), entries=data.get("entries", {}))
    for key, entry in library.entries.items():
        cells = entry.get("cells") or {}
        if cell_name in cells:
            tried = cells[cell_name].get("tried") or {}
        elif entry.get("cell") == cell_name:
            tried = entry.get("tried") or {}
        else:
            continue
        shape = tuple(int(x) for x in cell_name.split()[1].split("x"))
        runs = str(library.config_for(key, shape))
        others = [c for c in sorted(tried, key=tried.get) if c != runs][:runners_up]
        return [(runs, tried.get(runs)), *((c, tried[c]) for c in others)]
    raise ProbeError(f"no entry of {path} was tuned on the cell {cell_name!r}")


def child(cell_name: str, side: str, config: str | None, launches: int) -> int:
    """Run one side of one cell: warm-up, then `launches` calls between cudaProfilerStart/Stop."""
    import torch

    from benchmarks.cells import Prepared
    from benchmarks.matrix import parse_cell
    from targets.configs import config_from_name

    if not torch.cuda.is_available():
        print("ncu_probe: the profiled side needs a CUDA GPU", file=sys.stderr)
        return 2
    _, cell = parse_cell(cell_name)
    prep = Prepared(cell, "cuda")
    if side == "native":
        if (why := prep.native_supported()) is not None:
            print(f"ncu_probe: {cell_name}: no native side: {why}", file=sys.stderr)
            return 2
        call = prep.native
    else:
        cfg = config_from_name(config) if config else None
        call = (lambda: prep.triton(config=cfg)) if cfg else prep.triton
    for _ in range(3):  # compile, autotune or read the library, warm up
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(launches):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


def profile(ncu: str, out: Path, cell: str, side: str, config: str | None, launches: int, timeout: float) -> Path:
    """One side of one cell under ncu; its details page as CSV (the report beside it)."""
    name = side_name(cell, side)
    report = out / f"{name}.ncu-rep"
    run = [ncu, "--profile-from-start", "off", "--clock-control", "none", "--export", str(report.with_suffix(""))]
    for section in SECTIONS:
        run += ["--section", section]
    run += ["--metrics", ",".join(METRICS)]
    run += [sys.executable, "-m", "ci.ncu_probe", "--child", "--cell", cell, "--side", side,
            "--launches", str(launches)] + (["--config", config] if config else [])  # fmt: skip
    proc = subprocess.run(run, capture_output=True, text=True, timeout=timeout)
    (out / f"{name}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not report.exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
        raise ProbeError(f"{cell} {side}: ncu exited {proc.returncode}; see {out / (name + '.log')}:\n{tail}")
    details = subprocess.run([ncu, "--import", str(report), "--csv", "--page", "details"],
                             capture_output=True, text=True, timeout=timeout)  # fmt: skip
    path = out / f"{name}.csv"
    path.write_text(details.stdout)
    if details.returncode != 0:
        raise ProbeError(f"{cell} {side}: ncu --import exited {details.returncode}: {details.stderr.strip()[-500:]}")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.ncu_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", nargs="+", metavar="CELL", help='cells, e.g. "fp8_e4m3 128x6144x4096"')
    parser.add_argument("--configs", nargs="*", default=[], metavar="NAME",
                        help="configs to profile (names as the library writes them); default the library's")  # fmt: skip
    parser.add_argument("--runners-up", type=int, metavar="N",
                        help="the library's config for each cell and the N fastest others its tune timed there")  # fmt: skip
    parser.add_argument("--library", metavar="PATH",
                        help="the tuned-config library --runners-up reads (default: this GPU's, this Triton's)")  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the sides each cell would have profiled")
    parser.add_argument("--no-native", action="store_true", help="leave the native library out")
    parser.add_argument("--launches", type=int, default=1, help="calls of each side profiled (default 1)")
    parser.add_argument("--out", metavar="DIR", help="where the reports, CSV files and logs go")
    parser.add_argument("--ncu", default="ncu", help="the ncu executable (default: ncu on PATH)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per side (default 300)")
    parser.add_argument("--summarize", nargs="+", metavar="CSV", help="only print the table of these details CSVs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # (the profiled process)
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.cell, args.side, args.config, args.launches)
    try:
        if args.summarize:
            print(summary({Path(p).stem: read_details(Path(p)) for p in args.summarize}))
            return 0
        return _probe(args)
    except (ValueError, OSError) as err:  # (ProbeError; a config name config_from_name refused)
        print(f"ncu_probe: {err}", file=sys.stderr)
        return 2


def _probe(args) -> int:
    from benchmarks.matrix import MatrixError, parse_cell
    from targets.configs import config_from_name

    if not args.cells or not args.out:
        raise ProbeError("--cells and --out are needed (or --summarize CSV ...)")
    if args.launches < 1:
        raise ProbeError(f"--launches must be >= 1, got {args.launches}")
    for cell in args.cells:
        try:
            parse_cell(cell)
        except MatrixError as err:
            raise ProbeError(str(err)) from None
    for name in args.configs:
        config_from_name(name)  # (a ValueError naming it)
    if args.runners_up is not None and args.runners_up < 0:
        raise ProbeError(f"--runners-up must be >= 0, got {args.runners_up}")
    plans = {cell: _sides(args, cell) for cell in args.cells}
    if args.dry_run:
        for cell, sides in plans.items():
            print(f"{cell}: " + ", ".join(side for side, _ in sides))
        return 0
    out = Path(args.out)
    earlier = [out / f"{side_name(cell, s)}{ext}" for cell, sides in plans.items() for s, _ in sides
               for ext in (".ncu-rep", ".csv")]  # fmt: skip
    if kept := [str(p) for p in earlier if p.exists()]:
        raise ProbeError(
            f"{kept[0]} exists, from an earlier probe: give another --out ({len(kept)} of this probe's files are there)"
        )
    ncu = shutil.which(args.ncu)
    if ncu is None:
        raise ProbeError(f"no Nsight Compute: {args.ncu!r} is not an executable on PATH (--ncu names another)")
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for cell, sides in plans.items():
        tables: dict[str, list[dict]] = {}
        for side, config in sides:
            try:
                path = profile(ncu, out, cell, side, config, args.launches, args.timeout)
                tables[side] = read_details(path)
            except (ProbeError, subprocess.TimeoutExpired) as err:
                print(f"ncu_probe: {err}", file=sys.stderr)
                status = 1
        print(f"\n### {cell}\n\n{summary(tables)}", flush=True)
        native_us = _per_call_us(tables.get("native", []), args.launches)
        for side, kernels in tables.items():
            if side != "native" and (ours := _per_call_us(kernels, args.launches)):
                versus = f", {native_us / ours:.3f}x native ({native_us:.1f} us)" if native_us else ""
                print(f"{side}: {ours:.1f} us per call in {len(kernels) // args.launches} kernel(s){versus}")
    return status


def _sides(args, cell: str) -> list[tuple[str, str | None]]:
    """[(side, config name or None)] of one cell: the named configs, the library's and its runners-up
    (`--runners-up`), else the library's as dispatched; then the native library."""
    sides = [(name, name) for name in args.configs]
    if args.runners_up is not None:
        if args.library:
            path = Path(args.library)
        else:
            import triton

            from targets import detect
            from targets.library import library_path

            path = library_path(detect().name, triton.__version__)
        for name, ms in tuned_sides(path, cell, args.runners_up):
            timed = f"{ms:.4f} ms in the tune" if ms else "not timed on it"
            print(f"{cell}: {name}: {timed}", flush=True)
            if name not in args.configs:
                sides.append((name, name))
    if not sides:
        sides = [("library", None)]
    if not args.no_native:
        sides.append(("native", None))
    return sides


def _per_call_us(kernels: list[dict], launches: int) -> float | None:
    """The kernels' summed duration per call of the side (ncu's replays: each kernel's own, cold L2)."""
    times = [_value(k, "Duration", "us") for k in kernels]
    return math.fsum(times) / launches if kernels and None not in times else None


if __name__ == "__main__":
    sys.exit(main())
