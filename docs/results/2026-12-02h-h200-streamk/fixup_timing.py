"""What a split tile's fix-up costs: a few Gluon configs timed by CUDA-graph replays (warm L2).

    MOD=path/to/gluon_hopper.py python3 fixup_timing.py    # from the repository root, on the GPU

MOD: a copy of kernels/gluon_hopper.py (a commit's, or one patched as fixup-fake.patch, whose
FAKE=1 skips the partials' stores, loads and wait, FAKE=2 the wait alone). Prints one line per
config: module, dtype, shape, config, microseconds.
"""

import importlib.util
import os
import sys

import torch
from triton.testing import do_bench_cudagraph

sys.path.insert(0, os.getcwd())
from targets.configs import config_from_name  # (after the repository root joins the path)

spec = importlib.util.spec_from_file_location("gluon_exp", os.environ["MOD"])
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)

M128 = ("fp8", 128, 6144, 4096)
CASES = [
    (*M128, "BM128-BN64-BK128-w8-s8-g8-gluon-wg"),
    (*M128, "BM128-BN64-BK128-w8-s8-g8-gluon-wg-stream"),
    (*M128, "BM128-BN128-BK128-w8-s5-g8-gluon-wg"),
    (*M128, "BM128-BN128-BK128-w8-s5-g8-gluon-wg-stream"),
    (*M128, "BM128-BN128-BK128-w8-s5-g8-gluon-wg-sk2"),
    ("fp8", 4096, 3584, 18944, "BM128-BN256-BK128-w8-s3-g8-gluon-wg-sk2"),
    ("fp8", 4096, 3584, 18944, "BM128-BN256-BK128-w8-s4-g8-gluon-wg-stream"),
    ("fp16", 4096, 3584, 3584, "BM128-BN256-BK64-w8-s3-g8-gluon-wg-sk2"),
    ("fp8", 4096, 3584, 3584, "BM128-BN256-BK128-w8-s3-g8-gluon-wg"),
    ("fp8", 4096, 3584, 3584, "BM128-BN256-BK128-w8-s3-g8-gluon-wg-stream"),
]

for dtype, M, N, K, name in CASES:
    cfg = config_from_name(name)
    torch.manual_seed(0)
    if dtype == "fp8":
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        sa, sb = torch.ones((), device="cuda"), torch.ones((), device="cuda")
        promote = g.promotion(cfg.block_m, cfg.block_n, cfg.num_warps, True)
    else:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        sa = sb = None
        promote = g.PROMOTE_NONE
    counters = torch.zeros(g.counters_needed(M, N, cfg.block_m, cfg.block_n), dtype=torch.int32, device="cuda")

    def call(a=a, b=b, c=c, sa=sa, sb=sb, cfg=cfg, promote=promote, counters=counters):
        return g.gemm(
            a, b, c, sa, sb, block_m=cfg.block_m, block_n=cfg.block_n, block_k=cfg.block_k, stages=cfg.num_stages,
            num_warps=cfg.num_warps, promote=promote, split_warpgroups=cfg.variant == "gluon_wg",
            split_k=cfg.split_k, stream_k=cfg.stream_k, counters=counters,
        )  # fmt: skip

    call()
    torch.cuda.synchronize()
    us = do_bench_cudagraph(call, rep=300) * 1000
    print(os.path.basename(os.environ["MOD"])[:-3], dtype, f"{M}x{N}x{K}", name, round(us, 2), flush=True)
