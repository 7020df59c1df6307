"""Triton GEMM with a fused epilogue: `C = act(scale_a * scale_b * (A @ B) + bias)`.

One kernel serves fp16, bf16, fp32 (tf32 or ieee, stated explicitly) and fp8
(e4m3fn / e5m2, with `torch._scaled_mm` scale semantics). The launchers
validate, allocate, pick a config (targets/ generates the space, `kernels.autotune`
chooses) and launch.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from kernels import autotune
from kernels._validate import (
    ACTIVATIONS,
    OFFLINE_COMPILE,
    check_bias,
    check_matrices,
    check_out,
    check_scales,
    descriptor_problem,
    resolve_out_dtype,
    resolve_precision,
)
from targets import get as target_spec
from targets.configs import (
    PAD_ROW_BYTES,
    GemmConfig,
    gluon_c_tile_bytes,
    hopper_partitions,
    line_phases,
    phase_parts,
    split_accumulator,
)

# Activation codes shared by the launcher and the kernel (constexpr ints).
_ACT_CODES = {None: 0, "relu": 1, "gelu": 2, "silu": 3, "gelu_tanh": 4}
assert set(_ACT_CODES) == {None, *ACTIVATIONS}

# Scale modes (constexpr ints): none, one scalar for the tensor, one per row of
# A / per column of B (torch._scaled_mm's "tensorwise" and "rowwise").
_SCALE_NONE, _SCALE_TENSOR, _SCALE_VECTOR = 0, 1, 2


@triton.jit
def _multiple(x, D: tl.constexpr):
    """`x`, known to the compiler as a multiple of D (the launcher checked it is).

    Triton marks integer arguments divisible by 16 on its own; sizes and strides
    that are multiples of 2, 4 or 8 only (1000, 5000) otherwise lose vectorized
    loads, masks and stores along them.
    """
    if D > 1:
        x = x // D * D
    return x


@triton.jit
def _restated(
    M, N, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    DIV_M: tl.constexpr, DIV_N: tl.constexpr, DIV_K: tl.constexpr, DIV_STRIDES: tl.constexpr, DIV_LOADS: tl.constexpr,
):  # fmt: skip
    """The pointer kernels' sizes and strides with their divisibility (DIV_*) restated."""
    return (
        _multiple(M, DIV_M), _multiple(N, DIV_N), _multiple(K, DIV_K),
        _multiple(rows_a, DIV_LOADS[0]), _multiple(cols_b, DIV_LOADS[1]),
        _multiple(stride_am, DIV_STRIDES[0]), _multiple(stride_ak, DIV_STRIDES[1]),
        _multiple(stride_bk, DIV_STRIDES[2]), _multiple(stride_bn, DIV_STRIDES[3]),
        _multiple(stride_cm, DIV_STRIDES[4]), _multiple(stride_cn, DIV_STRIDES[5]),
    )  # fmt: skip


@triton.jit
def _arrive(counter):
    """Count this program in at a tile's `counter` once its partial sum is written; returns
    how many came before it. The barrier puts every thread's stores before the signal; the
    release/acquire atomic makes the earlier programs' stores visible to the one that finds
    itself last (and sums the partials)."""
    tl.debug_barrier()
    return tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")


@triton.jit
def _tile_coords(tile_id, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of a linear tile index, in groups of GROUP_M tile rows.

    Consecutive tiles then share B tiles (and A tiles within a group) in L2.
    """
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _epilogue_store(
    acc,
    offs_m,
    offs_n,
    M,
    N,
    c_ptr,
    stride_cm,
    stride_cn,
    bias_ptr,
    stride_bias,
    scale_a_ptr,
    scale_b_ptr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
):
    """In fp32 registers: scales, bias, activation; then one rounding and a masked store."""
    acc = _epilogue(
        acc,
        offs_m,
        offs_n,
        M,
        N,
        bias_ptr,
        stride_bias,
        scale_a_ptr,
        scale_b_ptr,
        HAS_BIAS,
        ACTIVATION,
        SCALE_A,
        SCALE_B,
    )
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def _epilogue(
    acc,
    offs_m,
    offs_n,
    M,
    N,
    bias_ptr,
    stride_bias,
    scale_a_ptr,
    scale_b_ptr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
):
    """acc (fp32) with the scales, the bias and the activation applied."""
    # Rows/columns past the edge read valid neighbours; the store masks them out.
    safe_m = offs_m % M
    safe_n = offs_n % N
    if SCALE_A == 1:
        acc = acc * tl.load(scale_a_ptr)
    elif SCALE_A == 2:
        acc = acc * tl.load(scale_a_ptr + safe_m)[:, None]
    if SCALE_B == 1:
        acc = acc * tl.load(scale_b_ptr)
    elif SCALE_B == 2:
        acc = acc * tl.load(scale_b_ptr + safe_n)[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + safe_n * stride_bias).to(tl.float32)
        acc = acc + bias[None, :]
    if ACTIVATION == 1:  # relu
        acc = tl.maximum(acc, 0.0)
    elif ACTIVATION == 2:  # gelu, exact (erf), torch's default
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    elif ACTIVATION == 3:  # silu
        acc = acc * tl.sigmoid(acc)
    elif ACTIVATION == 4:  # gelu, tanh approximation: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    return acc


@triton.jit
def _tile_partial(
    a_ptr, b_ptr, pid_m, pid_n, k_lo, k_hi, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, MAX_NUM_IMPRECISE_ACC: tl.constexpr, LATE_PROMOTION: tl.constexpr,
    FMA: tl.constexpr, SWAP_AB: tl.constexpr, GEMV: tl.constexpr,
):  # fmt: skip
    """(acc, offs_m, offs_n): the fp32 sum over K steps [k_lo, k_hi) of output tile (pid_m, pid_n).

    GEMV (fma tiles of one row on a K-major B): the sum as `_gemv_partial` takes it.

    SWAP_AB (decode tiles of 16-32 rows): each step computes the transposed tile, B^T @ A^T, so that
    B's BLOCK_N columns are the MMA's rows and A's few rows its columns: on Hopper a warpgroup MMA
    (which needs 64 rows, and takes 8-256 columns) instead of the 16-row `mma.sync` a BLOCK_M of 16
    gets, both operands K-major as fp8 needs them when A is row-major and B column-major. The
    accumulator is transposed back once, after the loop.
    """
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Rows/columns past the edge wrap onto valid ones, so operand loads need
    # no M/N mask; the store masks them out.
    offs_am = offs_m % rows_a
    offs_bn = offs_n % cols_b
    if GEMV:
        acc = _gemv_partial(
            a_ptr, b_ptr, offs_am, offs_bn, k_lo, k_hi, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_K, EVEN_K
        )
        return acc, offs_m, offs_n
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + (k_lo * BLOCK_K + offs_k)[None, :] * stride_ak
    b_ptrs = b_ptr + (k_lo * BLOCK_K + offs_k)[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc, step = _accumulators(BLOCK_M, BLOCK_N, SWAP_AB)
    for k in range(k_lo, k_hi):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc, step = _step_mma(a, b, acc, step, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, FMA, SWAP_AB)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return _accumulated(acc, step, LATE_PROMOTION, SWAP_AB), offs_m, offs_n


@triton.jit
def _accumulators(BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SWAP_AB: tl.constexpr):
    """The K loop's fp32 (acc, step), zero: of the (BLOCK_M, BLOCK_N) tile, or with SWAP_AB of its
    transpose (the tile the swapped steps compute)."""
    if SWAP_AB:
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    return acc, tl.zeros_like(acc)


@triton.jit
def _step_mma(
    a, b, acc, step, INPUT_PRECISION: tl.constexpr, MAX_NUM_IMPRECISE_ACC: tl.constexpr, LATE_PROMOTION: tl.constexpr,
    FMA: tl.constexpr, SWAP_AB: tl.constexpr,
):  # fmt: skip
    """`_mma` of one K step's (BLOCK_M, BLOCK_K) and (BLOCK_K, BLOCK_N) tiles, or with SWAP_AB of
    their transposes in swapped order (B^T @ A^T: B's columns the MMA's rows)."""
    if SWAP_AB:
        acc, step = _mma(
            tl.trans(b), tl.trans(a), acc, step, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, False
        )
    else:
        acc, step = _mma(a, b, acc, step, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, FMA)
    return acc, step


@triton.jit
def _accumulated(acc, step, LATE_PROMOTION: tl.constexpr, SWAP_AB: tl.constexpr):
    """The (BLOCK_M, BLOCK_N) sum after the K loop: the last step's partial added (late promotion),
    transposed back after swapped steps."""
    if LATE_PROMOTION:
        acc += step
    if SWAP_AB:
        acc = tl.trans(acc)
    return acc


@triton.jit
def _gemv_partial(
    a_ptr, b_ptr, offs_am, offs_bn, k_lo, k_hi, K, stride_am, stride_ak, stride_bk, stride_bn,
    BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
):  # fmt: skip
    """The (1, BLOCK_N) fp32 sum over K steps [k_lo, k_hi) of a one-row tile whose B is K-major.

    B's (BLOCK_K, BLOCK_N) tile times A's row taken as a column, summed over K within the tile's
    own layout: each thread's 16-byte loads run along K, so the sum is mostly its own, then its
    warp's. (The rows' 3-D product, `_mma`'s FMA, converts its operands through shared memory at
    every step. On the H200 this form's tiles ran the fp8 decode cells 3-10% faster than the
    library's matrix configs had. Where B is N-major the sum crosses warps at every step, and the
    3-D form was faster: docs/BENCHMARKS.md. The next
    step's loads issued before this step's products, two steps of B in flight per program, were
    slower there too: the registers of two tiles halved the programs an SM holds.)
    """
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[None, :] * stride_am + (k_lo * BLOCK_K + offs_k)[:, None] * stride_ak
    b_ptrs = b_ptr + (k_lo * BLOCK_K + offs_k)[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((1, offs_bn.shape[0]), dtype=tl.float32)
    for k in range(k_lo, k_hi):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            in_k = offs_k[:, None] < K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=in_k, other=0.0)
            b = tl.load(b_ptrs, mask=in_k, other=0.0)
        acc += tl.sum(a.to(tl.float32) * b.to(tl.float32), axis=0, keep_dims=True)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def _mma(
    a, b, acc, step, INPUT_PRECISION: tl.constexpr, MAX_NUM_IMPRECISE_ACC: tl.constexpr, LATE_PROMOTION: tl.constexpr,
    FMA: tl.constexpr,
):  # fmt: skip
    """One K step's MMAs: (acc, step) after adding a @ b.

    FMA (the decode configs of 1-4 rows, 16- and 8-bit operands): no matrix instruction, the
    products summed in fp32 on the CUDA cores, so a tile needs no 16-row (or 64-row) minimum
    and its operands go from the loads to the FMAs without shared memory.

    LATE_PROMOTION (fp8 with precise accumulation): the step's MMAs start from zero into
    `step`, and the previous step's partial sum is added to the fp32 `acc` meanwhile, so
    ptxas can issue the additions between the step's asynchronous MMAs (Triton's
    MAX_NUM_IMPRECISE_ACC adds each partial only after waiting for its MMAs; in some
    tiles ptxas then waits after every MMA). The caller adds the last step's partial
    after the loop. Otherwise `step` passes through unused (and is compiled away).
    """
    if FMA:
        acc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)
    elif LATE_PROMOTION:
        part = tl.dot(a, b, input_precision=INPUT_PRECISION)
        acc += step
        step = part
    else:
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION, max_num_imprecise_acc=MAX_NUM_IMPRECISE_ACC)
    return acc, step


@triton.jit
def _gemm_kernel(
    # pointers
    a_ptr,
    b_ptr,
    c_ptr,
    ws_ptr,
    counters_ptr,
    bias_ptr,
    scale_a_ptr,
    scale_b_ptr,
    # dimensions; loads wrap at rows_a / cols_b (M, N, or an aligned copy's padded extents)
    M,
    N,
    K,
    rows_a,
    cols_b,
    # strides (any layout: row-major, column-major, transposed views)
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_bias,
    # meta-parameters
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr,
    SERIAL_REDUCE: tl.constexpr,
    EVEN_K: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
    MAX_NUM_IMPRECISE_ACC: tl.constexpr,
    LATE_PROMOTION: tl.constexpr,
    FMA: tl.constexpr,
    SWAP_AB: tl.constexpr,
    GEMV: tl.constexpr,
    DIV_M: tl.constexpr,
    DIV_N: tl.constexpr,
    DIV_K: tl.constexpr,
    DIV_STRIDES: tl.constexpr,
    DIV_LOADS: tl.constexpr,
):
    """C[M, N] = act(sa * sb * (A[M, K] @ B[K, N]) + bias[N]), fp32 accumulation.

    One program per output tile ("tile" variant). With SPLIT_K > 1 ("splitk"),
    program (tile, s) sums only the s-th slice of the K loop and writes its
    fp32 partial tile to `ws_ptr`, a (SPLIT_K, M, N) workspace; the reduction
    kernel adds the slices and applies the epilogue. With SERIAL_REDUCE
    ("splitk_serial") there is no second kernel: each program counts itself in
    at its tile's counter (`counters_ptr`, zero between launches), and the last
    of the tile's slices to arrive adds the slices, in slice order (the same
    bits as the second pass), applies the epilogue and resets the counter.

    DIV_*: powers of two (<= 16) that M, N, K and the strides (A's, B's and C's
    in that order) are multiples of.
    """
    M, N, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn = _restated(
        M, N, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        DIV_M, DIV_N, DIV_K, DIV_STRIDES, DIV_LOADS,
    )  # fmt: skip
    pid_m, pid_n = _tile_coords(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    k_tiles = tl.cdiv(K, BLOCK_K)
    if SPLIT_K == 1:
        k_lo = 0
        k_hi = k_tiles
    else:
        per_slice = tl.cdiv(k_tiles, SPLIT_K)
        k_lo = tl.program_id(axis=1) * per_slice
        k_hi = min(k_lo + per_slice, k_tiles)

    acc, offs_m, offs_n = _tile_partial(
        a_ptr, b_ptr, pid_m, pid_n, k_lo, k_hi, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn,
        BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, FMA, SWAP_AB, GEMV,
    )  # fmt: skip

    if SPLIT_K == 1:
        _epilogue_store(
            acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
            scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
        )  # fmt: skip
    else:
        in_bounds = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        ws_tile = ws_ptr + offs_m[:, None] * N + offs_n[None, :]
        tl.store(ws_tile + tl.program_id(axis=1) * M * N, acc, mask=in_bounds)
        if SERIAL_REDUCE:
            counter = counters_ptr + tl.program_id(axis=0)
            arrived = _arrive(counter)
            if arrived == SPLIT_K - 1:  # the tile's last slice: the others' partials are visible
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for s in range(SPLIT_K):  # slice order, as the second pass: the same bits
                    acc += tl.load(ws_tile + s * M * N, mask=in_bounds, other=0.0, cache_modifier=".cg")
                _epilogue_store(
                    acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
                    scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
                )  # fmt: skip
                tl.atomic_xchg(counter, 0)  # ready for the next launch


@triton.jit
def _gemm_streamk_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    ws_ptr,
    counters_ptr,
    bias_ptr,
    scale_a_ptr,
    scale_b_ptr,
    M,
    N,
    K,
    rows_a,
    cols_b,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_bias,
    iters_per_program,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
    MAX_NUM_IMPRECISE_ACC: tl.constexpr,
    LATE_PROMOTION: tl.constexpr,
    DIV_M: tl.constexpr,
    DIV_N: tl.constexpr,
    DIV_K: tl.constexpr,
    DIV_STRIDES: tl.constexpr,
    DIV_LOADS: tl.constexpr,
):
    """The "streamk" variant: the (tile, K step) iterations of the whole problem are dealt out
    in equal contiguous ranges of `iters_per_program` to one program per SM, so every SM has
    the same work however many tiles there are. A tile covered by one program is stored at
    once; a tile split between programs gets their fp32 partial sums through the workspace
    (two BLOCK_M x BLOCK_N slots per program: its first and its last tile), and the last of
    them to arrive at the tile's counter adds them in program order (the same bits every
    time), applies the epilogue and resets the counter.
    """
    M, N, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn = _restated(
        M, N, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        DIV_M, DIV_N, DIV_K, DIV_STRIDES, DIV_LOADS,
    )  # fmt: skip
    pid = tl.program_id(axis=0)
    k_tiles = tl.cdiv(K, BLOCK_K)
    total = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N) * k_tiles
    it = pid * iters_per_program
    end = min(it + iters_per_program, total)
    slot_offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    first_tile = it // k_tiles
    while it < end:
        tile = it // k_tiles
        k_lo = it % k_tiles
        k_hi = min(k_tiles, k_lo + (end - it))
        pid_m, pid_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc, offs_m, offs_n = _tile_partial(
            a_ptr, b_ptr, pid_m, pid_n, k_lo, k_hi, K, rows_a, cols_b, stride_am, stride_ak, stride_bk, stride_bn,
            BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, False, False, False,
        )  # fmt: skip
        if (k_lo == 0) & (k_hi == k_tiles):  # the whole tile is this program's
            _epilogue_store(
                acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
                scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
            )  # fmt: skip
        else:
            slot = (pid * 2 + (tile != first_tile).to(tl.int32)) * BLOCK_M * BLOCK_N
            tl.store(ws_ptr + slot + slot_offs, acc)
            p_first = (tile * k_tiles) // iters_per_program
            p_last = ((tile + 1) * k_tiles - 1) // iters_per_program
            counter = counters_ptr + tile
            arrived = _arrive(counter)
            if arrived == p_last - p_first:  # the tile's last contributor: the others' partials are visible
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for p in range(p_first, p_last + 1):
                    their_first = (p * iters_per_program) // k_tiles
                    their_slot = (p * 2 + (tile != their_first).to(tl.int32)) * BLOCK_M * BLOCK_N
                    acc += tl.load(ws_ptr + their_slot + slot_offs, cache_modifier=".cg")
                _epilogue_store(
                    acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
                    scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
                )  # fmt: skip
                tl.atomic_xchg(counter, 0)  # ready for the next launch
        it += k_hi - k_lo


@triton.jit
def _splitk_reduce_kernel(
    ws_ptr,
    c_ptr,
    bias_ptr,
    scale_a_ptr,
    scale_b_ptr,
    M,
    N,
    stride_cm,
    stride_cn,
    stride_bias,
    SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
    DIV_N: tl.constexpr,
    DIV_CM: tl.constexpr,
):
    """C = epilogue(sum over s of workspace[s]): the second pass of split-K, in a fixed order."""
    N, stride_cm = _multiple(N, DIV_N), _multiple(stride_cm, DIV_CM)
    offs_m = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    ws_ptrs = ws_ptr + offs_m[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(SPLIT_K):  # always the same order: results are reproducible bit for bit
        acc += tl.load(ws_ptrs, mask=mask, other=0.0)
        ws_ptrs += M * N
    _epilogue_store(
        acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
        scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
    )  # fmt: skip


@triton.jit(do_not_specialize=["a_line_mod", "a_pitch"])  # (where A lies: one compile for any)
def _gemm_tma_kernel(
    a_desc,
    b_desc,
    c_ptr,
    c_desc,
    bias_ptr,
    scale_a_ptr,
    scale_b_ptr,
    M,
    N,
    K,
    stride_cm,
    stride_cn,
    stride_bias,
    num_programs,
    a_line_mod,
    a_pitch,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    PHASES: tl.constexpr,
    LINE_ELEMS: tl.constexpr,
    K_PARTS: tl.constexpr,
    SPLIT_ACC: tl.constexpr,
    A_T: tl.constexpr,
    B_T: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    FLATTEN: tl.constexpr,
    TMA_STORE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
    MAX_NUM_IMPRECISE_ACC: tl.constexpr,
    LATE_PROMOTION: tl.constexpr,
    SWAP_AB: tl.constexpr,
    DIV_N: tl.constexpr,
    DIV_CM: tl.constexpr,
):
    """The "tma" variant: persistent programs (one per SM) loop over output tiles;
    operand tiles arrive by tensor-memory-accelerator copies from descriptors,
    which zero-fill past the edges (no masks, any K).

    A_T / B_T: the descriptor covers the operand's transpose (A column-major:
    (K, M) tiles; B column-major: (N, K) tiles, the K-major layout fp8 wants).
    WARP_SPECIALIZE ("tma_ws"): the compiler splits the loop into producer
    (TMA) and consumer (MMA) warp partitions. FLATTEN: the tile loop is flattened
    into the K loop. Triton 3.6 partitions a flattened loop on sm_100 and later
    and an unflattened one on Hopper (one producer and two consumer warpgroups,
    for 4-warp configs of >= 128 rows); flattened on Hopper, or unflattened on
    sm_100, it does not (checked on the compiled kernels, tests/test_resources.py). Hopper's
    partitioned kernels did not finish on the H200 with Triton 3.6, so there the loop stays
    flattened unless `targets.configs.hopper_partitions()` says the installed Triton's run.
    TMA_STORE ("tma_store"): the output tile leaves through a descriptor over C
    (`c_desc`, clipped at the edges) instead of pointer stores.
    SWAP_AB (decode tiles of 16-32 rows, as in `_tile_partial`): each step computes the transposed
    tile, B^T @ A^T, B's BLOCK_N columns the warpgroup MMA's rows; the accumulator is transposed
    back once per tile.
    DIV_N, DIV_CM: as in _gemm_kernel, for the epilogue's stores.
    PHASES > 1 ("phase_a": A row-major, its rows off the L2 lines, PHASES rows apart on the same
    offset within a part of LINE_ELEMS elements of a line): a tile's rows are one phase's (rows p,
    p + PHASES, ...), read through `a_desc` over A seen as (phase, row of the phase, K), and its K
    loop starts early by that offset (`a_line_mod`: A's base, `a_pitch`: its row pitch, in elements
    modulo LINE_ELEMS), at a negative K that the descriptors zero-fill; each K step is read in
    K_PARTS parts of BLOCK_K // K_PARTS (the descriptors' K), so that every part of a row of A's tile
    starts on a multiple of LINE_ELEMS and lies in one line (a config's `phase_unit`).
    SPLIT_ACC (K_PARTS > 1): the odd parts' MMAs into an accumulator of their own, added to the
    other after the loop, so that one part's MMAs need not wait for the other's: Triton keeps both
    in flight (with one accumulator it waits for all of a step's first part before the second).
    """
    N, stride_cm = _multiple(N, DIV_N), _multiple(stride_cm, DIV_CM)
    tiles_per_phase = tl.cdiv(M // PHASES, BLOCK_M)
    tiles_m = PHASES * tiles_per_phase
    num_tiles = tiles_m * tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(
        tl.program_id(axis=0), num_tiles, num_programs, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE
    ):
        pid_m, pid_n = _tile_coords(tile_id, tiles_m * BLOCK_M, N, BLOCK_M, BLOCK_N, GROUP_M)
        off_n = pid_n * BLOCK_N
        if PHASES > 1:
            phase = pid_m // tiles_per_phase
            off_m = (pid_m % tiles_per_phase) * BLOCK_M  # (among the phase's rows)
            shift = (a_line_mod + phase * a_pitch) % LINE_ELEMS
        else:
            phase = 0
            off_m = pid_m * BLOCK_M
            shift = 0
        acc, step = _accumulators(BLOCK_M, BLOCK_N, SWAP_AB)
        acc_odd, step_odd = _accumulators(BLOCK_M, BLOCK_N, SWAP_AB)
        for ki in range(tl.cdiv(K + shift, BLOCK_K)):
            for part in tl.static_range(K_PARTS):
                off_k = ki * BLOCK_K + part * (BLOCK_K // K_PARTS) - shift
                if A_T:
                    a = a_desc.load([off_k, off_m]).T
                elif PHASES > 1:
                    a = a_desc.load([phase, off_m, off_k]).reshape(BLOCK_M, BLOCK_K // K_PARTS)
                else:
                    a = a_desc.load([off_m, off_k])
                if B_T:
                    b = b_desc.load([off_n, off_k]).T
                else:
                    b = b_desc.load([off_k, off_n])
                if part % 2 == 0 or not SPLIT_ACC:
                    acc, step = _step_mma(
                        a, b, acc, step, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, False, SWAP_AB
                    )
                else:
                    acc_odd, step_odd = _step_mma(
                        a, b, acc_odd, step_odd, INPUT_PRECISION, MAX_NUM_IMPRECISE_ACC, LATE_PROMOTION, False, SWAP_AB
                    )
        acc = _accumulated(acc, step, LATE_PROMOTION, SWAP_AB)
        if SPLIT_ACC:
            acc += _accumulated(acc_odd, step_odd, LATE_PROMOTION, SWAP_AB)
        offs_m, offs_n = phase + PHASES * (off_m + tl.arange(0, BLOCK_M)), off_n + tl.arange(0, BLOCK_N)
        if TMA_STORE:
            acc = _epilogue(
                acc, offs_m, offs_n, M, N, bias_ptr, stride_bias, scale_a_ptr, scale_b_ptr,
                HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
            )  # fmt: skip
            c_desc.store([off_m, off_n], acc.to(c_desc.dtype))
        else:
            _epilogue_store(
                acc, offs_m, offs_n, M, N, c_ptr, stride_cm, stride_cn, bias_ptr, stride_bias,
                scale_a_ptr, scale_b_ptr, HAS_BIAS, ACTIVATION, SCALE_A, SCALE_B,
            )  # fmt: skip


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    activation: str | None = None,
    out_dtype: torch.dtype | None = None,
    precision: str | None = None,
    out: torch.Tensor | None = None,
    config: GemmConfig | None = None,
) -> torch.Tensor:
    """`act(a @ b + bias)` for 2-D fp16, bf16 or fp32 `a` (M, K) and `b` (K, N).

    Any strides (row- or column-major, transposed views); M, N, K >= 1.
    fp32 inputs take `precision="ieee"` (true fp32, the default: never a silent
    TF32) or `"tf32"`; other dtypes take no precision. `out_dtype` defaults to
    the input dtype; `bias` is (N,) in the output dtype; `activation` is one of
    relu, gelu, gelu_tanh, silu. `out` receives the result if given. `config`
    forces a launch config instead of the autotuned one.
    """
    dtype = check_matrices("matmul", a, b, allowed=(torch.float16, torch.bfloat16, torch.float32))
    input_precision = resolve_precision("matmul", a.dtype, precision)
    c_dtype = resolve_out_dtype("matmul", out_dtype, default=a.dtype)
    return _launch("matmul", a, b, c_dtype, dtype, input_precision, bias, activation, None, None, out, config)


def scaled_matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    activation: str | None = None,
    out_dtype: torch.dtype = torch.bfloat16,
    use_fast_accum: bool = False,
    out: torch.Tensor | None = None,
    config: GemmConfig | None = None,
) -> torch.Tensor:
    """fp8 GEMM with `torch._scaled_mm` semantics: `(a @ b) * scale_a * scale_b + bias`.

    `a` (M, K) and `b` (K, N) are float8_e4m3fn or float8_e5m2 (the same for
    both); the scales are float32, either one element each (tensorwise) or
    `scale_a` (M, 1) with `scale_b` (1, N) (rowwise). Unlike `torch._scaled_mm`,
    any strides and any K are accepted (the fast layout is `a` row-major and
    `b` column-major). The scales are applied in the epilogue, in fp32.

    `use_fast_accum` has `torch._scaled_mm`'s meaning. False (the default, as in
    torch): partial sums are promoted to the fp32 accumulator at least every
    128 K elements. True: Hopper's fp8 tensor cores accumulate the whole K loop
    in their reduced-precision adder (faster, measurably less accurate at long K).
    """
    dtype = check_matrices("scaled_matmul", a, b, allowed=(torch.float8_e4m3fn, torch.float8_e5m2))
    c_dtype = resolve_out_dtype("scaled_matmul", out_dtype, default=torch.bfloat16)
    modes = check_scales(a, b, scale_a, scale_b)
    if not isinstance(use_fast_accum, bool):
        raise TypeError(f"scaled_matmul: use_fast_accum must be a bool, got {use_fast_accum!r}")
    precision = "fast_accum" if use_fast_accum else None
    return _launch(
        "scaled_matmul", a, b, c_dtype, dtype, precision, bias, activation, (scale_a, scale_b), modes, out, config
    )


def _launch(op, a, b, c_dtype, dtype, input_precision, bias, activation, scales, scale_modes, out, config):
    if activation not in _ACT_CODES:
        raise ValueError(f"{op}: unknown activation {activation!r}; expected None or one of {', '.join(ACTIVATIONS)}")
    M, K = a.shape
    N = b.shape[1]
    check_bias(op, bias, N, c_dtype, a.device)
    c = check_out(op, out, (M, N), c_dtype, a, b)

    has_bias = bias is not None
    bias_arg = bias if has_bias else c  # never read when HAS_BIAS is False
    if scales is None:
        scale_a = scale_b = c  # never read
        mode_a = mode_b = _SCALE_NONE
    else:
        scale_a, scale_b = scales
        mode_a, mode_b = (_SCALE_TENSOR, _SCALE_TENSOR) if scale_modes == "tensorwise" else (_SCALE_VECTOR,) * 2
    fp8_precise = scales is not None and input_precision != "fast_accum"
    epilogue = dict(HAS_BIAS=has_bias, ACTIVATION=_ACT_CODES[activation], SCALE_A=mode_a, SCALE_B=mode_b)
    epilogue_args = (bias_arg, scale_a, scale_b)
    bias_stride = bias.stride(0) if has_bias else 0
    store_hints = dict(DIV_N=_divisor(N), DIV_CM=_divisor(c.stride(0)))

    def mainloop(cfg: GemmConfig, k_parts: int = 1) -> dict:
        return dict(
            BLOCK_M=cfg.block_m,
            BLOCK_N=cfg.block_n,
            BLOCK_K=cfg.block_k,
            GROUP_M=cfg.group_m,
            INPUT_PRECISION=input_precision if input_precision in ("ieee", "tf32") else None,
            # fp8 on Hopper: None = Triton's default (accumulate the whole K loop
            # in the tensor cores' reduced-precision adder). Otherwise promote to
            # fp32 every 128 K elements (4 wgmma k32 steps), the promotion
            # interval of CUTLASS's fp8 GEMMs and cuBLAS without fast accumulation.
            # (ptxas then serialises the MMAs, C7514: Triton adds the partial sum
            # between them. Adding it after the step's MMAs instead, in the kernel,
            # removes that but measured slower at M = 4096 on the H200:
            # docs/BENCHMARKS.md.) `late_promotion` configs add each step's partial
            # while the next step's MMAs run instead (_mma).
            # (a step read in `k_parts` parts: each part's MMAs promoted)
            MAX_NUM_IMPRECISE_ACC=min(cfg.block_k // k_parts, 128) if fp8_precise and not cfg.late_promotion else None,
            LATE_PROMOTION=cfg.late_promotion,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
        )

    def operands(cfg: GemmConfig, *, copy: bool = True) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(A, B, K) as this config computes: the operands themselves, or for `pad` configs
        aligned copies with K zero-extended to a multiple of 16, for `pad_a` / `pad_b` ones that of
        A / B alone (K kept), for `kmajor_b` ones B's K-major copy (`copy=False`: the layout only)."""
        if cfg.pad:
            return *_aligned(a, b, copy, k_major_b=cfg.kmajor_b), _padded_k(K)
        if cfg.copied_alone:
            return *_aligned(a, b, copy, only=cfg.copied_alone), K
        if cfg.kmajor_b:
            return a, _k_major(b, copy), K
        return a, b, K

    def wrap(a_, b_) -> tuple[int, int]:
        """Where the tile kernel's operand loads wrap past the edge: M and N, or for an aligned
        copy its padded rows (the padding's values reach only outputs the store masks out)."""
        rows_a = a_.stride(1) if a_ is not a and a_.stride(0) == 1 else M
        cols_b = b_.stride(0) if b_ is not b and b_.stride(1) == 1 else N
        return rows_a, cols_b

    def pointer_args(cfg: GemmConfig, a_, b_, k_, workspace=None, counters=None) -> tuple:
        """The tile/splitk kernel's arguments (C stands in for the split-K buffers it does not use)."""
        return (
            a_, b_, c, c if workspace is None else workspace, c if counters is None else counters,
            *epilogue_args,
            M, N, k_, *wrap(a_, b_),
            *a_.stride(), *b_.stride(), c.stride(0), c.stride(1), bias_stride,
        )  # fmt: skip

    def pointer_meta(cfg: GemmConfig, a_, b_, k_) -> dict:
        """The meta-parameters the pointer kernels share (the stream-K kernel's all of them)."""
        strides = (*a_.stride(), *b_.stride(), c.stride(0), c.stride(1))
        return dict(
            mainloop(cfg), EVEN_K=k_ % cfg.block_k == 0, **epilogue,
            DIV_M=_divisor(M), DIV_N=_divisor(N), DIV_K=_divisor(k_), DIV_STRIDES=tuple(map(_divisor, strides)),
            DIV_LOADS=tuple(map(_divisor, wrap(a_, b_))),
        )  # fmt: skip

    def gemm_meta(cfg: GemmConfig, a_, b_, k_) -> dict:
        """_gemm_kernel's meta-parameters: the shared ones and its split-K mode."""
        return dict(
            pointer_meta(cfg, a_, b_, k_),
            SPLIT_K=cfg.split_k,
            SERIAL_REDUCE=cfg.variant == "splitk_serial",
            FMA=cfg.fma,
            SWAP_AB=cfg.swap_ab,
            GEMV=_gemv_mode(cfg, b_),
        )

    def tma_call(cfg: GemmConfig, descriptor, a_, b_, k_) -> tuple[int, tuple, dict]:
        """(programs, arguments, meta-parameters) of the TMA kernel; `descriptor(t, block, transposed)`
        makes each operand's descriptor argument (the real one, or its compile-time description)."""
        phases = row_phases(a_, cfg.phase_unit) if cfg.phase_a else 1
        parts = phase_parts(cfg.block_k, a_.element_size(), cfg.phase_unit) if phases > 1 else 1
        (a_block, a_t), (b_block, b_t) = (
            _descriptor_block(t, cfg, k_dim=d, k_parts=parts) for t, d in ((a_, 1), (b_, 0))
        )
        a_view = a_
        if phases > 1:  # A seen as (phase, row of the phase, K): a tile's rows one phase's
            a_view = a_.as_strided((phases, M // phases, a_.shape[1]), (a_.stride(0), phases * a_.stride(0), 1))
            a_block = [1, *a_block]
        tiles = phases * triton.cdiv(M // phases, cfg.block_m) * triton.cdiv(N, cfg.block_n)
        programs = min(tiles, _sm_count(a.device))
        # "tma_store": C through a descriptor too, where C's rows allow one (else pointer stores).
        tma_store = cfg.variant == "tma_store" and c.stride(1) == 1 and descriptor_problem(c, "C") is None
        warp_specialize = cfg.variant == "tma_ws"
        c_desc = descriptor(c, [cfg.block_m, cfg.block_n], False) if tma_store else c
        line = cfg.phase_unit // a_.element_size()  # (elements of a phase's part of a line)
        args = (
            descriptor(a_view, a_block, a_t), descriptor(b_, b_block, b_t), c, c_desc, *epilogue_args,
            M, N, k_, c.stride(0), c.stride(1), bias_stride, programs,
            a_.data_ptr() // a_.element_size() % line if phases > 1 else 0, a_.stride(0) % line,
        )  # fmt: skip
        meta = dict(
            PHASES=phases, LINE_ELEMS=line, K_PARTS=parts, SPLIT_ACC=parts > 1 and split_accumulator(cfg),
            A_T=a_t, B_T=b_t, WARP_SPECIALIZE=warp_specialize, SWAP_AB=cfg.swap_ab,
            FLATTEN=not (warp_specialize and _hopper_target() and hopper_partitions()),
            TMA_STORE=tma_store,
            **mainloop(cfg, parts), **epilogue, **store_hints,
        )  # fmt: skip
        return programs, args, meta

    def gluon_call(cfg: GemmConfig, a_, b_, compile_only: bool = False):
        """The gluon_ws kernel on these operands (kernels/gluon_hopper.py)."""
        from kernels import gluon_hopper

        scale_a, scale_b = scales if scales is not None else (None, None)
        promote = gluon_hopper.promotion(cfg.block_m, cfg.tile_n, cfg.num_warps, fp8_precise)
        counters = None
        if cfg.split_k > 1 or cfg.stream_k:
            counters = _tile_counters(a.device, gluon_hopper.counters_needed(M, N, cfg.block_m, cfg.block_n))
        return gluon_hopper.gemm(
            a_, b_, c, scale_a, scale_b, block_m=cfg.block_m, block_n=cfg.block_n, block_k=cfg.block_k,
            stages=cfg.num_stages, num_warps=cfg.num_warps, group_m=cfg.group_m, promote=promote,
            programs=_sm_count(a.device), split_warpgroups=cfg.variant == "gluon_wg", split_k=cfg.split_k,
            stream_k=cfg.stream_k, tail_halves=cfg.tail_halves, cluster_m=cfg.cluster_m, cluster_n=cfg.cluster_n,
            extra_n=cfg.extra_n, counters=counters, compile_only=compile_only,
        )  # fmt: skip

    def launch(cfg: GemmConfig):
        a_, b_, k_ = operands(cfg)
        if cfg.uses_gluon:
            compiled = gluon_call(cfg, a_, b_, compile_only=bool(OFFLINE_COMPILE))
            if OFFLINE_COMPILE:  # (as _start records the Triton kernels; tail_halves: two)
                OFFLINE_COMPILE[-1][1].extend(compiled if isinstance(compiled, list) else [compiled])
            return compiled
        if cfg.uses_tma:
            programs, args, meta = tma_call(cfg, _descriptor, a_, b_, k_)
            return _start(_gemm_tma_kernel, (programs,))(*args, **meta)
        tiles = triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n)
        if cfg.variant == "streamk":
            programs, per_program = _streamk_split(tiles * triton.cdiv(k_, cfg.block_k), _sm_count(a.device))
            workspace = torch.empty((programs * 2, cfg.block_m, cfg.block_n), dtype=torch.float32, device=a.device)
            return _start(_gemm_streamk_kernel, (programs,))(
                *pointer_args(cfg, a_, b_, k_, workspace, _tile_counters(a.device, tiles)),
                per_program,
                **pointer_meta(cfg, a_, b_, k_),
            )
        if cfg.split_k == 1:
            return _start(_gemm_kernel, (tiles,))(*pointer_args(cfg, a_, b_, k_), **gemm_meta(cfg, a_, b_, k_))
        workspace = torch.empty((cfg.split_k, M, N), dtype=torch.float32, device=a.device)
        serial = cfg.variant == "splitk_serial"
        counters = _tile_counters(a.device, tiles) if serial else None
        compiled = _start(_gemm_kernel, (tiles, cfg.split_k))(
            *pointer_args(cfg, a_, b_, k_, workspace, counters), **gemm_meta(cfg, a_, b_, k_)
        )
        if serial:
            return compiled
        grid = (triton.cdiv(M, _REDUCE_BLOCK[0]), triton.cdiv(N, _REDUCE_BLOCK[1]))
        _start(_splitk_reduce_kernel, grid)(
            workspace, c, *epilogue_args, M, N, c.stride(0), c.stride(1), bias_stride,
            SPLIT_K=cfg.split_k, BLOCK_M=_REDUCE_BLOCK[0], BLOCK_N=_REDUCE_BLOCK[1], **epilogue, **store_hints,
        )  # fmt: skip
        return compiled

    def ineligible(cfg: GemmConfig) -> str | None:
        if cfg.late_promotion and not fp8_precise:
            return "late promotion is for fp8 with precise accumulation"
        if cfg.fma and a.element_size() > 2:
            return "fma configs are for 16- and 8-bit operands (fp32 keeps its tf32 / ieee matrix path)"
        if cfg.kmajor_b and (problem := kmajor_problem()):
            return problem
        if cfg.phase_a and (problem := phase_problem(a, cfg.phase_unit)):
            return problem
        if cfg.swap_ab and a.element_size() > 2:
            return "swap-AB configs are for 16- and 8-bit operands (tf32's warpgroup MMA needs both K-major)"
        if cfg.uses_gluon:
            return gluon_ineligible(cfg)
        if not cfg.uses_tma or cfg.pad:
            return None  # (aligned copies always suit a descriptor)
        # (a kmajor_b config's B is an aligned copy, and a pad_a / pad_b config's A / B)
        reasons = [
            r
            for r in (
                None if cfg.pad_a else descriptor_problem(a, "A"),
                None if cfg.kmajor_b or cfg.pad_b else descriptor_problem(b, "B"),
            )
            if r
        ]
        return "; ".join(reasons) or None

    def kmajor_problem() -> str | None:
        if b.stride(0) == 1:
            return "kmajor_b configs copy a B whose rows run along N; this B is K-major already"
        if input_precision == "ieee":
            return "kmajor_b configs are for a matrix instruction that reads B K-major; ieee fp32 has none"
        if a.element_size() == 2:
            return "kmajor_b configs are for 32- and 8-bit operands (the warpgroup MMA reads 16-bit B either way)"
        return None

    def gluon_ineligible(cfg: GemmConfig) -> str | None:
        from kernels import gluon_hopper

        if not _hopper_target():
            return "gluon_ws configs are for Hopper (sm_90): warpgroup MMA"
        if has_bias or activation is not None:
            return "gluon_ws configs have no bias or activation epilogue"
        if a.element_size() > 2:
            return "gluon_ws configs are for 16- and 8-bit operands"
        if cfg.variant == "gluon_wg" and (problem := gluon_hopper.split_warpgroups_problem(cfg.block_m, cfg.num_warps)):
            return problem
        promote = gluon_hopper.promotion(cfg.block_m, cfg.tile_n, cfg.num_warps, fp8_precise)
        if cfg.clustered and (
            problem := gluon_hopper.cluster_problem(cfg.cluster_m, cfg.cluster_n, promote, cfg.variant == "gluon_wg")
        ):
            return f"gluon clusters: {problem}"
        if promote is None:
            return (
                f"gluon_ws with fp8's precise accumulation keeps an accumulator and a partial sum of half the tile: "
                f"at most {2 * gluon_hopper.PROMOTE_MAX_ACC} accumulator values per thread, "
                f"{cfg.block_m}x{cfg.block_n} on {cfg.num_warps} warps has more"
            )
        n_major_bytes = 0 if gluon_hopper.b_is_kmajor(b) else b.element_size()
        if cfg.extra_n and (
            problem := gluon_hopper.extra_n_problem(
                cfg.extra_n, cfg.block_n, promote, block_k=cfg.block_k, n_major_bytes=n_major_bytes
            )
        ):
            return problem
        if scales is not None and not all(s.is_contiguous() for s in scales):
            return "gluon_ws configs read contiguous scales"
        if cfg.stream_k:
            tiles = triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n)
            if problem := gluon_hopper.stream_k_problem(tiles, triton.cdiv(K, cfg.block_k), _sm_count(a.device)):
                return f"gluon stream-K {cfg}: {problem}"
        # (fp8's tiles are sized for precise accumulation, which stores wide tiles by halves)
        smem = cfg.smem_bytes(a.element_size()) + gluon_c_tile_bytes(cfg, a.element_size(), fp8_precise)
        if smem > HOPPER_SMEM_PER_BLOCK:
            return (
                f"gluon_ws {cfg}: its ring and its output tile take {smem} bytes of shared memory here, "
                f"more than sm_90's {HOPPER_SMEM_PER_BLOCK}"
            )
        a_, b_, _ = operands(cfg, copy=False)
        return gluon_hopper.unsupported(a_, b_, c)

    def precompile(cfgs: list[GemmConfig]) -> None:
        # Tensors travel as their dtypes: compiling needs only types, alignment and the integers;
        # descriptors as (dtype, block shape), rebuilt in the worker on a scratch tensor (the
        # compiled kernel depends on those only: shapes and strides are launch-time values).
        jobs = []
        for cfg in cfgs:
            a_, b_, k_ = operands(cfg, copy=False)
            if cfg.uses_tma:
                _, args, meta = tma_call(cfg, lambda t, block, _: ("descriptor", t.dtype, block), a_, b_, k_)
                jobs.append(("tma", tuple(x.dtype if isinstance(x, torch.Tensor) else x for x in args), meta))
                continue
            if cfg.variant == "streamk" or cfg.uses_gluon:
                continue  # (their own kernels: compiled at their first launch)
            args = pointer_args(cfg, a_, b_, k_)
            if all(x.data_ptr() % 16 == 0 for x in args if isinstance(x, torch.Tensor)):
                # (otherwise a compile for 16-byte-aligned pointers would not be the one launched)
                types = [x.dtype if isinstance(x, torch.Tensor) else x for x in args]
                if cfg.split_k > 1:  # the fp32 workspace, and the serial reduction's int32 counters
                    types[3] = torch.float32
                    types[4] = torch.int32 if cfg.variant == "splitk_serial" else c.dtype
                jobs.append(("pointer", tuple(types), gemm_meta(cfg, a_, b_, k_)))
        autotune.compile_in_parallel(_warmup_in_worker, jobs)

    layout = ("row" if a.stride(1) == 1 else "col") + ("row" if b.stride(1) == 1 else "col")
    key = autotune.ProblemKey(
        op=op, dtype=dtype, precision=input_precision or "", layout=layout, M=M, N=N, K=K,
        device=str(a.device),
    )  # fmt: skip
    autotune.run(key, launch, forced=config, precompile=precompile, ineligible=ineligible)
    return c


def _gemv_mode(cfg: GemmConfig, b: torch.Tensor) -> bool:
    """_gemm_kernel's GEMV: an fma tile of one row on a K-major B (`_gemv_partial`)."""
    return cfg.fma and cfg.block_m == 1 and b.stride(0) == 1


def _streamk_split(iterations: int, sm_count: int) -> tuple[int, int]:
    """(programs, iterations per program) of a stream-K launch: one program per SM, or fewer
    when there are fewer (tile, K step) iterations than SMs."""
    per_program = triton.cdiv(iterations, sm_count)
    return triton.cdiv(iterations, per_program), per_program


# Per (device, stream): the serial split-K's (and stream-K's) tile counters. Zero between launches (the last
# slice of each tile resets its counter), so they are allocated, zeroed, once; launches on one
# stream run one after another, and each stream has its own.
_COUNTERS: dict[tuple, torch.Tensor] = {}


def _tile_counters(device: torch.device, tiles: int) -> torch.Tensor:
    """Zeroed int32 counters for `tiles` tiles, kept for the next launches on this stream.

    Inside a CUDA-graph capture a missing buffer is allocated within the graph (zeroed in every
    replay, never kept): run the GEMM once on the capturing stream first to capture none.
    """
    stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
    key = (str(device), stream)
    buffer = _COUNTERS.get(key)
    if buffer is None or buffer.numel() < tiles:
        capturing = device.type == "cuda" and torch.cuda.is_current_stream_capturing()
        buffer = torch.zeros(max(tiles, 4096), dtype=torch.int32, device=device)
        if not capturing and not OFFLINE_COMPILE:
            _COUNTERS[key] = buffer
    return buffer


def _divisor(x: int) -> int:
    """The largest power of two <= 16 that divides `x` (a size or stride; 0 counts as 16)."""
    return math.gcd(x, 16)


# Tile of the split-K reduction pass: 64 x 64 fp32 partial sums per program.
_REDUCE_BLOCK = (64, 64)


@contextlib.contextmanager
def compile_only(sm_count: int):
    """Within this block launches compile and do not run; yields the list of compiled kernels.

    The kernels are compiled for the active Triton driver's target, with the
    same specialization a real launch on these operands would get (CPU tensors
    stand for device ones; only their dtypes, strides and alignment matter).
    `sm_count` is the persistent kernel's program count on the target chip.
    `gemmwatch resources` uses it to read registers, spills and shared memory
    of tuned configs without a GPU.
    """
    compiled: list = []
    OFFLINE_COMPILE.append((sm_count, compiled))
    try:
        yield compiled
    finally:
        OFFLINE_COMPILE.pop()


def _start(kernel, grid):
    """`kernel[grid]`, or inside compile_only() a call that compiles and records instead."""
    if not OFFLINE_COMPILE:
        return kernel[grid]

    def compile_(*args, **kwargs):
        compiled = kernel.warmup(*args, grid=grid, **kwargs)
        OFFLINE_COMPILE[-1][1].append(compiled)
        return compiled

    return compile_


# The shared memory one program may take on sm_90 (the gluon_ws launcher's check; H100 and H200 alike).
HOPPER_SMEM_PER_BLOCK = target_spec("h200").smem_per_block_bytes


def _hopper_target() -> bool:
    """Whether Triton compiles for sm_90 now (the offline driver's target inside compile_only())."""
    try:
        target = triton.runtime.driver.active.get_current_target()
    except RuntimeError:  # the interpreter: no device target
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch // 10 == 9


def _sm_count(device: torch.device) -> int:
    """Programs of the persistent kernel: one per SM (per CU) of the device."""
    if OFFLINE_COMPILE:
        return OFFLINE_COMPILE[-1][0]
    if device.type != "cuda":
        return 1
    return torch.cuda.get_device_properties(device).multi_processor_count


# Block of the pad copy: rows x contiguous columns of an aligned buffer; of a copy that
# transposes, 32 rows (128 bytes of 32-bit source read along each buffer column).
_PAD_BLOCK = (8, 256)
_TRANSPOSE_BLOCK = (32, 64)


@triton.jit
def _pad_copy_block(
    block, src, dst, src_rows, src_cols, src_stride_r, src_stride_c, dst_rows, dst_cols, dst_stride_r,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    """dst[r, c] = src[r, c] inside src's extents, 0 elsewhere, for one block of dst (dst's rows are
    16-element multiples, so its stores are whole vectors)."""
    blocks_c = tl.cdiv(dst_cols, BLOCK_C)
    r = ((block // blocks_c) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]).to(tl.int64)
    col = (block % blocks_c) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    inside = (r < src_rows) & (col < src_cols)
    values = tl.load(src + r * src_stride_r + col * src_stride_c, mask=inside, other=0.0)
    tl.store(dst + r * dst_stride_r + col, values, mask=(r < dst_rows) & (col < dst_cols))


@triton.jit
def _pad_copy_kernel(
    src0, dst0, src_rows0, src_cols0, src_stride_r0, src_stride_c0, dst_rows0, dst_cols0, dst_stride_r0, blocks0,
    src1, dst1, src_rows1, src_cols1, src_stride_r1, src_stride_c1, dst_rows1, dst_cols1, dst_stride_r1,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    """The aligned copies of a `pad` config's operands in one launch: the first `blocks0` programs
    write the first buffer, the others the second (the same operand twice when only one is copied,
    with no program past `blocks0`)."""
    pid = tl.program_id(0)
    if pid < blocks0:
        _pad_copy_block(pid, src0, dst0, src_rows0, src_cols0, src_stride_r0, src_stride_c0, dst_rows0,
                        dst_cols0, dst_stride_r0, BLOCK_R, BLOCK_C)  # fmt: skip
    else:
        _pad_copy_block(pid - blocks0, src1, dst1, src_rows1, src_cols1, src_stride_r1, src_stride_c1, dst_rows1,
                        dst_cols1, dst_stride_r1, BLOCK_R, BLOCK_C)  # fmt: skip


def _padded_k(K: int) -> int:
    """K rounded up to a multiple of 16: what a `pad` config computes over (the rest is zeros)."""
    return -(-K // 16) * 16


def _aligned(
    a: torch.Tensor, b: torch.Tensor, copy: bool = True, *, k_major_b: bool = False, only: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Operands A (M, K) and B (K, N) as a `pad` config reads them: each with K zero-extended to a
    multiple of 16 and its rows (along its contiguous dimension) starting PAD_ROW_BYTES apart, in a
    new buffer; an operand that is like that already, itself.

    Rows that are not 16-byte multiples allow neither tensor descriptors nor vector loads, rows
    that are not PAD_ROW_BYTES multiples cross cache lines in every tile's load, and a ragged K
    masks every load; a copy costs one read and one write of the operand, both copies one launch.
    `copy=False` returns the buffers uninitialised (their layout only).
    `k_major_b`: B's copy (if it needs one, or is not K-major) K-major, whatever B's layout.
    `only` ("A" or "B", as `pad_a` / `pad_b` configs read them): that operand's copy alone, K kept,
    the other operand itself (half the copy where both operands' rows are off the lines).
    """
    if only not in (None, "A", "B"):
        raise ValueError(f"_aligned: only must be None, 'A' or 'B', got {only!r}")
    views, jobs = [], []
    for name, t, k_dim, k_major in (("A", a, 1, False), ("B", b, 0, k_major_b)):
        if only not in (None, name):
            views.append(t)
            continue
        view, job = _aligned_layout(t, k_dim, pad_k=only is None, k_major=k_major, row_bytes=PAD_ROW_BYTES)
        views.append(view)
        if job:
            jobs.append(job)
    if copy:
        _copy(jobs)
    return views[0], views[1]


def _k_major(b: torch.Tensor, copy: bool = True) -> torch.Tensor:
    """B (K, N) over a K-major buffer (column-major, rows of 16-byte multiples): B itself if it is
    so already, else its copy (`copy=False`: the buffer uninitialised, its layout only)."""
    view, job = _aligned_layout(b, 0, pad_k=False, k_major=True)
    if copy and job:
        _copy([job])
    return view


def _copy(jobs: list[_PadCopy]) -> None:
    """The copies of `_aligned_layout` in one launch (an offline compile needs the layouts only).

    Each buffer written whole: the operand's values, zeros past K (they meet zeros of the other
    operand) and in the row padding (the tile kernel's loads may read it for outputs that are
    never stored; it must be finite). A copy that transposes reads the source along the buffer's
    columns: it takes squarer blocks (_TRANSPOSE_BLOCK) so that those reads are whole sectors.
    """
    if not jobs or OFFLINE_COMPILE:
        return
    block = _TRANSPOSE_BLOCK if any(job.transposes for job in jobs) else _PAD_BLOCK
    counts = [triton.cdiv(job.buffer.shape[0], block[0]) * triton.cdiv(job.buffer.shape[1], block[1]) for job in jobs]
    first, second = jobs[0], jobs[-1]
    _pad_copy_kernel[(sum(counts),)](
        *first.args, counts[0], *second.args, BLOCK_R=block[0], BLOCK_C=block[1]
    )  # fmt: skip


class _PadCopy(NamedTuple):
    """One operand's aligned copy: `_pad_copy_block`'s arguments (source, buffer, the source's
    extents and strides in the buffer's orientation, the buffer's shape and row stride), and
    whether the copy transposes (the source's rows are the buffer's columns)."""

    args: tuple
    transposes: bool

    @property
    def buffer(self) -> torch.Tensor:
        return self.args[1]


def _aligned_layout(
    t: torch.Tensor, k_dim: int, *, pad_k: bool = True, k_major: bool = False, row_bytes: int = 16
) -> tuple[torch.Tensor, _PadCopy | None]:
    """(`t` as a `pad` config reads it, its copy or None): `_aligned`'s view of one operand (`k_dim`:
    its dimension that is K) over a new buffer, or `t` itself when it needs no copy.

    `pad_k=False`: K is kept (only the rows are padded); `k_major`: the buffer's rows run along K
    (a copy is made if `t`'s do not); `row_bytes`: the buffer's rows start a multiple of that many
    bytes (and of 16 elements) apart, and an operand whose rows are not is copied."""
    K = t.shape[k_dim]
    rows_contiguous = t.stride(1) == 1 or t.stride(0) != 1
    if k_major:
        rows_contiguous = k_dim == 1  # (B's buffer is its transpose)
    leading = t.stride(0) if rows_contiguous else t.stride(1)
    if (
        (K % 16 == 0 or not pad_k)
        and (leading * t.element_size()) % row_bytes == 0
        and t.data_ptr() % 16 == 0
        and t.stride(1 if rows_contiguous else 0) == 1
    ):
        return t, None
    shape = list(t.shape)
    shape[k_dim] = _padded_k(K) if pad_k else K
    rows, cols = shape if rows_contiguous else shape[::-1]
    per_row = max(16, row_bytes // t.element_size())
    buffer = torch.empty((rows, -(-cols // per_row) * per_row), dtype=t.dtype, device=t.device)
    view = buffer[:, :cols] if rows_contiguous else buffer[:, :cols].T
    # (the copy works in the buffer's orientation: t's extents and strides in that order)
    extents = t.shape if rows_contiguous else t.shape[::-1]
    strides = t.stride() if rows_contiguous else t.stride()[::-1]
    transposes = strides[1] != 1 and strides[0] == 1
    return view, _PadCopy((t, buffer, *extents, *strides, *buffer.shape, buffer.stride(0)), transposes)


def _descriptor_block(t: torch.Tensor, cfg: GemmConfig, *, k_dim: int, k_parts: int = 1) -> tuple[list[int], bool]:
    """(block shape, transposed) of the descriptor over operand `t`: over `t` itself when it is
    row-major, else over its transpose. `k_dim` is the dimension of `t` that is K (1 for A, 0 for B);
    a K step read in `k_parts` parts has blocks of a part's K."""
    block_mn, block_k = (cfg.block_m if k_dim == 1 else cfg.block_n), cfg.block_k // k_parts
    transposed = t.stride(1) != 1  # the same test as descriptor_problem's
    along_rows_is_k = (k_dim == 1) != transposed  # the descriptor's last dimension is K
    return ([block_mn, block_k] if along_rows_is_k else [block_k, block_mn]), transposed


def row_phases(t: torch.Tensor, unit: int) -> int:
    """`targets.configs.line_phases` of row-major `t`'s rows within `unit` bytes (a config's
    `phase_unit`: a line, or half of one)."""
    return line_phases(t.stride(0) * t.element_size(), unit)


def phase_problem(a: torch.Tensor, unit: int) -> str | None:
    """Why a `phase_a` config whose offsets lie within `unit` bytes cannot take A (None if it can):
    A row-major, its rows 16-byte but not `unit` multiples apart, its row count a multiple of their
    phases (the kernel's view of A)."""
    if a.stride(1) != 1:
        return "phase_a configs are for a row-major A (its rows along K)"
    if problem := descriptor_problem(a, "A"):
        return problem
    phases = row_phases(a, unit)
    if phases == 1:
        return f"phase_a configs in {unit}-byte parts are for A's rows off {unit}-byte multiples; these start on them"
    if a.shape[0] % phases:
        return f"phase_a configs need A's rows a multiple of their {phases} phases, got {a.shape[0]}"
    return None


def _descriptor(t: torch.Tensor, block: list[int], transposed: bool):
    """A tensor descriptor over `t` (or its transpose) with tiles of `block`."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor.from_tensor(t.T if transposed else t, block)


def _warmup_in_worker(kernel: str, arg_types: tuple, meta: dict) -> None:
    """Compile (not launch) one config into Triton's on-disk cache, in a worker process."""
    if kernel == "pointer":
        _gemm_kernel.warmup(*arg_types, grid=(1,), **meta)
        return
    from triton.tools.tensor_descriptor import TensorDescriptor

    # A host scratch tensor: the compiled kernel depends on the descriptor's dtype and block
    # only, and a CUDA one would give every idle worker its own GPU context.
    args = [
        TensorDescriptor.from_tensor(torch.empty(x[2], dtype=x[1]), x[2])
        if isinstance(x, tuple) and x and x[0] == "descriptor"
        else x
        for x in arg_types
    ]
    _gemm_tma_kernel.warmup(*args, grid=(1,), **meta)
