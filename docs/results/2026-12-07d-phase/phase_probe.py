"""Can a tile of A's rows of one phase load off aligned lines without a copy? (2026-12-07)

A's rows 2000 bytes apart (fp16/bf16 K = 1000) start at 8 different offsets within a 128-byte
line, one every 8 rows: row r's offset is (r * 2000) mod 128. A TMA tile of consecutive rows mixes
all 8, so each row of the tile crosses one line more than an aligned one. Taking a tile's rows 8
apart (rows p, p + 8, p + 16, ...: one phase p) gives every row of the tile the same offset, and
starting the tile's K loop that many elements early (at a negative K, zero-filled by the
descriptor, as are B's rows there) puts every A row of every K step on whole lines. B's rows
(N contiguous) keep their pitch: the shift moves only which of B's rows each step reads.

This probe times, on the same simple TMA kernel (one program per tile, grouped order, pointer
stores), the consecutive-row tiles against the phase tiles, on 1000^3 and 3000x5000x1000, beside
cuBLAS and the library's entry, for two ways of addressing a phase: a 3-D host descriptor over A
seen as (phase, row, K) with a (1, BM, BK) box, and a 2-D descriptor made on the device per program.
Every side is checked against a float64 reference first.

    PYTHONPATH=. python3 docs/results/2026-12-07d-phase/phase_probe.py [--rounds 20] [--shapes 1000x1000x1000 ...]
"""

from __future__ import annotations

import argparse
import math
import os

import torch

if not torch.cuda.is_available():  # the interpreter checks the indexing (set before importing triton)
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from benchmarks.timing import checked_sides, probe_table

LINE = 128  # bytes: the L2 line a row's tile should start on


def phases(pitch_bytes: int) -> int:
    """How many rows apart two rows of the same line offset lie (1 when every row is aligned)."""
    return LINE // math.gcd(pitch_bytes, LINE)


@triton.jit
def _phase_kernel(
    a_ptr,
    a_desc,
    b_desc,
    c_ptr,
    M,
    N,
    K,
    stride_cm,
    a_base_mod,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP_M: tl.constexpr,
    P: tl.constexpr,
    MODE: tl.constexpr,
    ELEM: tl.constexpr,
):
    """MODE 0: tiles of consecutive rows (P = 1). MODE 1: phase tiles through the host's 3-D
    descriptor (P, M / P, K). MODE 2: phase tiles through a 2-D descriptor made here."""
    pid = tl.program_id(0)
    rows_per_phase = tl.cdiv(M, P)
    tiles_per_phase = tl.cdiv(rows_per_phase, BM)
    num_m = P * tiles_per_phase
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    p = pid_m // tiles_per_phase
    row0 = (pid_m % tiles_per_phase) * BM  # within the phase's rows
    off_n = pid_n * BN
    if MODE == 2:
        rows_p = (M - p + P - 1) // P
        a_local = tl.make_tensor_descriptor(
            a_ptr + p.to(tl.int64) * K, shape=[rows_p, K], strides=[P * K, 1], block_shape=[BM, BK]
        )
    shift = ((a_base_mod + p * K * ELEM) % 128) // ELEM
    if P == 1:
        shift = 0
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K + shift, BK)):
        k = ki * BK - shift
        if MODE == 0:
            a = a_desc.load([row0, k])
        elif MODE == 1:
            a = a_desc.load([p, row0, k]).reshape(BM, BK)
        else:
            a = a_local.load([row0, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    rows = p + P * (row0 + tl.arange(0, BM))
    cols = off_n + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None].to(tl.int64) * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda" if torch.cuda.is_available() else "cpu", dtype=torch.int8)


def phase_matmul(a, b, c, mode: int, bm: int, bn: int, bk: int, warps: int, stages: int, group: int = 8):
    """c = a @ b on the probe's kernel; mode as in _phase_kernel (0 ignores A's phases)."""
    M, K = a.shape
    N = b.shape[1]
    elem = a.element_size()
    P = 1 if mode == 0 else phases(a.stride(0) * elem)
    if mode == 1 and M % P:
        raise ValueError(f"mode 1 needs M a multiple of {P}, got {M}")
    if mode == 0:
        a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    elif mode == 1:
        view = a.view(M // P, P, K).permute(1, 0, 2)  # (phase, row of the phase, K)
        a_desc = TensorDescriptor(view, list(view.shape), list(view.stride()), [1, bm, bk])
    else:
        a_desc = TensorDescriptor.from_tensor(a, [bm, bk])  # unused: the program makes its own
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    grid = (P * triton.cdiv(triton.cdiv(M, P), bm) * triton.cdiv(N, bn),)
    _phase_kernel[grid](
        a, a_desc, b_desc, c, M, N, K, c.stride(0), a.data_ptr() % LINE,
        BM=bm, BN=bn, BK=bk, GROUP_M=group, P=P, MODE=mode, ELEM=elem, num_warps=warps, num_stages=stages,
    )  # fmt: skip
    return c


# (BM, BN, BK, warps, stages): the library's tile shapes on these cells, and a wider one.
TILES = ((128, 64, 64, 4, 4), (64, 128, 128, 4, 4), (128, 128, 64, 8, 4), (128, 256, 64, 8, 4))


def aligned_rows(t: torch.Tensor) -> torch.Tensor:
    """`t`'s values in a view whose rows start on whole lines (what a `pad` copy of it makes)."""
    per_line = LINE // t.element_size()
    pitch = -(-t.shape[1] // per_line) * per_line
    buf = torch.zeros((t.shape[0], pitch), dtype=t.dtype, device=t.device)
    view = buf[:, : t.shape[1]]
    view.copy_(t)
    return view


def sides(dtype: torch.dtype, shape: tuple[int, int, int], device: str):
    M, N, K = shape
    torch.manual_seed(0)
    a = torch.randn(M, K, device=device, dtype=dtype)
    b = torch.randn(K, N, device=device, dtype=dtype)
    ref = a.double() @ b.double()
    b_lines = aligned_rows(b)  # B as a pad_b config would copy it (the copy itself not timed here)
    out = []
    if device == "cuda":
        c0 = torch.empty(M, N, device=device, dtype=dtype)
        out.append(("cuBLAS", lambda: torch.mm(a, b, out=c0), c0))
        from kernels import matmul

        c1 = torch.empty(M, N, device=device, dtype=dtype)
        out.append(("library's entry", lambda: matmul(a, b, out=c1), c1))
    for tile in TILES:
        if device != "cuda" and tile[1] > 64:
            continue  # the interpreter: one small tile is enough to check the indexing
        for mode, label, bb in (
            (0, "rows", b),
            (1, "phase 3-D", b),
            (2, "phase device", b),
            (0, "rows, B on lines", b_lines),
            (1, "phase 3-D, B on lines", b_lines),
        ):
            c = torch.empty(M, N, device=device, dtype=dtype)
            name = f"BM{tile[0]}-BN{tile[1]}-BK{tile[2]}-w{tile[3]}-s{tile[4]} {label}"
            out.append((name, lambda c=c, mode=mode, tile=tile, bb=bb: phase_matmul(a, bb, c, mode, *tile), c))
    return checked_sides(out, ref)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--shapes", nargs="+", default=["1000x1000x1000", "3000x5000x1000"])
    parser.add_argument("--dtypes", nargs="+", default=["fp16", "bf16"])
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    triton.set_allocator(_alloc)
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    if device == "cuda":
        print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    for shape_name in args.shapes:
        shape = tuple(int(x) for x in shape_name.split("x"))
        for dname in args.dtypes:
            print(f"\n{dname} {shape_name}")
            named = sides(dtypes[dname], shape, device)
            print("\n".join(probe_table(named, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
