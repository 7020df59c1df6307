"""What a measurement ran on: device and software versions, recorded with every result."""

from __future__ import annotations

import platform


def software_versions() -> dict[str, str]:
    import torch
    import triton

    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda or "none",
        "hip": torch.version.hip or "none",
    }
    return versions


def device_description() -> dict[str, str]:
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
        "driver": _driver_version(),
    }


def _driver_version() -> str:
    try:
        import pynvml  # nvidia-ml-py, present where CUDA torch is

        pynvml.nvmlInit()
        return pynvml.nvmlSystemGetDriverVersion()
    except Exception:  # noqa: BLE001 - optional information; absence is reported as unknown
        return "unknown"
