"""`TargetSpec`: everything a GEMM strategy may know about a chip.

Optimisation code reads these numbers instead of hard-coding them, so porting
gemmwatch to a new chip means writing a new catalogue entry, not new code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

VENDORS = ("nvidia", "amd", "cpu")

# Names of the dtypes the catalogue gives peak rates for; `PeakRates` has one
# field each. "tf32" is fp32 inputs on the matrix units at reduced mantissa,
# "fp32" is true IEEE fp32 (on NVIDIA: the CUDA cores, not the tensor cores).
PEAK_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")


def peak_dtype(dtype: str) -> str:
    """The `PeakRates` field of a dtype as the matrix ("fp8_e4m3", "fp32-tf32") or the autotune
    space ("tf32") names it."""
    if dtype.startswith("fp8"):
        return "fp8"
    return {"fp32-ieee": "fp32", "fp32-tf32": "tf32"}.get(dtype, dtype)


@dataclass(frozen=True)
class PeakRates:
    """Dense (no 2:4 sparsity) peak TFLOP/s per input dtype; None = not supported/unknown."""

    fp32: float | None
    tf32: float | None
    fp16: float | None
    bf16: float | None
    fp8: float | None

    def __post_init__(self) -> None:
        for name in PEAK_DTYPES:
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"PeakRates.{name} must be a positive number or None, got {value!r}")

    def get(self, dtype_name: str) -> float | None:
        if dtype_name not in PEAK_DTYPES:
            raise KeyError(f"unknown peak dtype {dtype_name!r}; expected one of {PEAK_DTYPES}")
        return getattr(self, dtype_name)


@dataclass(frozen=True)
class TargetSpec:
    """One chip, as GEMM tuning sees it.

    Sizes are in bytes. `smem_per_block_bytes` is the opt-in maximum one
    program (CTA / workgroup) may use, the bound the autotune space is cut to.
    """

    name: str
    vendor: str
    arch: str  # "sm_90", "gfx942", ... ("interpreter" for the CPU)
    sm_count: int  # SMs (NVIDIA) or CUs (AMD)
    smem_per_block_bytes: int  # opt-in max shared memory / LDS per block
    smem_banks: int
    smem_bank_width_bytes: int
    max_vector_load_bits: int  # widest global load one thread issues
    warp_size: int  # 32 on NVIDIA, 64 (wavefront) on CDNA
    registers_per_sm: int  # 32-bit registers per SM / CU
    max_registers_per_thread: int
    l2_bytes: int
    peak_tflops: PeakRates
    mem_bandwidth_gbs: float | None  # GB/s (1e9 bytes/s); None = unknown
    # The matrix unit's tile for 16-bit inputs (M, N, K). Block sizes are kept
    # multiples of it; K doubles for 8-bit inputs (same bytes per step).
    mma_tile: tuple[int, int, int] = (16, 16, 16)
    # Tensor memory accelerator: bulk asynchronous tile copies through tensor
    # descriptors (NVIDIA sm_90 and later). Enables the persistent TMA kernel.
    tma: bool = False
    # Triton's automatic warp specialization (`tl.range(..., warp_specialize=True)`) takes effect:
    # Triton 3.6 splits the loop into producer/consumer partitions on sm_100 and later (a flattened
    # loop), and on sm_90 (an unflattened loop, 4-warp configs of >= 128 rows only; the kernel
    # flattens accordingly). Checked on kernels compiled offline (tests/test_resources.py).
    auto_warp_specialize: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"TargetSpec.name must be a non-empty string, got {self.name!r}")
        if self.vendor not in VENDORS:
            raise ValueError(f"TargetSpec {self.name}: vendor must be one of {VENDORS}, got {self.vendor!r}")
        positive_ints = (
            "sm_count",
            "smem_per_block_bytes",
            "smem_banks",
            "smem_bank_width_bytes",
            "max_vector_load_bits",
            "warp_size",
            "registers_per_sm",
            "max_registers_per_thread",
            "l2_bytes",
        )
        for field in positive_ints:
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"TargetSpec {self.name}: {field} must be a positive int, got {value!r}")
        if self.warp_size not in (32, 64):
            raise ValueError(f"TargetSpec {self.name}: warp_size must be 32 or 64, got {self.warp_size}")
        if self.max_vector_load_bits % 8:
            raise ValueError(
                f"TargetSpec {self.name}: max_vector_load_bits must be a multiple of 8, got {self.max_vector_load_bits}"
            )
        if not isinstance(self.peak_tflops, PeakRates):
            raise TypeError(f"TargetSpec {self.name}: peak_tflops must be a PeakRates, got {type(self.peak_tflops)}")
        if self.mem_bandwidth_gbs is not None and self.mem_bandwidth_gbs <= 0:
            raise ValueError(f"TargetSpec {self.name}: mem_bandwidth_gbs must be positive or None")
        for flag in ("tma", "auto_warp_specialize"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"TargetSpec {self.name}: {flag} must be a bool, got {getattr(self, flag)!r}")
        if self.auto_warp_specialize and not self.tma:
            raise ValueError(f"TargetSpec {self.name}: auto_warp_specialize needs tma (it specializes the TMA kernel)")
        if len(self.mma_tile) != 3 or any(not isinstance(t, int) or t <= 0 or t % 8 for t in self.mma_tile):
            raise ValueError(
                f"TargetSpec {self.name}: mma_tile must be three positive multiples of 8, got {self.mma_tile!r}"
            )

    @property
    def is_interpreter(self) -> bool:
        return self.vendor == "cpu"

    def roofline_seconds(self, dtype: str, flops: float, nbytes: float) -> tuple[float, float] | None:
        """(seconds to move `nbytes` at the memory bandwidth, seconds of `flops` at the dtype's peak);
        None when the spec lacks either figure."""
        name = peak_dtype(dtype)
        peak = self.peak_tflops.get(name) if name in PEAK_DTYPES else None
        if not (peak and self.mem_bandwidth_gbs):
            return None
        return nbytes / (self.mem_bandwidth_gbs * 1e9), flops / (peak * 1e12)

    def replace(self, **changes) -> TargetSpec:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)
