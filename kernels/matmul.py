"""Triton GEMM with a fused epilogue: `C = act(scale_a * scale_b * (A @ B) + bias)`.

One kernel serves fp16, bf16, fp32 (tf32 or ieee, stated explicitly) and fp8
(e4m3fn / e5m2, with `torch._scaled_mm` scale semantics). The launchers
validate, allocate, pick a config (targets/ generates the space, `kernels.autotune`
chooses) and launch.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels import autotune
from kernels._validate import (
    ACTIVATIONS,
    check_bias,
    check_matrices,
    check_out,
    check_scales,
    resolve_out_dtype,
    resolve_precision,
)
from targets.configs import GemmConfig

# Activation codes shared by the launcher and the kernel (constexpr ints).
_ACT_CODES = {None: 0, "relu": 1, "gelu": 2, "silu": 3, "gelu_tanh": 4}
assert set(_ACT_CODES) == {None, *ACTIVATIONS}

# Scale modes (constexpr ints): none, one scalar for the tensor, one per row of
# A / per column of B (torch._scaled_mm's "tensorwise" and "rowwise").
_SCALE_NONE, _SCALE_TENSOR, _SCALE_VECTOR = 0, 1, 2


@triton.jit
def _gemm_kernel(
    # pointers
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
    scale_a_ptr,
    scale_b_ptr,
    # dimensions
    M,
    N,
    K,
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
    EVEN_K: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr,
    SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
    MAX_NUM_IMPRECISE_ACC: tl.constexpr,
):
    """C[M, N] = act(sa * sb * (A[M, K] @ B[K, N]) + bias[N]), fp32 accumulation.

    Programs are ordered in groups of GROUP_M rows of tiles so that consecutive
    programs share B tiles (and A tiles within a group) in L2.
    """
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Rows/columns past the edge wrap onto valid ones, so operand loads need
    # no M/N mask; the store below masks them out.
    offs_am = offs_m % M
    offs_bn = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION, max_num_imprecise_acc=MAX_NUM_IMPRECISE_ACC)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # Epilogue, in fp32 registers: scales, bias, activation, one rounding.
    if SCALE_A == 1:
        acc = acc * tl.load(scale_a_ptr)
    elif SCALE_A == 2:
        acc = acc * tl.load(scale_a_ptr + offs_am)[:, None]
    if SCALE_B == 1:
        acc = acc * tl.load(scale_b_ptr)
    elif SCALE_B == 2:
        acc = acc * tl.load(scale_b_ptr + offs_bn)[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_bn * stride_bias).to(tl.float32)
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

    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


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
    args = (
        a, b, c, bias_arg, scale_a, scale_b,
        M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        bias.stride(0) if has_bias else 0,
    )  # fmt: skip

    def meta(cfg: GemmConfig) -> dict:
        return dict(
            BLOCK_M=cfg.block_m,
            BLOCK_N=cfg.block_n,
            BLOCK_K=cfg.block_k,
            GROUP_M=cfg.group_m,
            EVEN_K=K % cfg.block_k == 0,
            HAS_BIAS=has_bias,
            ACTIVATION=_ACT_CODES[activation],
            SCALE_A=mode_a,
            SCALE_B=mode_b,
            INPUT_PRECISION=input_precision if input_precision in ("ieee", "tf32") else None,
            # fp8 on Hopper: None = Triton's default (accumulate the whole K loop
            # in the tensor cores' reduced-precision adder). Otherwise promote to
            # fp32 every 128 K elements (4 wgmma k32 steps), the promotion
            # interval of CUTLASS's fp8 GEMMs and cuBLAS without fast accumulation.
            MAX_NUM_IMPRECISE_ACC=min(cfg.block_k, 128) if fp8_precise else None,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
        )

    def launch(cfg: GemmConfig):
        grid = (triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n),)
        return _gemm_kernel[grid](*args, **meta(cfg))

    def precompile(cfgs: list[GemmConfig]) -> None:
        # Tensors travel as their dtypes: compiling needs only types, alignment and the integers.
        arg_types = tuple(x.dtype if isinstance(x, torch.Tensor) else x for x in args)
        aligned = all(x.data_ptr() % 16 == 0 for x in args if isinstance(x, torch.Tensor))
        if aligned:  # otherwise a compile for 16-byte-aligned pointers would not be the one launched
            autotune.compile_in_parallel(_warmup_in_worker, [(arg_types, meta(cfg)) for cfg in cfgs])

    layout = ("row" if a.stride(1) == 1 else "col") + ("row" if b.stride(1) == 1 else "col")
    key = autotune.ProblemKey(
        op=op, dtype=dtype, precision=input_precision or "", layout=layout, M=M, N=N, K=K,
        device=str(a.device),
    )  # fmt: skip
    autotune.run(key, launch, forced=config, precompile=precompile)
    return c


def _warmup_in_worker(arg_types: tuple, meta: dict) -> None:
    """Compile (not launch) one config into Triton's on-disk cache, in a worker process."""
    _gemm_kernel.warmup(*arg_types, grid=(1,), **meta)
