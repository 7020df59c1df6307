"""Do phase tiles read in 64-byte parts drop the zero K step? (2026-12-07, fifth session)

A `phase_a` tile starts its K loop as many elements early as its rows start past a boundary. On
whole 128-byte lines (the first version) fp16 rows 2000 bytes apart start 0-112 bytes into a line,
so the loop starts up to 56 elements early, and on K = 1000 in 64-wide steps half the phases take
a 17th step, of zeros: the slowest tile sets a one-wave cell's time. Read in 64-byte parts (two
loads and two MMAs of 32 per 64-wide step), each part of a row needs only to start on a multiple
of 64 bytes to lie in one line: the rows start 0-48 bytes into a half line, the loop at most 24
elements early, and 1000 + 24 = 1024 = 16 steps for every phase.

This probe times, through the project's launcher (`kernels.matmul(a, b, config=...)`), the phase
configs on whole lines (`-phase`: the first version's offsets; a 64-wide fp16 step in one part)
and on half lines (`-phase-hl`: 64-byte parts; where they fit, the odd parts into a second
accumulator, and once all into one), beside the same tiles without phases, the library's entry
and cuBLAS, on fp16 1000^3 and 3000x5000x1000. Every side is checked against a float64 reference
first. (At ad685f1, where this ran, the call beside it then tuned both kinds of phase configs;
the half lines lost, and the tune is offered whole lines only since.)

    PYTHONPATH=. python3 docs/results/2026-12-07e-parts/parts_probe.py [--rounds 20] [--dtypes fp16 bf16]
"""

from __future__ import annotations

import argparse
import importlib
import os

import torch

if not torch.cuda.is_available():  # the interpreter checks the sides (set before importing triton)
    os.environ.setdefault("TRITON_INTERPRET", "1")

from benchmarks.timing import checked_sides, probe_table
from targets import configs
from targets.configs import config_from_name

launcher = importlib.import_module("kernels.matmul")  # (the module: kernels.matmul is its function)

# shape: (config, whether its parts' MMAs go into one accumulator)
SIDES = {
    "1000x1000x1000": [
        ("BM128-BN64-BK64-w4-s4-g8-tma", False),
        ("BM128-BN64-BK64-w4-s4-g8-tma-phase", False),
        ("BM128-BN64-BK64-w4-s4-g8-tma-phase-hl", False),
        ("BM128-BN64-BK64-w4-s4-g8-tma-phase-hl", True),
        ("BM128-BN64-BK32-w4-s4-g8-tma-phase", False),
        ("BM128-BN64-BK32-w4-s4-g8-tma-phase-hl", False),
        ("BM128-BN64-BK128-w4-s3-g8-tma-phase-hl", False),
        ("BM64-BN128-BK64-w4-s4-g8-tma-phase-hl", False),
    ],
    "3000x5000x1000": [
        ("BM128-BN256-BK64-w8-s4-g8-tma-padb", False),
        ("BM128-BN256-BK64-w8-s4-g8-tma-padb-phase", False),
        ("BM128-BN256-BK64-w8-s4-g8-tma-padb-phase-hl", False),
        ("BM128-BN256-BK64-w8-s4-g8-tma-phase", False),
        ("BM128-BN256-BK64-w8-s4-g8-tma-phase-hl", False),
    ],
}
SMALL = {"1000x1000x1000": (64, 40, 1000), "3000x5000x1000": (64, 264, 1000)}  # (the interpreter's)


def call(a, b, c, cfg, one_accumulator):
    """c = a @ b on `cfg`; with `one_accumulator`, its parts' MMAs all into one accumulator."""
    split_max = configs.PHASE_SPLIT_ACC_MAX_PER_THREAD
    if one_accumulator:  # (read when the launch is made: a graph captures it)
        configs.PHASE_SPLIT_ACC_MAX_PER_THREAD = 0
    try:
        return launcher.matmul(a, b, out=c, config=cfg)
    finally:
        configs.PHASE_SPLIT_ACC_MAX_PER_THREAD = split_max


def sides(dtype: torch.dtype, shape: tuple[int, int, int], rows: list, device: str):
    M, N, K = shape
    torch.manual_seed(0)
    a, b = torch.randn(M, K, device=device, dtype=dtype), torch.randn(K, N, device=device, dtype=dtype)
    ref = a.double() @ b.double()
    out = []
    if device == "cuda":
        c0, c1 = torch.empty_like(ref, dtype=dtype), torch.empty_like(ref, dtype=dtype)
        out += [
            ("cuBLAS", lambda: torch.mm(a, b, out=c0), c0),
            ("library's entry", lambda: launcher.matmul(a, b, out=c1), c1),
        ]
    for name, one in rows:
        cfg, c = config_from_name(name), torch.empty_like(ref, dtype=dtype)
        label = f"{name} (one acc)" if one else name
        out.append((label, lambda c=c, cfg=cfg, one=one: call(a, b, c, cfg, one), c))
    return checked_sides(out, ref)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--dtypes", nargs="+", default=["fp16"])
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    if device == "cuda":
        import triton

        print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    for shape_name, rows in SIDES.items():
        shape = tuple(int(x) for x in shape_name.split("x")) if device == "cuda" else SMALL[shape_name]
        for dname in args.dtypes:
            print(f"\n{dname} {shape_name}" + ("" if device == "cuda" else f" (as {shape}, interpreter)"))
            named = sides(dtypes[dname], shape, rows, device)
            print("\n".join(probe_table(named, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
