"""PTX hashes of seven Gluon configs (every kernel form) compiled offline for sm_90, debug info left out:

    python3 docs/results/2026-12-03d-clusters/ptx_hash.py     # from the repository root, before and after a change

Same hashes before and after: the change left those kernels' code as it was (ptx-triton3.6.txt and
ptx-triton3.9.txt: the hashes of the tree before the clusters, with either Triton).
"""

import hashlib
import os
import sys

import torch
from triton.runtime import driver

sys.path.insert(0, os.getcwd())
from ci.resources import _offline_driver

driver.set_active(_offline_driver(90))
from kernels import gluon_hopper  # noqa: E402 (after the offline driver: it reads the target)

CASES = [
    ("fp16", 4096, 4096, 4096, dict(block_m=128, block_n=256, block_k=64, stages=4, num_warps=8)),
    ("fp16", 4096, 4096, 4096, dict(block_m=128, block_n=128, block_k=64, stages=5, num_warps=8, split_warpgroups=True)),
    ("fp8", 4096, 3584, 3584, dict(block_m=128, block_n=256, block_k=128, stages=3, num_warps=8, promote=2)),
    ("fp8", 128, 4096, 4096, dict(block_m=64, block_n=64, block_k=128, stages=8, num_warps=4, promote=1)),
    ("fp8", 128, 6144, 4096,
     dict(block_m=128, block_n=64, block_k=128, stages=8, num_warps=8, promote=1, split_warpgroups=True)),
    ("bf16", 128, 3584, 18944, dict(block_m=64, block_n=64, block_k=64, stages=8, num_warps=4, split_k=4)),
    ("fp8", 4096, 3584, 18944,
     dict(block_m=128, block_n=256, block_k=128, stages=3, num_warps=8, promote=2, stream_k=True)),
]  # fmt: skip


def code(kernel) -> str:
    """The PTX without its debug sections, line markers and labels."""
    ptx = kernel.asm["ptx"]
    ptx = ptx[: ptx.find(".section\t.debug")] if ".section\t.debug" in ptx else ptx
    keep = (
        line for line in ptx.splitlines() if not line.strip().startswith((".loc", ".file", "//")) and "$L__" not in line
    )
    return "\n".join(keep)


for dtype, M, N, K, kw in CASES:
    if dtype == "fp8":
        a = torch.empty(M, K, dtype=torch.float8_e4m3fn)
        b = torch.empty(N, K, dtype=torch.float8_e4m3fn).T
        c = torch.empty(M, N, dtype=torch.bfloat16)
        scale_a = scale_b = torch.ones(1)
    else:
        torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
        a, b, c = (
            torch.empty(M, K, dtype=torch_dtype),
            torch.empty(K, N, dtype=torch_dtype),
            torch.empty(M, N, dtype=torch_dtype),
        )
        scale_a = scale_b = None
    counters = torch.zeros(100000, dtype=torch.int32)
    compiled = gluon_hopper.gemm(a, b, c, scale_a, scale_b, programs=132, counters=counters, compile_only=True, **kw)
    kernels = compiled if isinstance(compiled, list) else [compiled]
    print(dtype, M, N, K, kw, hashlib.sha1("\n".join(map(code, kernels)).encode()).hexdigest()[:12])
