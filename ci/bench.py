"""`gemmwatch bench`: Triton vs native time, TFLOP/s and speedup for a small cell set.

A quick look outside asv; the numbers come from the same measurement code as
the asv suites (benchmarks/measure.py).
"""

from __future__ import annotations

import json
import sys

# The quick table. On a GPU: the reference cells of docs/BENCHMARKS.md; in the
# interpreter: tiny ones that finish in seconds.
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


def format_table(results, *, interpreter: bool) -> str:
    def ms(s):
        return "-" if s is None else f"{s * 1e3:.4f}"

    def num(x, fmt):
        return "-" if x is None or interpreter else format(x, fmt)

    header = ["cell", "triton ms", "native ms", "triton TFLOP/s", "native TFLOP/s", "speedup", "% peak"]
    header += ["rel err", "ok", "config"]
    body = []
    for key, r in results.items():
        native = r.median("native_s")
        ratio = r.median("ratio")
        body.append(
            [
                key,
                ms(r.median("triton_s")),
                ms(native) if native is not None else f"- ({r.native_note or r.error})",
                num(r.tflops, ".4g"),
                num(r.tflops / ratio if r.tflops and ratio else None, ".4g"),
                num(1.0 / ratio if ratio else None, ".3f"),
                num(r.pct_of_peak, ".1f"),
                "-" if r.rel_error is None else f"{r.rel_error:.1e}",
                "NO" if r.failed else "yes",
                r.config or "?",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(args) -> int:
    from ci.cli import use_interpreter_without_gpu

    use_interpreter_without_gpu()
    from benchmarks.cells import Cell
    from benchmarks.measure import measure_cells
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
    rounds = args.rounds or (3 if spec.is_interpreter else 30)
    measured = measure_cells([Cell(*c) for c in cells], rounds=rounds, label="bench")
    context = {k: v for k, v in measured["context"].items() if isinstance(v, (str, int, float))}
    print(", ".join(f"{k}={v}" for k, v in context.items() if k not in ("started_at", "seconds", "rounds")))
    if spec.is_interpreter:
        print(INTERPRETER_NOTE)
    print(
        "speedup = native time / Triton time (median of per-round ratios, interleaved rounds); "
        "rel err = |C - C_ref| / |C_ref| against float64"
    )
    print(format_table(measured["cells"], interpreter=spec.is_interpreter))
    if args.json:
        payload = {
            "context": measured["context"],
            "interpreter": spec.is_interpreter,
            "cells": {key: r.as_dict() for key, r in measured["cells"].items()},
        }
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=1, default=str)
    failed = [key for key, r in measured["cells"].items() if r.failed]
    if failed:
        print(f"gemmwatch bench: failed cells: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
