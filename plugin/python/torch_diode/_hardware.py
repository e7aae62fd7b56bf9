"""What GPU this process sees, through torch (imported by the caller's choice, never here at
module load)."""

from __future__ import annotations


def gpu_identity(device: int = 0) -> dict:
    """Name, SM count, memory, compute capability and driver of one CUDA device. Needs torch
    with a GPU."""
    import torch

    props = torch.cuda.get_device_properties(device)
    hw = {
        "gpu": torch.cuda.get_device_name(device),
        "sm_count": props.multi_processor_count,
        "memory_mb": props.total_memory // (1 << 20),
        "cc": f"{props.major}.{props.minor}",
        "driver": "",
        "cuda": torch.version.cuda or "",
    }
    try:
        import pynvml

        pynvml.nvmlInit()
        drv = pynvml.nvmlSystemGetDriverVersion()
        hw["driver"] = drv.decode() if isinstance(drv, bytes) else drv
    except Exception:  # the driver version is nice to have
        pass
    return hw


def detect() -> dict:
    """{"available": True, ...gpu_identity()} or {"available": False, "reason": "..."}."""
    try:
        import torch
    except Exception as e:  # reported as the reason, never raised
        return {"available": False, "reason": f"torch cannot be imported: {e}"}
    try:
        if not torch.cuda.is_available():
            return {"available": False, "reason": "torch sees no CUDA GPU"}
        return {"available": True, **gpu_identity(torch.cuda.current_device())}
    except Exception as e:  # a broken CUDA setup: reported, never raised
        return {"available": False, "reason": f"GPU detection failed: {e}"}
