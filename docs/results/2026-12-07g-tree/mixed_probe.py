"""Does an fp8 128-row tile load faster when its two operands take different copy engines? (2026-12-07)

On the fp8 128-row cells our 64 x 64 tiles and cuBLAS's (clusters of two, one operand multicast)
both fill each SM with the same 512 KiB of operand tiles (128x4096x4096), at about 50 GB/s an SM.
A 128 x 64 tile on half the SMs (768 KiB each) took 13.1 us against 10.7 (H100 SXM): the time
follows the bytes each SM takes in, not the bytes read from L2. On those cells the one-tile kernel
(both operands by `cp.async`) beats the TMA kernel (both by the tensor memory accelerator) by 15%
at the same tile and stages (H200, 11.0 against 13.0 us). This probe asks whether one SM takes in
more when A's tiles come by `cp.async` and B's by TMA (or the other way): two engines with
requests in flight at once instead of one.

One simple kernel (one program per 64 x 64 tile, grouped order, precise fp8 accumulation the way
the library's one-tile kernel does it: each K step's MMAs into a partial of their own, added to
the fp32 sum a step later) in the four ways of loading, at 6, 8 and 12 stages, beside cuBLAS
(`torch._scaled_mm`, `use_fast_accum=False`) and the library's entry, on the fp8 128-row cells of
the default matrix that lose most. Every side is checked against a float64 reference first.

    PYTHONPATH=. python3 docs/results/2026-12-07g-tree/mixed_probe.py [--rounds 20] [--shapes 128x4096x4096 ...]
"""

from __future__ import annotations

import argparse
import os

import torch

if not torch.cuda.is_available():  # the interpreter checks the indexing (set before importing triton)
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from benchmarks.timing import checked_sides, probe_table
from kernels.matmul import _tile_coords

# (A by TMA, B by TMA): the four ways of loading a tile's operands
MODES = {(False, False): "A cp.async, B cp.async", (False, True): "A cp.async, B TMA",
         (True, False): "A TMA, B cp.async", (True, True): "A TMA, B TMA"}  # fmt: skip


@triton.jit
def _mixed_kernel(
    a_ptr,
    a_desc,
    b_ptr,
    b_desc,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP_M: tl.constexpr,
    A_TMA: tl.constexpr,
    B_TMA: tl.constexpr,
):
    """C = A @ B, A (M, K) row-major, B (K, N) column-major (torch._scaled_mm's layouts: both
    K-major), K a multiple of BK, C bf16 row-major; A's tile by TMA (A_TMA) or by pointer loads,
    and B's likewise."""
    pid_m, pid_n = _tile_coords(tl.program_id(0), M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN
    offs_k = tl.arange(0, BK)
    rows = (off_m + tl.arange(0, BM)) % M  # past the edge: valid rows, masked at the store
    cols = (off_n + tl.arange(0, BN)) % N
    a_ptrs = a_ptr + rows[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + cols[None, :].to(tl.int64) * K + offs_k[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    step = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BK)):
        if A_TMA:
            a = a_desc.load([off_m, ki * BK])
        else:
            a = tl.load(a_ptrs)
        if B_TMA:
            b = b_desc.load([off_n, ki * BK]).T
        else:
            b = tl.load(b_ptrs)
        part = tl.dot(a, b)
        acc += step
        step = part
        a_ptrs += BK
        b_ptrs += BK
    acc += step
    out_rows = off_m + tl.arange(0, BM)
    out_cols = off_n + tl.arange(0, BN)
    mask = (out_rows[:, None] < M) & (out_cols[None, :] < N)
    tl.store(c_ptr + out_rows[:, None].to(tl.int64) * N + out_cols[None, :], acc.to(tl.bfloat16), mask=mask)


def mixed_matmul(a, b, c, a_tma: bool, b_tma: bool, bm=64, bn=64, bk=128, warps=4, stages=8, group=8):
    """c = a @ b (a row-major, b column-major, both fp8) on the probe's kernel."""
    M, K = a.shape
    N = b.shape[1]
    if K % bk:
        raise ValueError(f"mixed_matmul: K must be a multiple of {bk}, got {K}")
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b.t(), [bn, bk])  # B^T: (N, K), K contiguous
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _mixed_kernel[grid](
        a, a_desc, b, b_desc, c, M, N, K,
        BM=bm, BN=bn, BK=bk, GROUP_M=group, A_TMA=a_tma, B_TMA=b_tma, num_warps=warps, num_stages=stages,
    )  # fmt: skip
    return c


def sides(shape: tuple[int, int, int], device: str, stages: tuple[int, ...]):
    M, N, K = shape
    torch.manual_seed(0)
    a = (torch.randn(M, K, device=device) / 4).to(torch.float8_e4m3fn)
    b = (torch.randn(N, K, device=device) / 4).to(torch.float8_e4m3fn).t()  # column-major
    ref = a.double() @ b.double()
    out = []
    if device == "cuda":
        one = torch.ones((), device=device)
        c0 = torch.empty(M, N, device=device, dtype=torch.bfloat16)
        out.append(("cuBLAS", lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, out=c0), c0))
        from kernels import scaled_matmul

        c1 = torch.empty(M, N, device=device, dtype=torch.bfloat16)
        out.append(("library's entry", lambda: scaled_matmul(a, b, one, one, out=c1), c1))
    for s in stages:
        for (a_tma, b_tma), label in MODES.items():
            c = torch.empty(M, N, device=device, dtype=torch.bfloat16)
            call = lambda c=c, a_tma=a_tma, b_tma=b_tma, s=s: mixed_matmul(a, b, c, a_tma, b_tma, stages=s)  # noqa: E731
            out.append((f"BM64-BN64-BK128-w4-s{s} {label}", call, c))
    return checked_sides(out, ref)


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda" if torch.cuda.is_available() else "cpu", dtype=torch.int8)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--shapes", nargs="+", default=["128x4096x4096", "128x4608x3584", "128x3584x3584"])
    parser.add_argument("--stages", nargs="+", type=int, default=[6, 8, 12])
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    triton.set_allocator(_alloc)
    if device == "cuda":
        print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    for shape_name in args.shapes:
        shape = tuple(int(x) for x in shape_name.split("x"))
        print(f"\nfp8_e4m3 {shape_name}")
        named = sides(shape, device, tuple(args.stages))
        print("\n".join(probe_table(named, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
