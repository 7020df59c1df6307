"""Narrow output tiles (`-nW`: W columns inside a wider ring and MMA) against the library's config and
the native library on the fp8 128-row cells; CUDA-graph replays (warm L2: a first look before a
tune, which times under the suite's protocol).

    git apply docs/results/2026-12-03b-h200-pad/narrow.patch    # the narrow tiles, taken out after this table
    python3 docs/results/2026-12-03b-h200-pad/narrow_timing.py  # from the repository root, on the GPU

Per cell: native time, then per config its time in us, speedup over native and relative error
against the float64 reference (tensorwise scales, precise accumulation: the matrix's fp8 cells).
"""

import os
import sys

import torch
from triton.testing import do_bench_cudagraph

sys.path.insert(0, os.getcwd())
import kernels  # (after the repository root joins the path)
from benchmarks.cells import reference_gemm, relative_error
from targets.configs import config_from_name

S = "BK128-w8-s8-g8-gluon-wg"
CELLS = {
    (128, 4608, 3584): [f"BM128-BN64-{S}", "BM64-BN128-BK128-w4-s8-g8-gluon-ws-n72", f"BM128-BN64-{S}-n40",
                        "BM128-BN128-BK128-w8-s6-g8-gluon-wg-n72"],
    (128, 6144, 4096): [f"BM128-BN64-{S}", "BM64-BN128-BK128-w4-s8-g8-gluon-ws-n96", f"BM128-BN64-{S}-n48"],
    (128, 3584, 3584): ["BM64-BN64-BK128-w4-s8-g8", "BM64-BN128-BK128-w4-s8-g8-gluon-ws-n72", f"BM128-BN64-{S}-n40"],
    (128, 10240, 8192): ["BM128-BN128-BK128-w8-s6-g8-gluon-wg", "BM128-BN128-BK128-w8-s6-g8-gluon-wg-n80",
                         "BM64-BN256-BK128-w4-s5-g8-gluon-ws-n160"],
}  # fmt: skip


def table(M: int, N: int, K: int, names: list[str]) -> None:
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
    s = torch.ones((), device="cuda")
    ref = reference_gemm(a, b, scale_a=s, scale_b=s)
    native = do_bench_cudagraph(lambda: torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16), rep=100) * 1e3
    print(f"fp8 {M}x{N}x{K}: native {native:.2f} us", flush=True)
    for name in names:
        cfg = config_from_name(name)
        try:
            err = relative_error(kernels.scaled_matmul(a, b, s, s, config=cfg), ref)
            us = do_bench_cudagraph(lambda cfg=cfg: kernels.scaled_matmul(a, b, s, s, config=cfg), rep=100) * 1e3
        except Exception as exc:  # noqa: BLE001 - a config that cannot run is a row of the table
            print(f"  {name:44s} FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            continue
        print(f"  {name:44s} {us:8.2f} us  x{native / us:.3f}  err {err:.2e}", flush=True)


for (M, N, K), names in CELLS.items():
    table(M, N, K, names)
