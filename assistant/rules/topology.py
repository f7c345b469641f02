"""GPU facts the rules need: memory per GPU, NVLink domain size, architecture generation.

Public figures from NVIDIA product pages (HBM per GPU): A100 80 GB, H100 SXM 80 GB, H200 141 GB,
B200 180 GB (DGX B200: 1,440 GB / 8), B300 288 GB (DGX B300: 2.3 TB / 8), GB200 NVL72 186 GB
(13.4 TB / 72), GB300 NVL72 288 GB (20.7 TB / 72). NVL72 systems join 72 GPUs in one NVLink domain.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_gb: float
    blackwell: bool
    nvlink_domain: int | None  # None: the NVLink domain is the node


GPUS: dict[str, GpuSpec] = {
    spec.name: spec
    for spec in (
        GpuSpec("a100", 80, False, None),
        GpuSpec("h100", 80, False, None),
        GpuSpec("h200", 141, False, None),
        GpuSpec("b200", 180, True, None),
        GpuSpec("b300", 288, True, None),
        GpuSpec("gb200", 186, True, 72),
        GpuSpec("gb300", 288, True, 72),
    )
}


def gpu_spec(gpu_type: str) -> GpuSpec:
    """Look a GPU type up by name (case-insensitive); unknown names are the user's to fix."""
    key = gpu_type.strip().lower()
    if key not in GPUS:
        raise UserError(f"unknown GPU type {gpu_type!r}; choose one of: {', '.join(GPUS)}")
    return GPUS[key]


def nvlink_domain(gpu_type: str, gpus_per_node: int) -> int:
    """How many GPUs share one NVLink domain: the node, or 72 on NVL72-class systems."""
    spec = gpu_spec(gpu_type)
    return spec.nvlink_domain or gpus_per_node


def usable_bytes(gpu_type: str) -> float:
    """HBM bytes on one GPU."""
    return gpu_spec(gpu_type).memory_gb * 1e9
