"""Host-side launch overhead of kernels.matmul vs torch.matmul, with pytest-benchmark.

The figure that matters is the GPU one (docs/BENCHMARKS.md):
    pytest tests/test_launch_overhead.py --benchmark-json=launch.json
measures the host time per call of a small GEMM whose GPU time is far below it,
so the launch path (validation, config lookup, Triton's launcher) is what is
timed. In the interpreter the same test runs the whole kernel on the CPU: it
checks the benchmark works, its numbers mean nothing.
"""

import pytest
import torch

import kernels


@pytest.mark.parametrize("impl", ["kernels.matmul", "torch.matmul"])
def test_launch_overhead(benchmark, impl, device):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(64, 64, generator=gen).half().to(device)
    b = torch.randn(64, 64, generator=gen).half().to(device)
    out = torch.empty(64, 64, dtype=torch.float16, device=device)
    call = (
        (lambda: kernels.matmul(a, b, out=out)) if impl == "kernels.matmul" else (lambda: torch.matmul(a, b, out=out))
    )
    call()  # compile and choose the config outside the timing
    if device == "cuda":
        torch.cuda.synchronize()
    benchmark.group = "host launch overhead, 64x64x64 fp16"
    benchmark.extra_info["device"] = device
    benchmark.extra_info["interpreter"] = device == "cpu"
    benchmark.pedantic(
        call, rounds=200 if device == "cuda" else 3, iterations=10 if device == "cuda" else 1, warmup_rounds=1
    )
    if device == "cuda":
        torch.cuda.synchronize()
    assert torch.isfinite(out.float()).all()
