"""The chips gemmwatch knows, one `TargetSpec` each.

Every number names its source. "datasheet" figures are the vendor's published
dense (no 2:4 sparsity) rates; "CUDA guide" is the CUDA C++ Programming Guide's
table of compute-capability limits. Figures marked "measured" were read on the
chip itself (docs/BENCHMARKS.md says when and how).
"""

from __future__ import annotations

from targets.spec import PeakRates, TargetSpec

KiB = 1024
MiB = 1024 * 1024

# Shared by every NVIDIA part here: 32 banks of 4 bytes (CUDA guide, "Shared
# Memory" for cc 5.x and later); 128-bit LDG/LDS per thread; 64K registers per
# SM and at most 255 per thread (CUDA guide, cc 8.x-10.x).
_NV_COMMON = dict(
    vendor="nvidia",
    smem_banks=32,
    smem_bank_width_bytes=4,
    max_vector_load_bits=128,
    warp_size=32,
    registers_per_sm=65536,
    max_registers_per_thread=255,
)

H100_SXM = TargetSpec(
    name="h100-sxm",
    arch="sm_90",
    sm_count=132,  # H100 SXM5 datasheet
    smem_per_block_bytes=227 * KiB,  # CUDA guide, cc 9.0: 227 KB opt-in per block
    l2_bytes=50 * MiB,  # datasheet: 50 MB
    # datasheet (H100 SXM), dense: FP32 67, TF32 494.7, FP16/BF16 989.4, FP8 1978.9
    peak_tflops=PeakRates(fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9),
    mem_bandwidth_gbs=3350.0,  # datasheet: 3.35 TB/s HBM3
    tma=True,  # Hopper tuning guide: TMA is new in compute capability 9.0
    # Triton 3.6 partitions the unflattened persistent loop on sm_90 (4-warp configs of >= 128
    # rows: a producer and two consumer warpgroups; compiled offline, tests/test_resources.py).
    auto_warp_specialize=True,
    description="NVIDIA H100 SXM5 80GB (Hopper)",
    **_NV_COMMON,
)

H200 = H100_SXM.replace(
    name="h200",
    # Same GH100 die and clocks as H100 SXM (datasheet: identical compute rates).
    # L2: measured, torch.cuda.get_device_properties().L2_cache_size on the H200
    # test machine (docs/BENCHMARKS.md, 2026-11-29).
    l2_bytes=60 * MiB,
    mem_bandwidth_gbs=4800.0,  # datasheet: 4.8 TB/s HBM3e, 141 GB
    description="NVIDIA H200 SXM 141GB (Hopper)",
)

A100_80GB = TargetSpec(
    name="a100-80gb",
    arch="sm_80",
    sm_count=108,  # A100 datasheet
    smem_per_block_bytes=163 * KiB,  # CUDA guide, cc 8.0: 163 KB opt-in per block
    l2_bytes=40 * MiB,  # datasheet: 40 MB
    # datasheet (A100 80GB SXM), dense: FP32 19.5, TF32 156, FP16/BF16 312; no FP8 units
    peak_tflops=PeakRates(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0, fp8=None),
    mem_bandwidth_gbs=2039.0,  # datasheet: 2,039 GB/s HBM2e
    description="NVIDIA A100 SXM4 80GB (Ampere)",
    **_NV_COMMON,
)

L40S = TargetSpec(
    name="l40s",
    arch="sm_89",
    sm_count=142,  # L40S datasheet
    smem_per_block_bytes=99 * KiB,  # CUDA guide, cc 8.9: 99 KB opt-in per block
    l2_bytes=96 * MiB,  # Ada whitepaper: 96 MB on AD102
    # datasheet (L40S), dense: FP32 91.6, TF32 183, FP16/BF16 362.05, FP8 733
    peak_tflops=PeakRates(fp32=91.6, tf32=183.0, fp16=362.05, bf16=362.05, fp8=733.0),
    mem_bandwidth_gbs=864.0,  # datasheet: 864 GB/s GDDR6
    description="NVIDIA L40S 48GB (Ada Lovelace)",
    **_NV_COMMON,
)

B200 = TargetSpec(
    name="b200",
    arch="sm_100",
    sm_count=148,  # Blackwell whitepaper: 148 SMs enabled on B200
    smem_per_block_bytes=227 * KiB,  # CUDA guide, cc 10.0: 227 KB opt-in per block
    l2_bytes=126 * MiB,  # Blackwell whitepaper: 126 MB (not measured here)
    # datasheet (HGX B200, per GPU), dense: FP32 75, TF32 1100, FP16/BF16 2250, FP8 4500
    peak_tflops=PeakRates(fp32=75.0, tf32=1100.0, fp16=2250.0, bf16=2250.0, fp8=4500.0),
    mem_bandwidth_gbs=8000.0,  # datasheet: 8 TB/s HBM3e
    tma=True,  # compute capability 10.0 keeps Hopper's TMA
    auto_warp_specialize=True,  # Triton 3.6 partitions warp-specialized loops on sm_100 (compiled offline)
    description="NVIDIA B200 (Blackwell)",
    **_NV_COMMON,
)

MI300X = TargetSpec(
    name="mi300x",
    vendor="amd",
    arch="gfx942",
    sm_count=304,  # CDNA3 whitepaper: 304 CUs
    smem_per_block_bytes=64 * KiB,  # CDNA3 ISA guide: 64 KB LDS per CU/workgroup
    smem_banks=32,  # CDNA3 ISA guide: LDS has 32 banks of 4 bytes
    smem_bank_width_bytes=4,
    max_vector_load_bits=128,  # buffer_load_dwordx4 / global_load_dwordx4
    warp_size=64,  # wavefront of 64 lanes
    # CDNA3 ISA guide: 4 SIMDs x 512 VGPRs x 64 lanes of 32-bit registers per CU
    registers_per_sm=4 * 512 * 64,
    max_registers_per_thread=512,  # 256 arch VGPRs + 256 AccVGPRs
    l2_bytes=8 * 4 * MiB,  # CDNA3 whitepaper: 4 MB L2 per XCD, 8 XCDs (plus 256 MB Infinity Cache)
    # datasheet (MI300X), dense matrix: FP32 163.4, TF32 653.7, FP16/BF16 1307.4, FP8 2614.9
    peak_tflops=PeakRates(fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9),
    mem_bandwidth_gbs=5300.0,  # datasheet: 5.3 TB/s HBM3
    mma_tile=(16, 16, 16),  # v_mfma_f32_16x16x16_f16
    description="AMD Instinct MI300X (CDNA3)",
)

CPU_INTERPRETER = TargetSpec(
    name="cpu-interpreter",
    vendor="cpu",
    arch="interpreter",
    # Triton's interpreter runs programs one after another with numpy; it has
    # no SMs, no shared memory and no clocks. These values only let the same
    # config generator run; nothing measured on this target is performance.
    sm_count=1,
    smem_per_block_bytes=227 * KiB,
    smem_banks=32,
    smem_bank_width_bytes=4,
    max_vector_load_bits=128,
    warp_size=32,
    registers_per_sm=65536,
    max_registers_per_thread=255,
    l2_bytes=1 * MiB,
    peak_tflops=PeakRates(fp32=None, tf32=None, fp16=None, bf16=None, fp8=None),
    mem_bandwidth_gbs=None,
    description="Triton interpreter on the CPU (correctness and pipeline checks only)",
)

CATALOGUE: dict[str, TargetSpec] = {
    spec.name: spec for spec in (H100_SXM, H200, A100_80GB, L40S, B200, MI300X, CPU_INTERPRETER)
}

# Substrings of torch's device name, most specific first, mapped to catalogue
# entries. Names as torch reports them, e.g. "NVIDIA H100 80GB HBM3",
# "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X".
DEVICE_NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    ("H200", "h200"),
    ("H100", "h100-sxm"),
    ("A100", "a100-80gb"),
    ("L40S", "l40s"),
    ("B200", "b200"),
    ("MI300X", "mi300x"),
)


def siblings(spec: TargetSpec) -> tuple[TargetSpec, ...]:
    """The other catalogue targets of `spec`'s die: the same vendor, architecture and SM count (the
    H100 SXM and the H200 share GH100; their memories differ). Where a target has no tuned rankings
    of its own, a sibling's order its candidates (`targets.library.coarse_timings`): never its
    configs, which are measured on its own memory system."""
    if spec.arch == CPU_INTERPRETER.arch:
        return ()
    return tuple(
        other
        for name, other in sorted(CATALOGUE.items())
        if name != spec.name and (other.vendor, other.arch, other.sm_count) == (spec.vendor, spec.arch, spec.sm_count)
    )


def get(name: str) -> TargetSpec:
    """The catalogue entry called `name`; a KeyError listing the known names otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown target {name!r}; known targets: {', '.join(sorted(CATALOGUE))}") from None
