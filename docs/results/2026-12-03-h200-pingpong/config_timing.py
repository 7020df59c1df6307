"""Gluon configs against the native library, timed by CUDA-graph replays (warm L2): a first look
before a tune (which times under the suite's protocol: cold L2, interleaved, the same cooldowns).

    python3 config_timing.py th    # from the repository root, on the GPU: the `-th` table (call 1)
    python3 config_timing.py pp    # the `gluon_pp` table (call 3; needs pingpong.patch applied)

Prints per shape the native time, then per config its time in microseconds, its speedup over
native and its relative error against the native result.
"""

import os
import sys

import torch
from triton.testing import do_bench_cudagraph

sys.path.insert(0, os.getcwd())
import kernels  # (after the repository root joins the path)
from targets.configs import config_from_name

W8 = "BM128-BN256-BK128-w8-s3-g8-gluon-wg"
W16 = "BM128-BN256-BK64-w8-s3-g8-gluon-wg"
TABLES = {
    "th": [
        ("fp8", (4096, 3584, 3584), [W8, f"{W8}-th", f"{W8.replace('-wg', '-ws')}-th", f"{W8.replace('s3', 's4')}-th"]),
        ("fp8", (4096, 4608, 3584), [W8, f"{W8}-th", f"{W8.replace('s3', 's4')}-th"]),
        ("fp8", (4096, 3584, 18944), ["BM128-BN256-BK128-w8-s4-g8-gluon-wg-stream", f"{W8}-th", f"{W8.replace('s3', 's4')}-th"]),
        ("fp16", (4096, 3584, 3584), ["BM128-BN128-BK64-w8-s6-g8-gluon-wg", W16, f"{W16}-th", f"{W16.replace('-wg', '-ws')}-th"]),
        ("fp16", (4096, 4608, 3584), ["BM128-BN128-BK64-w8-s5-g8-gluon-ws", W16, f"{W16}-th", f"{W16.replace('-wg', '-ws')}-th"]),
        ("bf16", (4096, 4608, 3584), ["BM128-BN128-BK64-w8-s6-g8-gluon-ws", f"{W16}-th", f"{W16.replace('-wg', '-ws')}-th"]),
    ],
    "pp": [
        ("fp16", (3000, 5000, 1000), ["BM128-BN256-BK64-w8-s4-g8-tma", "BM128-BN128-BK64-w8-s4-g8-gluon-ws",
                                      "BM128-BN128-BK64-w8-s4-g8-gluon-wg", "BM128-BN128-BK64-w8-s4-g8-gluon-pp",
                                      "BM128-BN128-BK64-w8-s5-g8-gluon-pp", "BM64-BN256-BK64-w8-s4-g8-gluon-pp"]),
        ("fp16", (4096, 4096, 4096), [W16, "BM128-BN128-BK64-w8-s4-g8-gluon-pp", "BM128-BN128-BK64-w8-s5-g8-gluon-pp",
                                      "BM64-BN256-BK64-w8-s4-g8-gluon-pp"]),
        ("bf16", (4096, 6144, 4096), ["BM128-BN256-BK64-w8-s3-g8-gluon-ws", "BM128-BN128-BK64-w8-s5-g8-gluon-pp",
                                      "BM64-BN256-BK64-w8-s4-g8-gluon-pp"]),
        ("fp16", (8192, 8192, 8192), [W16, "BM128-BN128-BK64-w8-s5-g8-gluon-pp", "BM64-BN256-BK64-w8-s4-g8-gluon-pp"]),
        ("fp8", (4096, 4096, 4096), [W8, "BM64-BN256-BK128-w8-s3-g8-gluon-pp", "BM64-BN256-BK128-w8-s4-g8-gluon-pp"]),
        ("fp8", (8192, 8192, 8192), [W8, "BM64-BN256-BK128-w8-s4-g8-gluon-pp"]),
    ],
}  # fmt: skip


def operands(dtype: str, M: int, N: int, K: int):
    """(native call, call of a config) on random operands: fp8 tensorwise-scaled, B column-major."""
    torch.manual_seed(0)
    if dtype == "fp8":
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        s = torch.ones((), device="cuda")
        return (
            lambda: torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16),
            lambda cfg: kernels.scaled_matmul(a, b, s, s, config=cfg),
        )
    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
    a = torch.randn(M, K, device="cuda", dtype=dt)
    b = torch.randn(K, N, device="cuda", dtype=dt)
    return (lambda: a @ b), (lambda cfg: kernels.matmul(a, b, config=cfg))


for dtype, (M, N, K), names in TABLES[sys.argv[1]]:
    native, triton_call = operands(dtype, M, N, K)
    ref = native().float()
    native_us = do_bench_cudagraph(native, rep=200) * 1e3
    print(f"{dtype} {(M, N, K)} native {native_us:.2f} us", flush=True)
    for name in names:
        cfg = config_from_name(name)
        try:
            err = ((triton_call(cfg).float() - ref).norm() / ref.norm()).item()
            us = do_bench_cudagraph(lambda cfg=cfg, call=triton_call: call(cfg), rep=200) * 1e3
        except Exception as exc:  # noqa: BLE001 - a config that cannot run is a row of the table
            print(f"  {name:48s} FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            continue
        print(f"  {name:48s} {us:8.2f} us  x{native_us / us:.3f}  err {err:.2e}", flush=True)
