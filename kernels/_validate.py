"""Input checks for the GEMM launchers: every message names what it got and what it expected.

Shape problems raise ValueError, dtype problems TypeError. Nothing is cast
silently.
"""

from __future__ import annotations

import torch

from targets.detect import interpreter_requested

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
PRECISIONS = ("ieee", "tf32")
OUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# gemmwatch's short names, used in configs, keys and reports.
DTYPE_NAMES = {
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
    torch.float8_e4m3fn: "fp8_e4m3",
    torch.float8_e5m2: "fp8_e5m2",
}

# The kernel computes offsets in 32-bit integers.
_MAX_OFFSET = 2**31 - 1


def dtype_name(dtype: torch.dtype) -> str:
    return DTYPE_NAMES[dtype]


def _names(dtypes) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dtypes)


def _span_elements(t: torch.Tensor) -> int:
    """The offset of the tensor's last element from its first, in elements."""
    return sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride()))


def _check_offsets(op: str, what: str, t: torch.Tensor) -> None:
    span = _span_elements(t)
    if span > _MAX_OFFSET:
        raise ValueError(
            f"{op}: {what} of shape {tuple(t.shape)} and strides {t.stride()} spans {span} elements; "
            f"the kernel indexes with 32-bit offsets (at most {_MAX_OFFSET})"
        )


# Set by kernels.matmul.compile_only(): (SM count, compiled kernels) while launches only compile.
# CPU tensors then stand for device ones.
OFFLINE_COMPILE: list[tuple[int, list]] = []


def check_device(op: str, *tensors: tuple[str, torch.Tensor]) -> None:
    """All tensors on one device, and a device Triton can run on."""
    first_name, first = tensors[0]
    for name, t in tensors[1:]:
        if t.device != first.device:
            raise ValueError(
                f"{op}: {name} is on {t.device} but {first_name} is on {first.device}; move them to one device"
            )
    if first.device.type == "cpu" and not interpreter_requested() and not OFFLINE_COMPILE:
        raise ValueError(
            f"{op}: inputs are on the CPU, but Triton kernels need a GPU; "
            "set TRITON_INTERPRET=1 before importing triton to run them in Triton's interpreter"
        )
    if first.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{op}: inputs are on {first.device}; expected a CUDA/ROCm device (or CPU in the interpreter)")


def check_matrices(op: str, a: torch.Tensor, b: torch.Tensor, *, allowed: tuple[torch.dtype, ...]) -> str:
    """Validate the two operands; return the dtype's short name."""
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(t).__name__}")
    for name, t in (("a", a), ("b", b)):
        if t.dim() != 2:
            raise ValueError(f"{op}: {name} must be 2-D (rows, cols), got {t.dim()}-D with shape {tuple(t.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{op}: inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; "
            f"expected a (M, K) and b (K, N) with the same K"
        )
    if 0 in a.shape or 0 in b.shape:
        raise ValueError(
            f"{op}: zero-size dimension: a is {tuple(a.shape)}, b is {tuple(b.shape)}; expected M, N, K >= 1"
        )
    if a.dtype != b.dtype:
        raise TypeError(
            f"{op}: dtype mismatch: a is {a.dtype} and b is {b.dtype}; expected the same dtype for both (no implicit casts)"
        )
    if a.dtype not in allowed:
        hint = " (fp8 inputs go through kernels.scaled_matmul)" if a.dtype in DTYPE_NAMES and op == "matmul" else ""
        raise TypeError(f"{op}: unsupported dtype {a.dtype}; expected one of {_names(allowed)}{hint}")
    check_device(op, ("a", a), ("b", b))
    _check_offsets(op, "a", a)
    _check_offsets(op, "b", b)
    return dtype_name(a.dtype)


def resolve_precision(op: str, dtype: torch.dtype, precision: str | None) -> str | None:
    """Triton's input_precision for the dot: explicit for fp32, absent otherwise."""
    if dtype == torch.float32:
        if precision is None:
            return "ieee"  # true fp32, as torch.matmul computes it by default
        if precision not in PRECISIONS:
            raise ValueError(f"{op}: precision must be one of {PRECISIONS} for float32 inputs, got {precision!r}")
        return precision
    if precision is not None:
        raise ValueError(f"{op}: precision={precision!r} applies to float32 inputs only; a and b are {dtype}")
    return None


def resolve_out_dtype(op: str, out_dtype: torch.dtype | None, *, default: torch.dtype) -> torch.dtype:
    if out_dtype is None:
        return default
    if out_dtype not in OUT_DTYPES:
        raise TypeError(f"{op}: unsupported out_dtype {out_dtype}; expected one of {_names(OUT_DTYPES)}")
    return out_dtype


def check_bias(op: str, bias: torch.Tensor | None, N: int, c_dtype: torch.dtype, device: torch.device) -> None:
    if bias is None:
        return
    if not isinstance(bias, torch.Tensor):
        raise TypeError(f"{op}: bias must be a torch.Tensor or None, got {type(bias).__name__}")
    if bias.dim() != 1 or bias.shape[0] != N:
        raise ValueError(f"{op}: bias must have shape ({N},) to match N={N}, got {tuple(bias.shape)}")
    if bias.dtype != c_dtype:
        raise TypeError(f"{op}: bias dtype {bias.dtype} differs from the output dtype {c_dtype}; expected {c_dtype}")
    if bias.device != device:
        raise ValueError(f"{op}: bias is on {bias.device} but a is on {device}")


def check_scales(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor) -> str:
    """torch._scaled_mm's scale forms: 'tensorwise' (one each) or 'rowwise' ((M,1) and (1,N))."""
    M, N = a.shape[0], b.shape[1]
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(s, torch.Tensor):
            raise TypeError(f"scaled_matmul: {name} must be a float32 torch.Tensor, got {type(s).__name__}")
        if s.dtype != torch.float32:
            raise TypeError(f"scaled_matmul: {name} must be float32, got {s.dtype}")
        if s.device != a.device:
            raise ValueError(f"scaled_matmul: {name} is on {s.device} but a is on {a.device}")
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return "tensorwise"
    if tuple(scale_a.shape) == (M, 1) and tuple(scale_b.shape) == (1, N):
        if not (scale_a.is_contiguous() and scale_b.is_contiguous()):
            raise ValueError("scaled_matmul: rowwise scales must be contiguous")
        return "rowwise"
    raise ValueError(
        f"scaled_matmul: scale_a {tuple(scale_a.shape)} and scale_b {tuple(scale_b.shape)} are neither "
        f"tensorwise (one element each) nor rowwise (scale_a ({M}, 1) and scale_b (1, {N}))"
    )


def check_out(
    op: str, out: torch.Tensor | None, shape: tuple[int, int], dtype: torch.dtype, a: torch.Tensor, b: torch.Tensor
) -> torch.Tensor:
    """The output tensor: `out` after checks, or a new row-major one."""
    if out is None:
        return torch.empty(shape, dtype=dtype, device=a.device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{op}: out must be a torch.Tensor or None, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise ValueError(f"{op}: out has shape {tuple(out.shape)}; expected {shape}")
    if out.dtype != dtype:
        raise TypeError(f"{op}: out has dtype {out.dtype}; expected {dtype}")
    if out.device != a.device:
        raise ValueError(f"{op}: out is on {out.device} but a is on {a.device}")
    for name, t in (("a", a), ("b", b)):
        if _overlap(out, t):
            raise ValueError(f"{op}: out shares memory with {name}; the kernel would read what it overwrites")
    _check_offsets(op, "out", out)
    return out


def _byte_range(t: torch.Tensor) -> tuple[int, int]:
    """[first, last) bytes of memory the tensor's elements span (its strides non-negative)."""
    extent = _span_elements(t) + 1 if t.numel() else 0
    return t.data_ptr(), t.data_ptr() + extent * t.element_size()


def _overlap(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two tensors' spans of memory meet: views of one buffer at disjoint places (operand
    copies in one arena) do not."""
    if x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr():
        return False
    (x0, x1), (y0, y1) = _byte_range(x), _byte_range(y)
    return x0 < y1 and y0 < x1


def descriptor_problem(t: torch.Tensor, name: str) -> str | None:
    """Why `t` cannot be read through a tensor descriptor (None if it can).

    TMA needs one contiguous dimension, a 16-byte-aligned base and 16-byte
    multiples for the other dimension's stride.
    """
    if t.stride(1) == 1:
        leading = t.stride(0)
    elif t.stride(0) == 1:
        leading = t.stride(1)
    else:
        return f"{name} has no contiguous dimension (strides {tuple(t.stride())})"
    if t.data_ptr() % 16:
        return f"{name}'s data is not 16-byte aligned"
    if (leading * t.element_size()) % 16:
        return f"{name}'s leading stride {leading} is not a multiple of 16 bytes"
    return None
