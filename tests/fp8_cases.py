"""Scaled fp8 problems for the GPU tests: e4m3/e5m2 operands as torch._scaled_mm wants them."""

import torch


def fp8_problem(shape, scaling, gen, fp8=torch.float8_e4m3fn):
    """(a, b, scale_a, scale_b, out) for `shape` (M, N, K): A row-major, B column-major (K-major),
    tensorwise or rowwise float32 scales, and a NaN-filled bf16 output that a kernel must overwrite."""
    M, N, K = shape
    a = torch.randn(M, K, generator=gen, device="cuda").to(fp8)
    b = torch.randn(N, K, generator=gen, device="cuda").to(fp8).t()
    if scaling == "tensorwise":
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(1.5, device="cuda")
    else:
        sa = torch.rand(M, 1, device="cuda", generator=gen) + 0.5
        sb = torch.rand(1, N, device="cuda", generator=gen) + 0.5
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    return a, b, sa, sb, out
