"""Find the `TargetSpec` of the device this process runs on."""

from __future__ import annotations

import os
import warnings
from typing import Any

from targets.catalogue import CATALOGUE, CPU_INTERPRETER, DEVICE_NAME_PATTERNS
from targets.spec import PeakRates, TargetSpec


class UnknownTargetWarning(UserWarning):
    """The device is not in the catalogue; its spec was built from what torch reports."""


def interpreter_requested() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def detect(device: Any = None) -> TargetSpec:
    """The spec of `device` (default: the current CUDA/ROCm device).

    No GPU, or TRITON_INTERPRET=1, gives `cpu-interpreter`. A GPU that is not
    in the catalogue gets a spec built from torch's device properties, with an
    `UnknownTargetWarning` (peak rates are then unknown).
    """
    if interpreter_requested():
        return CPU_INTERPRETER
    import torch

    if not torch.cuda.is_available():
        return CPU_INTERPRETER
    index = torch.cuda.current_device() if device is None else torch.device(device).index or 0
    return spec_from_properties(torch.cuda.get_device_properties(index), is_rocm=torch.version.hip is not None)


def _prop(props: Any, name: str, default: Any = None) -> Any:
    return getattr(props, name, default)


def spec_from_properties(props: Any, *, is_rocm: bool = False) -> TargetSpec:
    """Match torch's device properties to the catalogue; build a spec when none matches.

    `props` is a `torch.cuda.get_device_properties()` object (or anything with
    its attribute names). Queried values that contradict the catalogue (a
    partitioned or cut-down part) win over the catalogue, with a warning.
    """
    name = str(_prop(props, "name", "unknown GPU"))
    queried = _queried_fields(props, is_rocm)
    for pattern, target_name in DEVICE_NAME_PATTERNS:
        if pattern in name:
            spec = CATALOGUE[target_name]
            differing = {k: v for k, v in queried.items() if getattr(spec, k) != v}
            # L2 size is reported per die by some drivers; only the SM count
            # and shared-memory limit change which configs are legal or good.
            differing.pop("l2_bytes", None)
            differing.pop("registers_per_sm", None)
            if differing:
                warnings.warn(
                    f"device {name!r} matches catalogue entry {target_name!r} but reports "
                    + ", ".join(f"{k}={v} (catalogue {getattr(spec, k)})" for k, v in differing.items())
                    + "; using the reported values",
                    UnknownTargetWarning,
                    stacklevel=2,
                )
                spec = spec.replace(name=f"{target_name}-custom", **differing)
            return spec
    warnings.warn(
        f"device {name!r} is not in the gemmwatch catalogue ({', '.join(sorted(CATALOGUE))}); "
        "using a spec built from torch's device properties, with unknown peak rates. "
        "Add a catalogue entry in targets/catalogue.py for percent-of-peak figures.",
        UnknownTargetWarning,
        stacklevel=2,
    )
    major, minor = _prop(props, "major", 0), _prop(props, "minor", 0)
    arch = str(_prop(props, "gcnArchName", "")).split(":")[0] if is_rocm else f"sm_{major}{minor}"
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    fields = dict(
        name=slug or "unknown-gpu",
        vendor="amd" if is_rocm else "nvidia",
        arch=arch or "unknown",
        smem_banks=32,
        smem_bank_width_bytes=4,
        max_vector_load_bits=128,
        max_registers_per_thread=512 if is_rocm else 255,
        peak_tflops=PeakRates(fp32=None, tf32=None, fp16=None, bf16=None, fp8=None),
        mem_bandwidth_gbs=None,
        tma=not is_rocm and major >= 9,  # TMA: NVIDIA compute capability 9.0 and later
        auto_warp_specialize=not is_rocm and major >= 9,  # what Triton 3.6 partitions (see TargetSpec)
        description=f"{name} (not in the catalogue: built from device properties)",
    )
    defaults = dict(
        sm_count=1,
        smem_per_block_bytes=48 * 1024,
        warp_size=64 if is_rocm else 32,
        registers_per_sm=65536,
        l2_bytes=1024 * 1024,
    )
    return TargetSpec(**fields, **{**defaults, **queried})


def _queried_fields(props: Any, is_rocm: bool) -> dict[str, int]:
    """The TargetSpec fields torch can report, for those it does report (> 0)."""
    candidates = {
        "sm_count": _prop(props, "multi_processor_count"),
        "smem_per_block_bytes": _prop(props, "shared_memory_per_block_optin")
        or _prop(props, "shared_memory_per_block"),
        "warp_size": _prop(props, "warp_size"),
        "registers_per_sm": _prop(props, "regs_per_multiprocessor"),
        "l2_bytes": _prop(props, "L2_cache_size"),
    }
    return {k: int(v) for k, v in candidates.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}
