"""`gemmwatch bench`: Triton vs native time, TFLOP/s and speedup for a small cell set."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

# Cells of the quick table. On a GPU: the reference shapes of docs/BENCHMARKS.md;
# in the interpreter: tiny ones that finish in seconds.
GPU_CELLS = (
    ("fp16", 4096, 4096, 4096),
    ("fp16", 8192, 8192, 8192),
    ("fp16", 16, 4096, 4096),
    ("bf16", 4096, 4096, 4096),
    ("bf16", 8192, 8192, 8192),
    ("fp8_e4m3", 4096, 4096, 4096),
    ("fp8_e4m3", 8192, 8192, 8192),
    ("fp8_e4m3-fastacc", 4096, 4096, 4096),
    ("fp8_e4m3-fastacc", 8192, 8192, 8192),
    ("fp32-ieee", 4096, 4096, 4096),
)
INTERPRETER_CELLS = (
    ("fp16", 128, 128, 128),
    ("fp16", 16, 256, 256),
    ("bf16", 128, 128, 128),
    ("fp8_e4m3", 128, 128, 128),
    ("fp32-ieee", 64, 96, 80),
)
INTERPRETER_NOTE = (
    "NOTE: no GPU - kernels ran in Triton's CPU interpreter. These timings are NOT performance;\n"
    "      they only show that the pipeline works and the results are correct."
)


@dataclass
class BenchRow:
    cell: str
    dtype: str
    shape: tuple[int, int, int]
    triton_s: float
    native_s: float | None
    triton_tflops: float
    native_tflops: float | None
    speedup: float | None  # native time / Triton time (> 1: Triton faster)
    pct_of_peak: float | None
    rel_error: float
    tolerance: float
    config: str
    native_note: str | None = None

    @property
    def correct(self) -> bool:
        return self.rel_error <= self.tolerance


def run_bench(cells, *, rounds: int) -> list[BenchRow]:
    import torch

    from benchmarks.cells import TOLERANCE, Cell, Prepared
    from benchmarks.timing import measure, tflops
    from kernels import autotune
    from targets import detect

    spec = detect()
    device = "cuda" if torch.cuda.is_available() and not spec.is_interpreter else "cpu"
    rows = []
    for i, (dtype, M, N, K) in enumerate(cells, 1):
        cell = Cell(dtype, M, N, K)
        print(f"[{i}/{len(cells)}] {cell.name}", file=sys.stderr, flush=True)
        prep = Prepared(cell, device)
        result = prep.triton()
        selection = autotune.last()
        err = prep.relative_error(result)
        why_no_native = prep.native_supported()
        if why_no_native is None:
            timing = measure(prep.triton, prep.native, rounds=rounds)
            t_tri, t_nat = timing.median(0), timing.median(1)
            ratio = timing.ratio_median(0, 1)  # Triton / native, per round
        else:
            timing = measure(prep.triton, rounds=rounds)
            t_tri, t_nat, ratio = timing.median(0), None, None
        peak = spec.peak_tflops.get(_peak_name(dtype))
        tri_tflops = tflops(M, N, K, t_tri)
        rows.append(
            BenchRow(
                cell=cell.name,
                dtype=dtype,
                shape=(M, N, K),
                triton_s=t_tri,
                native_s=t_nat,
                triton_tflops=tri_tflops,
                native_tflops=tflops(M, N, K, t_nat) if t_nat else None,
                speedup=1.0 / ratio if ratio else None,
                pct_of_peak=100.0 * tri_tflops / peak if peak and not spec.is_interpreter else None,
                rel_error=err,
                tolerance=TOLERANCE[dtype],
                config=str(selection.config) if selection else "?",
                native_note=why_no_native,
            )
        )
    return rows


def _peak_name(dtype: str) -> str:
    if dtype.startswith("fp8"):
        return "fp8"
    return {"fp32-ieee": "fp32", "fp32-tf32": "tf32"}.get(dtype, dtype)


def format_table(rows: list[BenchRow], *, interpreter: bool) -> str:
    def ms(s):
        return "-" if s is None else f"{s * 1e3:.4f}"

    def num(x, fmt):
        return "-" if x is None else format(x, fmt)

    header = [
        "cell",
        "triton ms",
        "native ms",
        "triton TFLOP/s",
        "native TFLOP/s",
        "speedup",
        "% peak",
        "rel err",
        "ok",
        "config",
    ]
    body = [
        [
            r.cell,
            ms(r.triton_s),
            ms(r.native_s) if r.native_s is not None else f"- ({r.native_note})",
            num(r.triton_tflops, ".4g") if not interpreter else "-",
            num(r.native_tflops, ".4g") if not interpreter else "-",
            num(r.speedup, ".3f") if not interpreter else "-",
            num(r.pct_of_peak, ".1f"),
            f"{r.rel_error:.1e}",
            "yes" if r.correct else "NO",
            r.config,
        ]
        for r in rows
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(args) -> int:
    from benchmarks.context import device_description, software_versions
    from targets import detect

    spec = detect()
    cells = INTERPRETER_CELLS if spec.is_interpreter else GPU_CELLS
    if args.dtypes:
        known = sorted({c[0] for c in cells})
        cells = tuple(c for c in cells if c[0] in args.dtypes)
        if not cells:
            print(
                f"gemmwatch bench: no cell has dtype in {args.dtypes}; this target's cells have {', '.join(known)}",
                file=sys.stderr,
            )
            return 2
    rounds = args.rounds if args.rounds else (3 if spec.is_interpreter else 30)
    context = {**device_description(), **software_versions()}
    rows = run_bench(cells, rounds=rounds)
    print(", ".join(f"{k}={v}" for k, v in context.items()))
    if spec.is_interpreter:
        print(INTERPRETER_NOTE)
    print(
        "speedup = native time / Triton time (median of per-round ratios, interleaved rounds); "
        "rel err = |C - C_ref| / |C_ref| against float64"
    )
    print(format_table(rows, interpreter=spec.is_interpreter))
    if args.json:
        payload = {"context": context, "interpreter": spec.is_interpreter, "rows": [asdict(r) for r in rows]}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
    wrong = [r.cell for r in rows if not r.correct]
    if wrong:
        print(f"gemmwatch bench: results over tolerance: {', '.join(wrong)}", file=sys.stderr)
        return 1
    return 0
