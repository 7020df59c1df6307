"""Building the inputs and the two sides (Triton, native) of one GEMM cell.

Shared by `gemmwatch bench` and the asv suites so both time exactly the same
calls on the same data (the first seed: script differences alone reach 10%).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

# dtype name -> (torch dtype attribute, precision for fp32)
DTYPES = {
    "fp16": ("float16", None),
    "bf16": ("bfloat16", None),
    "fp32-ieee": ("float32", "ieee"),
    "fp32-tf32": ("float32", "tf32"),
    "fp8_e4m3": ("float8_e4m3fn", None),
    "fp8_e4m3-fastacc": ("float8_e4m3fn", "fast_accum"),  # both sides with use_fast_accum=True
    "fp8_e5m2": ("float8_e5m2", None),
}

# Relative Frobenius error vs a float64 reference above which a cell is wrong,
# per input dtype: a few ulps of the output type times sqrt(K)-ish growth,
# generous enough for K up to 16k (ulp: fp16 1e-3, bf16 8e-3, tf32 1e-3, fp8 out bf16).
TOLERANCE = {
    "fp16": 2e-3,
    "bf16": 1.6e-2,
    "fp32-ieee": 1e-5,
    "fp32-tf32": 2e-3,
    "fp8_e4m3": 1.6e-2,
    "fp8_e4m3-fastacc": 1.6e-2,
    "fp8_e5m2": 1.6e-2,
}


@dataclass
class Cell:
    """One (shape, dtype, epilogue) problem with its inputs and both callables."""

    dtype: str
    M: int
    N: int
    K: int
    epilogue: str | None = None  # None, "bias+gelu", "bias+silu", ...

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; expected one of {', '.join(DTYPES)}")
        for name in ("M", "N", "K"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"cell {name} must be an int >= 1, got {value!r}")

    @property
    def name(self) -> str:
        suffix = f" {self.epilogue}" if self.epilogue else ""
        return f"{self.dtype} {self.M}x{self.N}x{self.K}{suffix}"

    @property
    def is_fp8(self) -> bool:
        return self.dtype.startswith("fp8")

    @property
    def activation(self) -> str | None:
        if not self.epilogue:
            return None
        parts = self.epilogue.split("+")
        return parts[-1] if parts[-1] != "bias" else None

    @property
    def has_bias(self) -> bool:
        return bool(self.epilogue) and "bias" in self.epilogue.split("+")


# Where `Prepared.operand_copies` puts copies in an operand arena: each tensor at a multiple of
# TENSOR_ALIGN bytes (what the libraries' vector loads and TMA want), each copy at a multiple of
# ARENA_ALIGN (the caching allocator's large-segment granule).
TENSOR_ALIGN = 256
ARENA_ALIGN = 2 << 20


def _align(n: int, to: int) -> int:
    return -(-n // to) * to


def _span_bytes(t) -> int:
    """Bytes of storage a tensor's elements span, from its first element (strided views too). (Not
    taken from `kernels`: the suites also time older commits, whose `kernels` lack its helper.)"""
    if t.numel() == 0:
        return 0
    return (sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) + 1) * t.element_size()


class Prepared:
    """Inputs on the device, the Triton and native callables, and a float64 reference."""

    def __init__(self, cell: Cell, device: str, seed: int = 0, *, values: bool = True):
        import torch

        self.cell = cell
        dtype_attr, self.precision = DTYPES[cell.dtype]
        dtype = getattr(torch, dtype_attr)
        # Drawn where they are used: on the CPU, the largest cells' operands (two 8192 x 28672
        # matrices) took seconds per cell, most of a warm run's time on the H200.
        gen = torch.Generator(device=device).manual_seed(seed)
        self.out_dtype = torch.bfloat16 if cell.is_fp8 else dtype
        if values:  # random normal data, never zeros (zeros run faster and hide unwritten outputs)
            a = torch.randn(cell.M, cell.K, generator=gen, device=device).to(dtype)
            b = torch.randn(cell.K, cell.N, generator=gen, device=device)
            # fp8: column-major B, the layout torch._scaled_mm requires and the fast one.
            b = b.t().contiguous().to(dtype).t() if cell.is_fp8 else b.to(dtype)
            bias = torch.randn(cell.N, generator=gen, device=device).to(self.out_dtype) if cell.has_bias else None
        else:  # the same dtypes and layouts, uninitialised: for compiling only (`gemmwatch resources`)
            a = torch.empty(cell.M, cell.K, dtype=dtype)
            b = (
                torch.empty(cell.N, cell.K, dtype=dtype).t()
                if cell.is_fp8
                else torch.empty(cell.K, cell.N, dtype=dtype)
            )
            bias = torch.empty(cell.N, dtype=self.out_dtype) if cell.has_bias else None
        self.a, self.b = a.to(device), b.to(device)
        self.bias = bias.to(device) if bias is not None else None
        if cell.is_fp8:
            self.scale_a = torch.tensor(0.5, device=device)
            self.scale_b = torch.tensor(2.0, device=device)
        else:
            self.scale_a = self.scale_b = None
        self.out = torch.empty(cell.M, cell.N, dtype=self.out_dtype, device=device)
        self.native_out = torch.empty_like(self.out)

    @property
    def footprint_bytes(self) -> int:
        """Bytes one call reads and writes (A, B, C): what a cold-L2 measurement must evict."""
        return sum(t.numel() * t.element_size() for t in (self.a, self.b, self.out))

    def arena_bytes(self, copies: int) -> int:
        """Bytes `copies` copies of (A, B, C, native C) take in an operand arena (`operand_copies`):
        each tensor at a 256-byte boundary, each copy at an ARENA_ALIGN one."""
        one = sum(_align(_span_bytes(t), TENSOR_ALIGN) for t in (self.a, self.b, self.out, self.native_out))
        return copies * _align(one, ARENA_ALIGN)

    def operand_copies(self, copies: int, arena=None) -> list[tuple]:
        """`copies` tuples (A, B, C, native C): these inputs, then clones (same strides, same values),
        for timing with rotating copies instead of an L2 flush. With `arena` (a flat uint8 tensor on
        the operands' device), every copy, the first too, is a view into it at an offset set by the
        cell alone (copy i at i x `arena_bytes(copies) / copies`), so the copies lie at the same
        places whatever the process allocated before (benchmarks.measure.process_arena)."""
        first = (self.a, self.b, self.out, self.native_out)
        if arena is None:
            return [first] + [tuple(t.clone() for t in first) for _ in range(copies - 1)]
        need = self.arena_bytes(copies)
        if need > arena.numel():
            raise ValueError(
                f"the operand arena holds {arena.numel()} bytes, {self.cell.name} needs {need} for {copies} copies"
            )
        placed = []
        for i in range(copies):
            offset, views = i * (need // copies), []
            for t in first:
                span = _span_bytes(t)
                view = arena[offset : offset + span].view(t.dtype).as_strided(t.shape, t.stride())
                views.append(view.copy_(t))
                offset += _align(span, TENSOR_ALIGN)
            placed.append(tuple(views))
        return placed

    def triton(self, kernels=None, config=None, operands=None):
        """Our kernel on these inputs; `kernels` selects another copy of the package (recheck),
        `config` forces a launch config (tune), `operands` another copy of (A, B, C, native C)."""
        if kernels is None:
            import kernels

        c = self.cell
        a, b, out, _ = operands or (self.a, self.b, self.out, None)
        if c.is_fp8:
            return kernels.scaled_matmul(
                a, b, self.scale_a, self.scale_b,
                bias=self.bias, activation=c.activation, out_dtype=self.out_dtype,
                use_fast_accum=self.precision == "fast_accum", out=out, config=config,
            )  # fmt: skip
        return kernels.matmul(
            a, b, bias=self.bias, activation=c.activation, precision=self.precision, out=out, config=config
        )

    @contextlib.contextmanager
    def _native_precision(self):
        import torch

        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = self.precision == "tf32"
        try:
            yield
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved

    def native(self, operands=None):
        """cuBLAS/cuBLASLt (hipBLASLt) through torch, precision-matched, unfused epilogue."""
        import torch

        c = self.cell
        a, b, _, native_out = operands or (self.a, self.b, None, self.native_out)
        if c.is_fp8:
            # Into the copy's own output, as the Triton side writes (timing.Placements): an output
            # allocated inside the timing's graph is one block for every call of a replay.
            out = {} if c.activation else {"out": native_out}
            y = torch._scaled_mm(a, b, self.scale_a, self.scale_b, bias=self.bias, out_dtype=self.out_dtype, **out)
            if c.activation:
                y = _torch_activation(y, c.activation)
            return y
        with self._native_precision():
            if self.bias is None and c.activation is None:
                return torch.matmul(a, b, out=native_out)
            y = torch.matmul(a, b)
        if self.bias is not None:
            y = y + self.bias
        return _torch_activation(y, c.activation) if c.activation else y

    def native_supported(self) -> str | None:
        """None if the native side can run this cell, else the reason it cannot."""
        if self.cell.is_fp8:
            if self.a.device.type != "cuda":
                return "torch._scaled_mm needs a CUDA device"
            if self.cell.dtype == "fp8_e5m2":
                return "torch._scaled_mm has no e5m2 x e5m2 kernel"
            if self.cell.K % 16 or self.cell.N % 16:
                return "torch._scaled_mm needs K and N divisible by 16"
        return None

    def reference(self):
        """float64 result of the same function, on the inputs' device."""
        return reference_gemm(
            self.a, self.b, bias=self.bias, activation=self.cell.activation, scale_a=self.scale_a, scale_b=self.scale_b
        )


def reference_gemm(a, b, *, bias=None, activation=None, scale_a=None, scale_b=None):
    """`act(scale_a * scale_b * (a @ b) + bias)` in float64: the ground truth every check uses."""
    y = a.double() @ b.double()
    if scale_a is not None:
        y = y * scale_a.double() * scale_b.double()
    if bias is not None:
        y = y + bias.double()
    return _torch_activation(y, activation) if activation else y


def relative_error(result, ref) -> float:
    """|result - ref| / |ref| (Frobenius); inf if anything is NaN/inf or the shapes differ."""
    if tuple(result.shape) != tuple(ref.shape):
        return float("inf")
    diff = result.double() - ref
    if not bool(diff.isfinite().all()):
        return float("inf")
    return float(diff.norm() / ref.norm().clamp_min(1e-30))


def _torch_activation(y, activation: str):
    import torch.nn.functional as F

    if activation == "relu":
        return F.relu(y)
    if activation == "gelu":
        return F.gelu(y)
    if activation == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    if activation == "silu":
        return F.silu(y)
    raise ValueError(f"unknown activation {activation!r}")
