"""The `pad` configs' aligned copies, old and new, and whole calls, on the odd cells whose rows are
not 16-byte multiples; CUDA-graph replays (warm L2: a first look, not the suite's protocol).

    python3 docs/results/2026-12-03b-h200-pad/pad_timing.py    # from the repository root, on the GPU

Old copy: the three torch operations `_aligned` ran per operand before (zero the row padding, zero
the K extension, copy the values); new: `kernels.matmul._aligned`'s one launch for both operands
(call 1 of the session timed an earlier form, one launch per operand: B and A apart).
"""

import os
import sys

import torch
from triton.testing import do_bench_cudagraph

sys.path.insert(0, os.getcwd())
import kernels  # (after the repository root joins the path)
from kernels.matmul import _aligned, _padded_k
from targets.configs import config_from_name


def old_aligned(t, k_dim):
    """`_aligned` as it was (torch.zero_ twice and copy_), for row-major operands."""
    K = t.shape[k_dim]
    shape = list(t.shape)
    shape[k_dim] = _padded_k(K)
    rows, cols = shape
    buffer = torch.empty((rows, -(-cols // 16) * 16), dtype=t.dtype, device=t.device)
    view = buffer[:, :cols]
    buffer[:, cols:].zero_()
    index = [slice(None), slice(None)]
    index[k_dim] = slice(K, None)
    view[tuple(index)].zero_()
    index[k_dim] = slice(0, K)
    view[tuple(index)].copy_(t)
    return view


CONFIGS = {
    (127, 4097, 1023): ["BM64-BN64-BK64-w4-s4-g8-pad", "BM64-BN64-BK64-w4-s4-g8-tma-pad",
                        "BM128-BN64-BK64-w4-s4-g8-tma-pad", "BM64-BN128-BK64-w4-s4-g8-gluon-ws-pad",
                        "BM128-BN64-BK64-w8-s4-g8-gluon-wg-pad"],
    (1, 1001, 4095): ["BM1-BN64-BK128-w4-s2-g8-sks16-fma", "BM1-BN64-BK128-w4-s2-g8-sks16-pad-fma",
                      "BM16-BN64-BK64-w8-s3-g8-sks16-swap", "BM16-BN64-BK64-w8-s3-g8-sks16-pad-swap"],
}  # fmt: skip


def table(dt, M: int, N: int, K: int, names: list[str]) -> None:
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dt)
    b = torch.randn(K, N, device="cuda", dtype=dt)
    new_a, new_b = _aligned(a, b)
    assert torch.equal(old_aligned(a, 1), new_a) and torch.equal(old_aligned(b, 0), new_b)
    ref = (a.double() @ b.double()).float()
    native = do_bench_cudagraph(lambda: a @ b, rep=200) * 1e3
    old = do_bench_cudagraph(lambda: (old_aligned(a, 1), old_aligned(b, 0)), rep=200) * 1e3
    new = do_bench_cudagraph(lambda: _aligned(a, b), rep=200) * 1e3
    print(f"{str(dt)[6:]} {M}x{N}x{K}: native {native:.2f} us; copies of A and B old {old:.2f} us, new {new:.2f} us",
          flush=True)  # fmt: skip
    for name in names:
        cfg = config_from_name(name)
        try:
            err = ((kernels.matmul(a, b, config=cfg).float() - ref).norm() / ref.norm()).item()
            us = do_bench_cudagraph(lambda cfg=cfg: kernels.matmul(a, b, config=cfg), rep=200) * 1e3
        except Exception as exc:  # noqa: BLE001 - a config that cannot run is a row of the table
            print(f"  {name:44s} FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            continue
        print(f"  {name:44s} {us:8.2f} us  x{native / us:.3f}  err {err:.2e}", flush=True)


for dt in (torch.float16, torch.bfloat16):
    for (M, N, K), names in CONFIGS.items():
        table(dt, M, N, K, names)
