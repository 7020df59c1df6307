"""The K-major copy of a row-major fp32 B (kernels.matmul's `_k_major`, what a kmajor_b config
launches before its GEMM) against torch's transposing copy, on the GPU: microseconds per copy
(median of 50, CUDA events, after a warm-up) and the bytes moved (read + write) per second.

    python3 docs/results/2026-12-04-h200-kmajor/copy_timing.py
"""

import statistics

import torch

from kernels.matmul import _k_major


def timed(fn, reps=50):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


print(f"{'K x N':<12} {'_k_major us':>12} {'GB/s':>7} {'torch .T.contiguous() us':>25} {'GB/s':>7}")
for n in (1024, 2048, 4096, 8192):
    b = torch.randn(n, n, device="cuda")
    ours = timed(lambda b=b: _k_major(b))
    theirs = timed(lambda b=b: b.T.contiguous())
    moved = 2 * b.numel() * b.element_size()
    print(f"{n}x{n:<7} {ours:>12.2f} {moved / ours / 1e3:>7.0f} {theirs:>25.2f} {moved / theirs / 1e3:>7.0f}")
    assert torch.equal(_k_major(b), b)
