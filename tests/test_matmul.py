"""Correctness of kernels.matmul / kernels.scaled_matmul against a float64 reference.

On a CPU these run in Triton's interpreter (conftest.py); every output buffer
is poisoned with NaN before the call, so an element the kernel skips fails.
"""

import dataclasses

import pytest
import torch

import kernels
from benchmarks.cells import TOLERANCE, reference_gemm, relative_error
from targets import GemmConfig

FLOAT_DTYPES = {
    "fp16": (torch.float16, None),
    "bf16": (torch.bfloat16, None),
    "fp32-ieee": (torch.float32, "ieee"),
    "fp32-tf32": (torch.float32, "tf32"),
}
FP8 = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}

# Odd sizes: 1, primes, one past a power of two, a thousand.
SHAPES = [(1, 1, 1), (1, 7, 33), (7, 1, 129), (33, 129, 7), (129, 33, 1000), (1000, 17, 65), (64, 64, 64)]


def _poisoned(M, N, dtype, device):
    return torch.full((M, N), float("nan"), dtype=dtype, device=device)


def _randn(shape, gen, dtype, device):
    return torch.randn(*shape, generator=gen).to(dtype).to(device)


def _layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values stored row-major ("row") or column-major ("col")."""
    return t.contiguous() if layout == "row" else t.t().contiguous().t()


@pytest.mark.parametrize("dtype_name", list(FLOAT_DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_matches_float64(dtype_name, shape, device, rng):
    dtype, precision = FLOAT_DTYPES[dtype_name]
    M, N, K = shape
    a, b = _randn((M, K), rng, dtype, device), _randn((K, N), rng, dtype, device)
    out = _poisoned(M, N, dtype, device)
    result = kernels.matmul(a, b, precision=precision, out=out)
    assert result is out
    assert relative_error(result, reference_gemm(a, b)) <= TOLERANCE[dtype_name]


@pytest.mark.parametrize("dtype_name", ["fp16", "bf16", "fp32-ieee"])
@pytest.mark.parametrize("a_layout", ["row", "col"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_matmul_any_layout(dtype_name, a_layout, b_layout, device, rng):
    dtype, precision = FLOAT_DTYPES[dtype_name]
    M, N, K = 45, 70, 99
    a = _layout(_randn((M, K), rng, dtype, device), a_layout)
    b = _layout(_randn((K, N), rng, dtype, device), b_layout)
    out = _poisoned(M, N, dtype, device)
    kernels.matmul(a, b, precision=precision, out=out)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype_name]


def test_matmul_transposed_and_strided_views(device, rng):
    base_a = _randn((80, 3 * 50), rng, torch.float16, device)
    a = base_a[:, ::3]  # (80, 50), row stride 150, column stride 3
    b = _randn((60, 50), rng, torch.float16, device).t()  # (50, 60) transposed view
    out = _poisoned(80, 60, torch.float16, device)
    kernels.matmul(a, b, out=out)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def test_matmul_writes_into_a_strided_out(device, rng):
    a, b = _randn((40, 30), rng, torch.float16, device), _randn((30, 20), rng, torch.float16, device)
    big = _poisoned(20, 40, torch.float16, device)
    out = big.t()  # column-major output
    kernels.matmul(a, b, out=out)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16", "fp32-ieee"])
def test_fused_epilogue_matches_unfused_torch(activation, with_bias, dtype_name, device, rng):
    dtype, precision = FLOAT_DTYPES[dtype_name]
    M, N, K = 37, 90, 75
    a, b = _randn((M, K), rng, dtype, device), _randn((K, N), rng, dtype, device)
    bias = _randn((N,), rng, dtype, device) if with_bias else None
    out = _poisoned(M, N, dtype, device)
    kernels.matmul(a, b, bias=bias, activation=activation, precision=precision, out=out)
    ref = reference_gemm(a, b, bias=bias, activation=activation)
    fused_err = relative_error(out, ref)
    assert fused_err <= TOLERANCE[dtype_name]
    # torch's unfused act(a @ b + bias) rounds after each step; the fused
    # epilogue rounds once, so it is at least about as close to float64.
    if device == "cuda" or dtype != torch.bfloat16:  # CPU bf16 matmul is not the point here
        unfused = a @ b
        if bias is not None:
            unfused = unfused + bias
        if activation:
            unfused = _torch_act(unfused, activation)
        assert fused_err <= 1.5 * relative_error(unfused, ref) + 1e-6
        assert relative_error(out, unfused.double()) <= 2 * TOLERANCE[dtype_name]


def _torch_act(y, activation):
    f = torch.nn.functional
    return {
        "relu": f.relu,
        "gelu": f.gelu,
        "gelu_tanh": lambda x: f.gelu(x, approximate="tanh"),
        "silu": f.silu,
    }[activation](y)


def test_out_dtype_widens_the_result(device, rng):
    a, b = _randn((20, 300), rng, torch.float16, device), _randn((300, 10), rng, torch.float16, device)
    out = kernels.matmul(a, b, out_dtype=torch.float32)
    assert out.dtype == torch.float32
    # fp32 output keeps what an fp16 output would round away.
    assert relative_error(out, reference_gemm(a, b)) <= 2e-5


@pytest.mark.parametrize(
    "config",
    [
        GemmConfig(16, 16, 16, 4, 1),  # many programs, EVEN_K for K % 16 == 0
        GemmConfig(32, 64, 32, 4, 2),
        GemmConfig(64, 32, 64, 8, 3),
        GemmConfig(16, 128, 128, 4, 1),  # one K step bigger than K
    ],
    ids=str,
)
@pytest.mark.parametrize("K", [16, 100])  # K % BLOCK_K == 0 or not
def test_forced_configs_cover_edges(config, K, device, rng):
    M, N = 50, 70  # not multiples of any block
    a, b = _randn((M, K), rng, torch.float16, device), _randn((K, N), rng, torch.float16, device)
    out = _poisoned(M, N, torch.float16, device)
    kernels.matmul(a, b, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def test_grouped_ordering_covers_every_tile(device, rng):
    # More tile rows than GROUP_M (8) and a partial last group.
    M, N, K = 16 * 19, 16 * 5, 32
    a, b = _randn((M, K), rng, torch.float16, device), _randn((K, N), rng, torch.float16, device)
    out = _poisoned(M, N, torch.float16, device)
    kernels.matmul(a, b, out=out, config=GemmConfig(16, 16, 32, 4, 1, group_m=8))
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def _fp8_operands(M, N, K, dtype, rng, device, b_layout="col"):
    a = (torch.randn(M, K, generator=rng) * 2).to(dtype).to(device)
    b = _layout((torch.randn(K, N, generator=rng) * 2).to(dtype), b_layout).to(device)
    return a, b


@pytest.mark.parametrize("fp8_name", list(FP8))
@pytest.mark.parametrize("shape", [(1, 7, 33), (33, 129, 64), (100, 48, 1000)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("b_layout", ["col", "row"])
def test_scaled_matmul_tensorwise(fp8_name, shape, b_layout, device, rng):
    M, N, K = shape
    a, b = _fp8_operands(M, N, K, FP8[fp8_name], rng, device, b_layout)
    sa, sb = torch.tensor(0.25, device=device), torch.tensor(3.0, device=device)
    out = _poisoned(M, N, torch.bfloat16, device)
    kernels.scaled_matmul(a, b, sa, sb, out=out)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    assert relative_error(out, ref) <= TOLERANCE[fp8_name]


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_scaled_matmul_rowwise_with_epilogue(out_dtype, device, rng):
    M, N, K = 40, 56, 96
    a, b = _fp8_operands(M, N, K, torch.float8_e4m3fn, rng, device)
    sa = (torch.rand(M, 1, generator=rng) + 0.5).to(device)
    sb = (torch.rand(1, N, generator=rng) + 0.5).to(device)
    bias = torch.randn(N, generator=rng).to(out_dtype).to(device)
    out = _poisoned(M, N, out_dtype, device)
    kernels.scaled_matmul(a, b, sa, sb, bias=bias, activation="silu", out_dtype=out_dtype, out=out)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb, bias=bias, activation="silu")
    assert relative_error(out, ref) <= (1e-5 if out_dtype == torch.float32 else TOLERANCE["fp8_e4m3"])


def test_selection_is_recorded(device, rng):
    a, b = _randn((24, 40), rng, torch.float16, device), _randn((40, 56), rng, torch.float16, device)
    kernels.matmul(a, b)
    recorded = [s.as_dict() for s in kernels.autotune.selections() if s.key.M == 24 and s.key.N == 56]
    assert recorded, "the chosen config must be reported"
    assert recorded[0]["layout"] == "rowrow" and recorded[0]["dtype"] == "fp16"
    assert recorded[0]["method"] in ("timed", "ranked")


# One config of each kernel variant, small enough for the interpreter.
VARIANT_CONFIGS = [
    GemmConfig(32, 32, 32, 4, 2),
    GemmConfig(16, 32, 16, 4, 2, variant="splitk", split_k=3),  # K slices of unequal length (K=72: 2+2+1 steps)
    GemmConfig(16, 32, 16, 4, 2, variant="splitk_serial", split_k=3),  # the same, summed by each tile's last slice
    GemmConfig(16, 32, 16, 4, 2, variant="streamk"),  # (one program in the interpreter: see the stream-K test)
    GemmConfig(64, 32, 32, 4, 2, variant="tma"),  # tiles larger than M: descriptor loads zero-fill
    GemmConfig(64, 64, 32, 4, 2, variant="tma_ws"),  # warp specialization: a compiler matter, same results
    GemmConfig(64, 32, 32, 4, 2, variant="tma_store"),  # C through a descriptor: clipped at the edges
]


# fp8 dots need K steps of >= 32 on a GPU (the candidate space never offers less).
FP8_VARIANT_CONFIGS = [dataclasses.replace(c, block_k=max(c.block_k, 32)) for c in VARIANT_CONFIGS]
# ... each also promoting each K step's partial sum late (precise fp8 accumulation).
FP8_VARIANT_CONFIGS += [dataclasses.replace(c, late_promotion=True) for c in FP8_VARIANT_CONFIGS]


# The variants as they are (16-byte-aligned rows, for tma, but sizes not multiples of the blocks),
# and on aligned copies of the operands ("pad": no row a 16-byte multiple in any layout, K not a
# multiple of 16).
PAD_CONFIGS = [dataclasses.replace(c, pad=True) for c in VARIANT_CONFIGS]
LAYOUT_CASES = [(c, (40, 48, 72)) for c in VARIANT_CONFIGS] + [(c, (37, 45, 71)) for c in PAD_CONFIGS]


@pytest.mark.parametrize(
    ("config", "shape"), LAYOUT_CASES, ids=lambda x: str(x) if isinstance(x, GemmConfig) else "x".join(map(str, x))
)
@pytest.mark.parametrize("a_layout", ["row", "col"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("dtype_name", ["fp16", "fp32-ieee"])
def test_every_variant_any_layout(config, shape, a_layout, b_layout, dtype_name, device, rng):
    dtype, precision = FLOAT_DTYPES[dtype_name]
    M, N, K = shape
    a = _layout(_randn((M, K), rng, dtype, device), a_layout)
    b = _layout(_randn((K, N), rng, dtype, device), b_layout)
    a_before, b_before = a.clone(), b.clone()
    out = _poisoned(M, N, dtype, device)
    kernels.matmul(a, b, precision=precision, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype_name]
    assert kernels.autotune.last().config == config
    assert torch.equal(a, a_before) and torch.equal(b, b_before)  # pad copies the operands, never edits them


# One operand on an aligned copy, the other as it is (pad_a, pad_b): rows of 80-144 bytes in any
# layout, 16-byte multiples (for tma) but not PAD_ROW_BYTES ones, K (72) kept.
ONE_PAD_CONFIGS = [dataclasses.replace(c, **{flag: True}) for flag in ("pad_a", "pad_b") for c in VARIANT_CONFIGS]


@pytest.mark.parametrize("config", ONE_PAD_CONFIGS, ids=str)
@pytest.mark.parametrize("a_layout", ["row", "col"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_one_operand_on_an_aligned_copy(config, a_layout, b_layout, device, rng):
    from targets.configs import PAD_ROW_BYTES

    M, N, K = 40, 48, 72
    a = _layout(_randn((M, K), rng, torch.float16, device), a_layout)
    b = _layout(_randn((K, N), rng, torch.float16, device), b_layout)
    a_before, b_before = a.clone(), b.clone()
    out = _poisoned(M, N, torch.float16, device)
    kernels.matmul(a, b, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]
    assert kernels.autotune.last().config == config
    assert torch.equal(a, a_before) and torch.equal(b, b_before)
    from kernels.matmul import _aligned

    copied, other = (a, b) if config.pad_a else (b, a)
    views = _aligned(a, b, only="A" if config.pad_a else "B")
    view, same = views if config.pad_a else views[::-1]
    assert same is other and view.shape == copied.shape  # K kept, the other operand itself
    leading = view.stride(0) if view.stride(1) == 1 else view.stride(1)
    assert view.data_ptr() != copied.data_ptr() and (leading * view.element_size()) % PAD_ROW_BYTES == 0
    assert torch.equal(view, copied)


# Tiles of A's rows of one offset within a part of a line (phase_a): rows 16-byte but not line
# multiples apart, each tile's K loop started early at a negative K (zero-filled) and its K steps
# read in parts of 64 bytes (fp16: one part of a 32-wide step, two of a 64-wide one, four of a
# 128-wide one; the odd parts into a second accumulator where it fits) or, on whole lines, in one,
# every output row written once.
PHASE_CONFIGS = [
    GemmConfig(64, 32, 32, 4, 2, variant="tma", phase_a=True),
    GemmConfig(64, 64, 64, 4, 3, variant="tma", phase_a=True),
    GemmConfig(64, 32, 128, 4, 2, variant="tma", phase_a=True),
    GemmConfig(128, 128, 64, 4, 2, variant="tma", phase_a=True),  # (two parts into one accumulator)
    GemmConfig(64, 32, 64, 4, 2, variant="tma", phase_a=True, pad_b=True),
    GemmConfig(64, 32, 32, 4, 2, variant="tma_ws", phase_a=True),
]


@pytest.mark.parametrize("config", PHASE_CONFIGS, ids=str)
@pytest.mark.parametrize(
    "shape",
    [(48, 40, 1000), (136, 72, 72), (8, 40, 200), (200, 64, 1000)],  # rows 2000 / 144 / 400 bytes
    ids=lambda s: "x".join(map(str, s)),
)
@pytest.mark.parametrize("half_lines", [False, True], ids=["lines", "half-lines"])
def test_phase_tiles_read_a_from_each_rows_line_offset(config, shape, half_lines, device, rng):
    from kernels.matmul import row_phases

    config = dataclasses.replace(config, half_lines=half_lines)
    M, N, K = shape
    a, b = _randn((M, K), rng, torch.float16, device), _randn((K, N), rng, torch.float16, device)
    # rows start 0, 16, 32, ... bytes into a part of a line: 4 offsets in 64 bytes, 8 in 128
    assert row_phases(a, config.phase_unit) == (4 if half_lines else 8)
    out = _poisoned(M, N, torch.float16, device)
    kernels.matmul(a, b, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]
    assert kernels.autotune.last().config == config


@pytest.mark.parametrize("half_lines", [False, True], ids=["lines", "half-lines"])
def test_phase_tiles_on_an_offset_base_with_the_epilogue_and_fp8(half_lines, device, rng):
    from kernels.matmul import row_phases

    config = GemmConfig(64, 32, 64, 4, 2, variant="tma", phase_a=True, half_lines=half_lines)
    # A's first row 16 bytes past a line (a view into a buffer), rows 1040 bytes apart: 8 offsets in a
    # line, 4 in a half line
    base = _randn((64 * 521 + 8,), rng, torch.float16, device)
    a = base[8:].view(64, 521)[:, :520]
    assert a.stride(0) == 521 and row_phases(a, config.phase_unit) == config.phase_unit // 2  # (no descriptor)
    a = base[8 : 8 + 64 * 520].view(64, 520)
    b = _randn((520, 40), rng, torch.float16, device)
    bias = _randn((40,), rng, torch.float16, device)
    out = _poisoned(64, 40, torch.float16, device)
    kernels.matmul(a, b, bias=bias, activation="gelu", out=out, config=config)
    assert relative_error(out, reference_gemm(a, b, bias=bias, activation="gelu")) <= TOLERANCE["fp16"]
    fa, fb = _fp8_operands(40, 48, 1040, torch.float8_e4m3fn, rng, device)  # rows 1040 bytes apart
    sa, sb = torch.tensor(0.25, device=device), torch.tensor(3.0, device=device)
    for cfg in (config, dataclasses.replace(config, block_k=128)):  # (in 64-byte parts: 1 and 2 a step)
        out = _poisoned(40, 48, torch.bfloat16, device)
        kernels.scaled_matmul(fa, fb, sa, sb, out=out, config=cfg)
        assert relative_error(out, reference_gemm(fa, fb, scale_a=sa, scale_b=sb)) <= TOLERANCE["fp8_e4m3"]


@pytest.mark.parametrize("half_lines", [False, True], ids=["lines", "half-lines"])
def test_phase_tiles_refuse_what_they_cannot_read_by_name(half_lines, device, rng):
    config = GemmConfig(64, 32, 32, 4, 2, variant="tma", phase_a=True, half_lines=half_lines)
    b = _randn((1000, 32), rng, torch.float16, device)
    phases = config.phase_unit // 16  # (rows 2000 bytes apart)
    for a, why in (
        (_randn((50, 1000), rng, torch.float16, device), f"A's rows a multiple of their {phases} phases, got 50"),
        (_randn((48, 1024), rng, torch.float16, device)[:, :1000], "start on them"),  # rows 2048 bytes apart
        (_layout(_randn((48, 1000), rng, torch.float16, device), "col"), "row-major A"),
        (_randn((48, 1001), rng, torch.float16, device)[:, :1000], "leading stride 1001"),
        # rows 2112 bytes apart: 2 offsets within a line, 1 within a half line
        *([(_randn((48, 1056), rng, torch.float16, device)[:, :1000], "64-byte multiples; these")] * half_lines),
    ):
        with pytest.raises(ValueError, match=why):
            kernels.matmul(a, b, config=config)


@pytest.mark.parametrize("config", VARIANT_CONFIGS, ids=str)
@pytest.mark.parametrize("activation", ["gelu", "silu"])
def test_every_variant_fuses_the_epilogue(config, activation, device, rng):
    M, N, K = 33, 64, 96
    a, b = _randn((M, K), rng, torch.bfloat16, device), _randn((K, N), rng, torch.bfloat16, device)
    bias = _randn((N,), rng, torch.bfloat16, device)
    out = _poisoned(M, N, torch.bfloat16, device)
    kernels.matmul(a, b, bias=bias, activation=activation, out=out, config=config)
    ref = reference_gemm(a, b, bias=bias, activation=activation)
    assert relative_error(out, ref) <= TOLERANCE["bf16"]


def _fp8_scales(scaling, M, N, rng, device):
    """torch._scaled_mm's scales: one each ("tensorwise"), or per row of A and column of B ("rowwise")."""
    if scaling == "tensorwise":
        return torch.tensor(0.25, device=device), torch.tensor(3.0, device=device)
    return (torch.rand(M, 1, generator=rng) + 0.5).to(device), (torch.rand(1, N, generator=rng) + 0.5).to(device)


@pytest.mark.parametrize("config", FP8_VARIANT_CONFIGS, ids=str)
@pytest.mark.parametrize("scaling", ["tensorwise", "rowwise"])
def test_every_variant_scaled_fp8(config, scaling, device, rng):
    M, N, K = 40, 48, 96
    a, b = _fp8_operands(M, N, K, torch.float8_e4m3fn, rng, device)
    sa, sb = _fp8_scales(scaling, M, N, rng, device)
    out = _poisoned(M, N, torch.bfloat16, device)
    kernels.scaled_matmul(a, b, sa, sb, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b, scale_a=sa, scale_b=sb)) <= TOLERANCE["fp8_e4m3"]


@pytest.mark.parametrize("config", [dataclasses.replace(c, pad=True) for c in FP8_VARIANT_CONFIGS], ids=str)
def test_every_variant_on_aligned_copies_scaled_fp8_with_epilogue(config, device, rng):
    M, N, K = 33, 47, 100
    a, b = _fp8_operands(M, N, K, torch.float8_e4m3fn, rng, device)
    sa = (torch.rand(M, 1, generator=rng) + 0.5).to(device)
    sb = (torch.rand(1, N, generator=rng) + 0.5).to(device)
    bias = _randn((N,), rng, torch.bfloat16, device)
    out = _poisoned(M, N, torch.bfloat16, device)
    kernels.scaled_matmul(a, b, sa, sb, bias=bias, activation="silu", out=out, config=config)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb, bias=bias, activation="silu")
    assert relative_error(out, ref) <= TOLERANCE["fp8_e4m3"]


# The decode paths, whole and split K (unequal slices): tiles of 1-4 rows summed on the CUDA cores
# (fma), and 16-32 row tiles computed transposed, B^T @ A^T, for Hopper's warpgroup MMA (swap-AB).
# One-row fma tiles on a K-major B take the GEMV form (`_gemv_partial`); split 3 of 4 K steps leaves
# the last slice none.
FMA_CONFIGS = [
    GemmConfig(1, 32, 32, 4, 2, fma=True),
    GemmConfig(4, 64, 32, 4, 1, fma=True),
    GemmConfig(2, 32, 32, 4, 2, variant="splitk", split_k=3, fma=True),
    GemmConfig(4, 32, 32, 4, 2, variant="splitk_serial", split_k=3, fma=True),
    GemmConfig(1, 32, 32, 4, 1, variant="splitk_serial", split_k=3, fma=True),
    GemmConfig(1, 16, 64, 4, 2, variant="splitk", split_k=2, fma=True),
]
SWAP_CONFIGS = [
    GemmConfig(16, 64, 32, 4, 2, swap_ab=True),
    GemmConfig(32, 64, 32, 4, 1, variant="splitk", split_k=3, swap_ab=True),
    GemmConfig(16, 64, 32, 4, 2, variant="splitk_serial", split_k=3, swap_ab=True),
    GemmConfig(64, 64, 32, 4, 2, swap_ab=True),  # (tiles of up to SWAP_MAX_M rows: the 128-row cells')
]
DECODE_CONFIGS = FMA_CONFIGS + SWAP_CONFIGS

# Swap-AB in the persistent TMA kernel: B's columns the warpgroup MMA's rows, the operand tiles by
# descriptor (rows of 16-byte multiples; K not a multiple of the step: the descriptors zero-fill).
TMA_SWAP_CONFIGS = [
    GemmConfig(16, 64, 32, 4, 2, variant="tma", swap_ab=True),
    GemmConfig(32, 64, 64, 4, 3, variant="tma", swap_ab=True),
    GemmConfig(64, 64, 32, 4, 2, variant="tma", swap_ab=True),
]


@pytest.mark.parametrize("config", DECODE_CONFIGS, ids=str)
@pytest.mark.parametrize("M", [1, 3, 17])  # (17 rows: several row tiles of every config)
@pytest.mark.parametrize("layouts", [("row", "row"), ("col", "col")], ids="-".join)
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
def test_decode_configs_any_layout(config, M, layouts, dtype_name, device, rng):
    dtype, _ = FLOAT_DTYPES[dtype_name]
    N, K = 75, 100  # (neither a multiple of the blocks: masked edges, K not even)
    a = _layout(_randn((M, K), rng, dtype, device), layouts[0])
    b = _layout(_randn((K, N), rng, dtype, device), layouts[1])
    out = _poisoned(M, N, dtype, device)
    kernels.matmul(a, b, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype_name]
    assert kernels.autotune.last().config == config


@pytest.mark.parametrize("config", TMA_SWAP_CONFIGS, ids=str)
@pytest.mark.parametrize("M", [1, 8, 40])  # (40 rows: several row tiles; 8: 16-byte columns of A)
@pytest.mark.parametrize("layouts", [("row", "row"), ("col", "col")], ids="-".join)
def test_swap_ab_in_the_tma_kernel_any_layout(config, M, layouts, device, rng):
    N, K = 136, 104
    a = _layout(_randn((M, K), rng, torch.float16, device), layouts[0])
    b = _layout(_randn((K, N), rng, torch.float16, device), layouts[1])
    out = _poisoned(M, N, torch.float16, device)
    kernels.matmul(a, b, out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]
    assert kernels.autotune.last().config == config


def test_one_row_fma_tiles_on_a_k_major_b_take_the_gemv_form():
    from kernels.matmul import _gemv_mode

    k_major, n_major = torch.empty(64, 32).t(), torch.empty(32, 64)
    one_row, two_stages = GemmConfig(1, 32, 32, 4, 1, fma=True), GemmConfig(1, 32, 32, 4, 2, fma=True)
    assert _gemv_mode(one_row, k_major) and _gemv_mode(two_stages, k_major)
    assert not _gemv_mode(one_row, n_major)  # (the rows' 3-D form: faster there on the H200)
    assert not _gemv_mode(GemmConfig(2, 32, 32, 4, 2, fma=True), k_major)
    assert not _gemv_mode(GemmConfig(16, 32, 32, 4, 2), k_major)


@pytest.mark.parametrize(
    "config",
    [*DECODE_CONFIGS, dataclasses.replace(SWAP_CONFIGS[2], late_promotion=True), *TMA_SWAP_CONFIGS,
     dataclasses.replace(TMA_SWAP_CONFIGS[0], late_promotion=True)],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("scaling", ["tensorwise", "rowwise"])
def test_decode_configs_scaled_fp8_with_epilogue(config, scaling, device, rng):
    M, N, K = 3, 80, 96
    a, b = _fp8_operands(M, N, K, torch.float8_e4m3fn, rng, device)
    sa, sb = _fp8_scales(scaling, M, N, rng, device)
    bias = _randn((N,), rng, torch.bfloat16, device)
    out = _poisoned(M, N, torch.bfloat16, device)
    kernels.scaled_matmul(a, b, sa, sb, bias=bias, activation="gelu", out=out, config=config)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb, bias=bias, activation="gelu")
    assert relative_error(out, ref) <= TOLERANCE["fp8_e4m3"]


@pytest.mark.parametrize(
    ("config", "message"),
    [(FMA_CONFIGS[0], "fma configs are for 16- and 8-bit operands"),
     (SWAP_CONFIGS[0], "swap-AB configs are for 16- and 8-bit operands")],
    ids=str,
)  # fmt: skip
def test_decode_configs_are_refused_for_fp32_operands(config, message, device, rng):
    a, b = _randn((1, 32), rng, torch.float32, device), _randn((32, 64), rng, torch.float32, device)
    for precision in ("ieee", "tf32"):
        with pytest.raises(ValueError, match=message):
            kernels.matmul(a, b, precision=precision, config=config)


def test_aligned_copies_pad_rows_and_zero_extend_k(device, rng):
    from kernels.matmul import _aligned

    a = _randn((5, 70), rng, torch.float16, device)  # rows of 140 bytes, K = 70
    b_col = _randn((30, 70), rng, torch.float16, device).T  # (K, N) = (70, 30), column-major
    padded_a, padded_b = _aligned(a, b_col)  # both copied, in one launch
    # (K zero-extended to 80, the rows 128 elements = 256 bytes apart: PAD_ROW_BYTES multiples)
    assert padded_a.shape == (5, 80) and padded_a.stride() == (128, 1)
    assert torch.equal(padded_a[:, :70], a) and not padded_a[:, 70:].any()
    assert padded_b.shape == (80, 30) and padded_b.stride() == (1, 128)  # columns of K, padded to 80
    assert torch.equal(padded_b[:70], b_col) and not padded_b[70:].any()
    aligned = _randn((8, 64), rng, torch.float16, device)  # rows of 128 bytes
    assert _aligned(aligned, aligned.T)[0] is aligned  # nothing to pad: no copy


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_aligned_copies_rows_start_on_line_multiples(device, rng, dtype):
    """Rows that are 16-byte multiples but not PAD_ROW_BYTES ones (1000 wide: 2000 bytes in fp16)
    are copied too, onto rows PAD_ROW_BYTES apart; the product on them is the operands'."""
    from kernels.matmul import _aligned
    from targets.configs import PAD_ROW_BYTES

    a = _randn((24, 40), rng, dtype, device)  # K = 40: rows of 80 / 160 bytes, 16-byte multiples
    b = _randn((40, 24), rng, dtype, device)
    padded_a, padded_b = _aligned(a, b)
    for view, t in ((padded_a, a), (padded_b, b)):
        assert view.data_ptr() != t.data_ptr() and (view.stride(0) * view.element_size()) % PAD_ROW_BYTES == 0
        assert torch.equal(view[: t.shape[0], : t.shape[1]], t) and not view[t.shape[0] :].any()
    config = GemmConfig(16, 16, 16, 1, 2, pad=True)
    assert relative_error(kernels.matmul(a, b, config=config), reference_gemm(a, b)) < 1e-2


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_aligned_copy_fills_the_whole_buffer(device, rng, dtype):
    """The pad copy over several blocks each way: values where the operand is, zeros in the K
    extension and in the row padding past the view (read by tile loads, never stored); both
    operands in the one launch, B alone, A alone."""
    from kernels.matmul import _PAD_BLOCK, _aligned

    def check(view: torch.Tensor, t: torch.Tensor) -> None:
        rows, stride = view.shape[0], view.stride(0)  # the row-major buffer under the view
        assert view.stride(1) == 1 and stride % 16 == 0
        expected = torch.zeros((rows, stride), dtype=dtype, device=device)
        expected[: t.shape[0], : t.shape[1]] = t
        assert torch.equal(torch.as_strided(view, (rows, stride), (stride, 1)), expected)

    M, K, N = 2 * _PAD_BLOCK[0] + 3, 3 * _PAD_BLOCK[0] + 5, _PAD_BLOCK[1] + 37  # none a multiple of 16
    a = _randn((M, K), rng, dtype, device)
    b = _randn((K, 2 * N), rng, dtype, device)[:, ::2]  # not contiguous: the copy reads through the strides
    padded_a, padded_b = _aligned(a, b)
    assert padded_a.shape == (M, -(-K // 16) * 16) and padded_b.shape == (-(-K // 16) * 16, N)
    check(padded_a, a)
    check(padded_b, b)
    a64 = _randn((M, 64), rng, dtype, device)
    b64 = _randn((64, N), rng, dtype, device)
    same_a, padded_b = _aligned(a64, b64)  # only B's rows need it
    assert same_a is a64
    check(padded_b, b64)
    a_rows = _randn((M, 70), rng, dtype, device)[:, :64]  # rows 70 elements apart: not 16-byte multiples
    b_aligned = _randn((64, 64), rng, dtype, device)  # rows of 128 / 256 bytes
    padded_a, same_b = _aligned(a_rows, b_aligned)  # only A's
    assert same_b is b_aligned and padded_a.stride(0) == 64
    check(padded_a, a_rows)


def test_k_major_copy_of_b(device, rng):
    """kmajor_b's copy: B (K, N) over a column-major buffer whose columns (K long) are 16-byte
    multiples, K itself kept, zeros in the padding; several blocks each way, B read through any
    strides; a B that is K-major and aligned already is not copied."""
    from kernels.matmul import _TRANSPOSE_BLOCK, _k_major

    K, N = 2 * _TRANSPOSE_BLOCK[1] + 5, 3 * _TRANSPOSE_BLOCK[0] + 7
    for b in (
        _randn((K, N), rng, torch.float32, device),
        _randn((K, 2 * N), rng, torch.float32, device)[:, ::2],  # neither dimension contiguous
    ):
        view = _k_major(b)
        assert view.shape == (K, N) and view.stride() == (1, -(-K // 16) * 16)
        assert torch.equal(view, b)
        buffer = torch.as_strided(view, (N, view.stride(1)), (view.stride(1), 1))
        assert not buffer[:, K:].any()
    kmajor = _layout(_randn((64, 48), rng, torch.float32, device), "col")
    assert _k_major(kmajor) is kmajor


@pytest.mark.parametrize(
    "config",
    [
        GemmConfig(64, 32, 32, 4, 2, variant="tma", kmajor_b=True),
        GemmConfig(64, 64, 32, 4, 2, variant="tma_store", kmajor_b=True),
        GemmConfig(64, 32, 32, 4, 2, variant="tma", pad=True, kmajor_b=True),
    ],
    ids=str,
)
@pytest.mark.parametrize("shape", [(64, 96, 80), (70, 40, 52), (33, 129, 1000)], ids=lambda s: "x".join(map(str, s)))
def test_kmajor_b_configs_compute_tf32_on_a_row_major_b(config, shape, device, rng):
    M, N, K = shape
    a, b = _randn((M, K), rng, torch.float32, device), _randn((K, N), rng, torch.float32, device)
    out = _poisoned(M, N, torch.float32, device)
    kernels.matmul(a, b, precision="tf32", out=out, config=config)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp32-tf32"]


def test_kmajor_b_configs_are_refused_where_they_do_nothing(device, rng):
    config = GemmConfig(64, 32, 32, 4, 2, variant="tma", kmajor_b=True)
    a, b = _randn((64, 64), rng, torch.float32, device), _randn((64, 64), rng, torch.float32, device)
    with pytest.raises(ValueError, match="this B is K-major already"):
        kernels.matmul(a, _layout(b, "col"), precision="tf32", config=config)
    with pytest.raises(ValueError, match="ieee fp32 has none"):
        kernels.matmul(a, b, precision="ieee", config=config)
    with pytest.raises(ValueError, match="reads 16-bit B either way"):
        kernels.matmul(a.half(), b.half(), config=config)


def test_split_k_is_deterministic(device, rng):
    # The slices are summed in a fixed order by a second pass (no atomics): same bits every call.
    a, b = _randn((24, 1000), rng, torch.float16, device), _randn((1000, 40), rng, torch.float16, device)
    config = GemmConfig(16, 32, 32, 4, 2, variant="splitk", split_k=8)
    first = kernels.matmul(a, b, config=config).clone()
    assert torch.equal(kernels.matmul(a, b, config=config), first)
    assert relative_error(first, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def test_serial_split_k_gives_the_second_pass_bits_and_leaves_its_counters_zero(device, rng):
    from kernels.matmul import _COUNTERS

    a, b = _randn((40, 1000), rng, torch.bfloat16, device), _randn((1000, 72), rng, torch.bfloat16, device)
    bias = _randn((72,), rng, torch.bfloat16, device)
    two_pass = GemmConfig(16, 32, 32, 4, 2, variant="splitk", split_k=8)
    serial = GemmConfig(16, 32, 32, 4, 2, variant="splitk_serial", split_k=8)
    expected = kernels.matmul(a, b, bias=bias, activation="gelu", config=two_pass).clone()
    for _ in range(2):  # the counters are reused: the second call must find them zero again
        assert torch.equal(kernels.matmul(a, b, bias=bias, activation="gelu", config=serial), expected)
    assert _COUNTERS and all(not buffer.any() for buffer in _COUNTERS.values())


@pytest.mark.parametrize("programs", [1, 4, 11, 64])
def test_stream_k_deals_every_iteration_out_once_whatever_the_program_count(programs, device, rng, monkeypatch):
    import sys

    import kernels.matmul
    from kernels.matmul import _COUNTERS

    matmul_module = sys.modules["kernels.matmul"]
    monkeypatch.setattr(matmul_module, "_sm_count", lambda device: programs)
    # 3 x 2 tiles of 16 x 32, 5 K steps each: 30 iterations for 1 program (all of them), 4 or
    # 11 (ranges of 8 or 3 iterations, so tiles split unevenly between 2 or 3 programs) or 64
    # (one iteration each: 30 programs, every tile summed from 5).
    a, b = _randn((40, 70), rng, torch.float16, device), _randn((70, 64), rng, torch.float16, device)
    bias = _randn((64,), rng, torch.float16, device)
    config = GemmConfig(16, 32, 16, 4, 2, variant="streamk")
    out = kernels.matmul(a, b, bias=bias, activation="silu", config=config)
    assert relative_error(out, reference_gemm(a, b, bias=bias, activation="silu")) <= TOLERANCE["fp16"]
    assert torch.equal(kernels.matmul(a, b, bias=bias, activation="silu", config=config), out)  # counters reset
    assert all(not buffer.any() for buffer in _COUNTERS.values())


def test_tma_store_falls_back_to_pointer_stores_for_an_output_a_descriptor_cannot_take(device, rng):
    a, b = _randn((40, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device)
    config = GemmConfig(64, 32, 32, 4, 2, variant="tma_store")
    column_major = torch.full((48, 40), float("nan"), dtype=torch.float16, device=device).T
    kernels.matmul(a, b, out=column_major, config=config)
    assert relative_error(column_major, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def test_tma_variant_refuses_unaligned_operands_by_name(device, rng):
    a, b = _randn((40, 70), rng, torch.float16, device), _randn((70, 45), rng, torch.float16, device)
    with pytest.raises(ValueError, match=r"tma cannot run this problem: A's leading stride 70 .*16 bytes"):
        kernels.matmul(a, b, config=GemmConfig(64, 32, 32, 4, 2, variant="tma"))
    # a copy of one operand answers for that one only
    b_rows = _randn((70, 45), rng, torch.float16, device)  # rows of 90 bytes
    a_rows = _randn((40, 64), rng, torch.float16, device)  # rows of 128 bytes
    with pytest.raises(ValueError, match=r"B's leading stride 45") as refused:
        kernels.matmul(a_rows, b_rows[:64], config=GemmConfig(64, 32, 32, 4, 2, variant="tma", pad_a=True))
    assert "A's" not in str(refused.value)
    with pytest.raises(ValueError, match=r"A's leading stride 70") as refused:
        kernels.matmul(a, b_rows, config=GemmConfig(64, 32, 32, 4, 2, variant="tma", pad_b=True))
    assert "B's" not in str(refused.value)
    out = kernels.matmul(a_rows, b_rows[:64], config=GemmConfig(64, 32, 32, 4, 2, variant="tma", pad_b=True))
    assert relative_error(out, reference_gemm(a_rows, b_rows[:64])) <= TOLERANCE["fp16"]


def test_a_remembered_tma_choice_falls_back_to_its_tile_on_unaligned_operands(device, rng, monkeypatch):
    from kernels import autotune

    aligned = _randn((40, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device)
    kernels.matmul(*aligned)  # the bucket's choice is made (and cached) on aligned operands
    chosen = GemmConfig(64, 32, 32, 4, 2, variant="tma")
    cached = autotune._CACHE[autotune.last().key.cache_key()]
    monkeypatch.setattr(cached, "config", chosen)
    launched = []
    real = autotune._runnable
    monkeypatch.setattr(autotune, "_runnable", lambda cfg, *rest: launched.append(real(cfg, *rest)) or launched[-1])
    a, b = _randn((40, 63), rng, torch.float16, device), _randn((63, 48), rng, torch.float16, device)
    out = kernels.matmul(a, b)  # the same bucket, but 63-element rows cannot be a descriptor
    assert launched == [GemmConfig(64, 32, 32, 4, 2)]
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


@pytest.mark.parametrize(
    "chosen",
    [
        GemmConfig(64, 32, 32, 4, 3, variant="gluon_ws", extra_n=8),
        GemmConfig(64, 32, 32, 4, 3, variant="gluon_ws", stream_k=True),
        GemmConfig(64, 32, 32, 4, 3, variant="gluon_ws", cluster_n=2),
        GemmConfig(64, 32, 32, 4, 3, variant="tma", kmajor_b=True),
        GemmConfig(64, 32, 32, 4, 3, variant="tma", phase_a=True),
        GemmConfig(64, 32, 32, 4, 3, variant="tma", phase_a=True, half_lines=True),
    ],
    ids=str,
)
def test_a_remembered_choice_these_operands_refuse_falls_back_to_a_plain_tile(device, rng, monkeypatch, chosen):
    from kernels import autotune

    a, b = _randn((40, 63), rng, torch.float16, device), _randn((63, 48), rng, torch.float16, device)
    kernels.matmul(a, b)  # the bucket's choice is made (and cached)
    monkeypatch.setattr(autotune._CACHE[autotune.last().key.cache_key()], "config", chosen)
    launched = []
    real = autotune._runnable
    monkeypatch.setattr(autotune, "_runnable", lambda cfg, *rest: launched.append(real(cfg, *rest)) or launched[-1])
    out = kernels.matmul(a, b)  # (unaligned rows: no descriptor; and off Hopper no Gluon kernel)
    assert launched == [GemmConfig(64, 32, 32, 4, 3)]
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


def test_a_fresh_search_times_with_the_callers_timer_and_records_what_defeats_it():
    from kernels import autotune
    from targets import GemmConfig

    configs = [GemmConfig(64, 64, 32, 4, 2), GemmConfig(32, 32, 32, 4, 2), GemmConfig(16, 16, 32, 4, 2)]
    launched = []

    def timer(fn):
        fn()
        cfg = launched[-1]
        if cfg.block_m == 16:
            raise RuntimeError("operation not permitted when stream is capturing")
        return {64: 0.02, 32: 0.01}[cfg.block_m]

    key = autotune.ProblemKey(op="matmul", dtype="fp16", precision="", layout="rowrow", M=64, N=64, K=64, device="cpu")
    sel = autotune._time_candidates(key, "cpu-interpreter", configs, launched.append, None, timer)
    assert sel.config == configs[1] and sel.method == "timed"
    assert sel.timings_ms == {str(configs[0]): 0.02, str(configs[1]): 0.01}
    assert sel.failed == {str(configs[2]): "timing: RuntimeError: operation not permitted when stream is capturing"}
    with pytest.raises(ValueError, match="candidates must be a positive int"):
        with autotune.fresh_search(0, timer=timer):
            pass
    # none ran: the error names each config and why, and carries them for the tune's negative results
    with pytest.raises(autotune.NoCandidateRan, match="BM16-BN16-BK32.*timing: RuntimeError") as err:
        autotune._time_candidates(key, "cpu-interpreter", configs[2:], launched.append, None, timer,
                                  refused={"BM8-BN8-BK8-w1-s1-g8": "refused: too small"})  # fmt: skip
    assert err.value.failed == {
        "BM8-BN8-BK8-w1-s1-g8": "refused: too small",
        str(configs[2]): "timing: RuntimeError: operation not permitted when stream is capturing",
    }
    with pytest.raises(autotune.NoCandidateRan, match="there were none"):
        autotune._time_candidates(key, "cpu-interpreter", [], launched.append, None, timer)


def test_refused_candidates_do_not_take_places_among_the_first(monkeypatch):
    """An autotune times the first MAX_CONFIGS candidates these operands can take: fp32's kmajor_b
    twins, refused for ieee precision, leave their places to the next ones."""
    from kernels import autotune
    from targets import MAX_CONFIGS, candidate_configs, get

    monkeypatch.setenv("GEMMWATCH_TUNED", "0")  # the target's order (the H200 library's rankings reorder it)

    h200 = get("h200")
    key = autotune.ProblemKey(
        op="matmul", dtype="fp32", precision="ieee", layout="rowrow", M=4096, N=4096, K=4096, device="cuda"
    )
    first = candidate_configs(h200, "fp32", 4096, 4096, 4096)
    assert any(c.kmajor_b for c in first)
    eligible = autotune._eligible_candidates(h200, key, lambda c: "ieee" if c.kmajor_b else None)
    assert len(eligible) == MAX_CONFIGS and not any(c.kmajor_b for c in eligible)
    assert eligible[: len(first)] != first and eligible[0] == first[0]
    assert autotune._eligible_candidates(h200, key, lambda c: None) == first


def test_late_promotion_is_refused_where_the_accumulation_is_not_precise_fp8(device, rng):
    late = GemmConfig(32, 32, 32, 4, 2, late_promotion=True)
    a, b = _randn((40, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device)
    with pytest.raises(ValueError, match="late promotion is for fp8 with precise accumulation"):
        kernels.matmul(a, b, config=late)
    a8, b8 = _fp8_operands(40, 48, 64, torch.float8_e4m3fn, rng, device)
    one = torch.tensor(1.0, device=device)
    with pytest.raises(ValueError, match="late promotion is for fp8 with precise accumulation"):
        kernels.scaled_matmul(a8, b8, one, one, use_fast_accum=True, config=late)
    out = kernels.scaled_matmul(a8, b8, one, one, config=late)  # precise: the same config runs
    assert relative_error(out, reference_gemm(a8, b8, scale_a=one, scale_b=one)) <= TOLERANCE["fp8_e4m3"]


def test_a_tuned_choice_these_operands_cannot_take_gives_way_to_the_buckets_runner_up(
    device, rng, monkeypatch, tmp_path
):
    # A fused epilogue shares its GEMM's bucket; when the bucket's tuned config cannot run it (the
    # Gluon kernel has no epilogue), the library's next best config for the bucket runs instead of
    # the chosen config's tile variant.
    import json

    import triton

    from kernels import autotune
    from targets import detect

    a, b = _randn((40, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device)
    bias = _randn((48,), rng, torch.float16, device)
    kernels.matmul(a, b)
    key = autotune.last().key
    chosen, runner_up, third = (GemmConfig(64, 32, 32, 4, 3, variant="gluon_ws"), GemmConfig(32, 32, 32, 4, 2),
                                GemmConfig(16, 32, 32, 4, 2))  # fmt: skip
    entry = {"cell": "fp16 40x48x64", "config": chosen.as_dict(),
             "bucket_score": {str(chosen): 1.0, str(third): 1.2, str(runner_up): 1.1, "not-a-config": 1.05}}  # fmt: skip
    library_file = tmp_path / f"{detect().name}-triton{triton.__version__}.json"
    library_file.write_text(json.dumps({"target": detect().name, "triton": triton.__version__, "meta": {},
                                        "entries": {key.library_key(): entry}}))  # fmt: skip
    monkeypatch.setenv("GEMMWATCH_TUNED_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_CACHE", {})
    launched = []
    real = autotune._runnable
    monkeypatch.setattr(autotune, "_runnable", lambda cfg, *rest: launched.append(real(cfg, *rest)) or launched[-1])
    out = kernels.matmul(a, b, bias=bias, activation="relu")
    assert launched == [runner_up]  # (the gluon config is for Hopper alone, and has no epilogue)
    # (what the run records: the config that ran, and the one it stood in for)
    assert (autotune.last().method, autotune.last().config, autotune.last().instead_of) == (
        "tuned",
        runner_up,
        str(chosen),
    )
    assert relative_error(out, reference_gemm(a, b, bias=bias, activation="relu")) <= TOLERANCE["fp16"]
    kernels.matmul(a, b)  # (the plain GEMM of the bucket: the gluon config is offered, and refused
    assert autotune.last().config == runner_up  # here for want of Hopper, as it was above)


def test_a_shape_the_tune_timed_runs_its_own_fastest_config_where_it_beat_the_buckets(
    device, rng, monkeypatch, tmp_path
):
    import json

    import triton

    from kernels import autotune
    from targets import detect

    kernels.matmul(_randn((40, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device))
    key = autotune.last().key
    chosen, faster = GemmConfig(32, 32, 32, 4, 2), GemmConfig(16, 32, 32, 4, 2)
    cells = {  # (times in ms, each cell's configs timed in the same rounds)
        "fp16 40x48x64": {"tried": {str(faster): 0.90, str(chosen): 1.00}},  # 10% faster: its own
        "fp16 33x48x64": {"tried": {str(faster): 0.995, str(chosen): 1.00}},  # within 1%: the bucket's
        "fp16 40x48x64 bias+gelu": {"tried": {str(faster): 0.5, str(chosen): 1.00}},  # (no shape of its own)
        "fp16 48x48x64": {"tried": {str(faster): 0.5}},  # (the bucket's config not timed on it)
    }
    entry = {"cell": "fp16 40x48x64", "config": chosen.as_dict(), "cells": cells}
    library_file = tmp_path / f"{detect().name}-triton{triton.__version__}.json"
    library_file.write_text(json.dumps({"target": detect().name, "triton": triton.__version__, "meta": {},
                                        "entries": {key.library_key(): entry}}))  # fmt: skip
    monkeypatch.setenv("GEMMWATCH_TUNED_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_CACHE", {})
    for M, expected in ((40, faster), (33, chosen), (48, chosen), (40, faster), (47, chosen)):
        a, b = _randn((M, 64), rng, torch.float16, device), _randn((64, 48), rng, torch.float16, device)
        out = kernels.matmul(a, b)
        assert (autotune.last().method, autotune.last().config) == ("tuned", expected), M
        assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("0", "0")])
def test_the_kernels_keep_fp_contraction_unless_told_otherwise(given, expected):
    # (Triton 3.9 warns where TRITON_DEFAULT_FP_FUSION is unset, 3.10 turns contraction off: the
    # package pins what its figures were measured with, and an explicit setting wins)
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_DEFAULT_FP_FUSION"}
    if given is not None:
        env["TRITON_DEFAULT_FP_FUSION"] = given
    code = "import os, kernels; print(os.environ['TRITON_DEFAULT_FP_FUSION'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected
