"""Prototype GEMV kernels (M = 1): y[n] = sa * sb * sum_k x[k] * B[k, n]."""

import triton
import triton.language as tl


@triton.jit
def gemv_kernel(
    x_ptr, b_ptr, c_ptr, ws_ptr, cnt_ptr, sa_ptr, sb_ptr, N, K, stride_bk, stride_bn,
    BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr, DEFER: tl.constexpr, KMAJOR: tl.constexpr,
    SCALED: tl.constexpr, UNROLL: tl.constexpr,
):  # fmt: skip
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    k_iters = tl.cdiv(K, BK)
    per = tl.cdiv(k_iters, SPLIT)
    k_lo = pid_s * per
    k_hi = min(k_lo + per, k_iters)
    if KMAJOR:  # tile (BN, BK), K contiguous
        w_ptrs = b_ptr + offs_n[:, None] * stride_bn + (k_lo * BK + offs_k)[None, :] * stride_bk
        if DEFER:
            acc = tl.zeros((BN, BK), dtype=tl.float32)
        else:
            acc = tl.zeros((BN,), dtype=tl.float32)
    else:  # tile (BK, BN), N contiguous
        w_ptrs = b_ptr + (k_lo * BK + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn
        if DEFER:
            acc = tl.zeros((BK, BN), dtype=tl.float32)
        else:
            acc = tl.zeros((BN,), dtype=tl.float32)
    x_ptrs = x_ptr + k_lo * BK + offs_k
    for _ in tl.range(k_lo, k_hi, loop_unroll_factor=UNROLL):
        w = tl.load(w_ptrs).to(tl.float32)
        x = tl.load(x_ptrs).to(tl.float32)
        if KMAJOR:
            p = w * x[None, :]
            if DEFER:
                acc += p
            else:
                acc += tl.sum(p, axis=1)
            w_ptrs += BK * stride_bk
        else:
            p = w * x[:, None]
            if DEFER:
                acc += p
            else:
                acc += tl.sum(p, axis=0)
            w_ptrs += BK * stride_bk
        x_ptrs += BK
    if DEFER:
        if KMAJOR:
            y = tl.sum(acc, axis=1)
        else:
            y = tl.sum(acc, axis=0)
    else:
        y = acc
    if SPLIT == 1:
        if SCALED:
            y = y * tl.load(sa_ptr) * tl.load(sb_ptr)
        tl.store(c_ptr + offs_n, y.to(c_ptr.dtype.element_ty))
    else:
        tl.store(ws_ptr + pid_s * N + offs_n, y)
        tl.debug_barrier()
        arrived = tl.atomic_add(cnt_ptr + pid_n, 1, sem="acq_rel", scope="gpu")
        if arrived == SPLIT - 1:
            y = tl.zeros((BN,), dtype=tl.float32)
            for s in range(SPLIT):
                y += tl.load(ws_ptr + s * N + offs_n, cache_modifier=".cg")
            if SCALED:
                y = y * tl.load(sa_ptr) * tl.load(sb_ptr)
            tl.store(c_ptr + offs_n, y.to(c_ptr.dtype.element_ty))
            tl.atomic_xchg(cnt_ptr + pid_n, 0)


def launch(x, b, out, ws, cnt, sa, sb, BN, BK, SPLIT, DEFER, warps, stages, UNROLL=1):
    K, N = b.shape
    kmajor = b.stride(0) == 1
    grid = (triton.cdiv(N, BN), SPLIT)
    return gemv_kernel[grid](
        x, b, out, ws, cnt, sa, sb, N, K, b.stride(0), b.stride(1),
        BN=BN, BK=BK, SPLIT=SPLIT, DEFER=DEFER, KMAJOR=kmajor, SCALED=sa is not None, UNROLL=UNROLL,
        num_warps=warps, num_stages=stages,
    )  # fmt: skip
