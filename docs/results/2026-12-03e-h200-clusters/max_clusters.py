"""How many clusters of two CTAs of the Gluon kernel the GPU holds at once (cuOccupancyMaxActiveClusters)
beside the grid the launcher gives them (one cluster per two SMs): a persistent grid larger than what
fits runs its last clusters in a second wave. On the GPU box, Triton 3.9 first on the path:

    python3 docs/results/2026-12-03e-h200-clusters/max_clusters.py
"""

import os
import sys

import torch
import triton

sys.path.insert(0, os.getcwd())
from kernels import gluon_hopper

CASES = [  # (dtype, M, N, K, kwargs): the configs timed on 2026-12-03 (fifth session)
    ("fp16", 4096, 4096, 4096, dict(block_m=128, block_n=128, block_k=64, stages=6, num_warps=8, cluster_n=2,
                                    split_warpgroups=True)),
    ("fp16", 4096, 4096, 4096, dict(block_m=128, block_n=256, block_k=64, stages=3, num_warps=8, cluster_m=2)),
    ("fp16", 1024, 1024, 1024, dict(block_m=64, block_n=128, block_k=128, stages=4, num_warps=4, cluster_m=2)),
    ("fp8", 128, 4096, 4096, dict(block_m=64, block_n=64, block_k=128, stages=8, num_warps=4, cluster_m=2, promote=1)),
    ("fp8", 8192, 8192, 8192, dict(block_m=128, block_n=128, block_k=128, stages=6, num_warps=8, cluster_n=2,
                                   split_warpgroups=True, promote=1)),
]  # fmt: skip

sms = torch.cuda.get_device_properties(0).multi_processor_count
utils = triton.runtime.driver.active.utils
print(f"{torch.cuda.get_device_name(0)}: {sms} SMs, triton {triton.__version__}")
print("| config | shape | shared KiB | max active clusters of 2 | grid (clusters) |")
print("|---|---|---|---|---|")
for dtype, M, N, K, kw in CASES:
    if dtype == "fp8":
        a = torch.zeros(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.zeros(N, K, device="cuda").to(torch.float8_e4m3fn).T
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        s = (torch.ones((), device="cuda"), torch.ones((), device="cuda"))
    else:
        a, b = (
            torch.zeros(M, K, device="cuda", dtype=torch.float16),
            torch.zeros(K, N, device="cuda", dtype=torch.float16),
        )
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        s = (None, None)
    k = gluon_hopper.gemm(a, b, c, *s, compile_only=True, **kw)
    k._init_handles()
    fits = utils.cuOccupancyMaxActiveClusters(k.function, k.metadata.shared, 2)
    print(f"| {kw} | {dtype} {M}x{N}x{K} | {k.metadata.shared / 1024:.0f} | {fits} | {sms // 2} |")
