"""What a measurement ran on: device, clocks and software versions, recorded with every result."""

from __future__ import annotations

import ctypes
import platform
from pathlib import Path


def software_versions() -> dict[str, str]:
    import torch
    import triton

    from benchmarks.measure import protocol_id

    return {
        "timing_protocol": protocol_id(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda or "none",
        "hip": torch.version.hip or "none",
        "cublas": cublas_version(),
    }


def cublas_version() -> str:
    """The cuBLAS that torch loaded, read from the library itself ("none" without CUDA)."""
    import torch

    if not torch.cuda.is_available() or torch.version.cuda is None:
        return "none"
    # Make sure torch has loaded cuBLAS, then ask that very library.
    a = torch.ones(16, 16, device="cuda")
    (a @ a).sum().item()
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if "libcublas.so" in path and "Lt" not in Path(path).name:
            lib = ctypes.CDLL(path)
            version = ctypes.c_int()
            if lib.cublasGetProperty(0, ctypes.byref(version)) != 0:
                break
            parts = [version.value]
            for prop in (1, 2):  # MINOR_VERSION, PATCH_LEVEL
                lib.cublasGetProperty(prop, ctypes.byref(version))
                parts.append(version.value)
            return ".".join(str(p) for p in parts)
    return "unknown"


def device_description() -> dict[str, str]:
    """Static facts about the device (the target and, on a GPU, what torch and NVML report)."""
    import torch

    from targets import detect

    spec = detect()
    if not torch.cuda.is_available() or spec.is_interpreter:
        return {"target": spec.name, "device": "Triton interpreter on " + (platform.processor() or platform.machine())}
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "target": spec.name,
        "device": props.name,
        "sm_count": str(props.multi_processor_count),
        "l2_bytes": str(props.L2_cache_size),
        "driver": _nvml(lambda nv, _handle: nv.nvmlSystemGetDriverVersion()) or "unknown",
        # Which physical card: two cards of one model differ by 1-6% per cell (docs/BENCHMARKS.md), so
        # runs to be compared (A/A, base/head) should name the same one; `gemmwatch noise` checks it.
        "card": _card_uuid(props),
    }


def _card_uuid(props) -> str:
    """The card's UUID ("GPU-..." as nvidia-smi prints it), from NVML or torch; "unknown" without either."""
    uuid = _nvml(lambda nv, handle: nv.nvmlDeviceGetUUID(handle))
    if isinstance(uuid, bytes):
        uuid = uuid.decode()
    if not uuid and getattr(props, "uuid", None) is not None:
        uuid = f"GPU-{props.uuid}"
    return str(uuid) if uuid else "unknown"


def _nvml(query):
    """Run `query(pynvml, handle)` for torch's current device; None where NVML is unavailable."""
    try:
        import pynvml  # nvidia-ml-py, installed with CUDA builds of torch
    except ImportError:
        return None
    import torch

    try:
        pynvml.nvmlInit()
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        if hasattr(props, "pci_bus_id"):  # NVML numbers devices without CUDA_VISIBLE_DEVICES
            bus_id = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        return query(pynvml, handle)
    except pynvml.NVMLError:
        return None


def device_state() -> dict[str, object]:
    """Clocks, power, temperature and throttle reasons now (empty without NVML)."""

    def read(nv, handle):
        state = {
            "sm_clock_mhz": nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_MEM),
            "power_w": round(nv.nvmlDeviceGetPowerUsage(handle) / 1000.0, 1),
            "temperature_c": nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU),
        }
        get_reasons = (
            getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        reasons = get_reasons(handle)
        state["throttle_reasons"] = hex(reasons)
        state["throttle_names"] = [
            name
            for name, bit in (
                ("sw_power_cap", 0x4),
                ("hw_slowdown", 0x8),
                ("sw_thermal", 0x20),
                ("hw_thermal", 0x40),
                ("hw_power_brake", 0x80),
            )
            if reasons & bit
        ]
        return state

    import torch

    if not torch.cuda.is_available():
        return {}
    return _nvml(read) or {}
