"""GPU facts the rules need (memory per GPU, NVLink reach, generation), read from the one GPU table that
the estimators use too: knowledge_base/hardware.json, through assistant.hardware_data (read once).

hardware_data is imported inside the functions: it imports the estimators, and they import the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.estimate.hardware import GpuSpec


def gpu_spec(gpu_type: str) -> GpuSpec:
    """Look a GPU type or alias up ("h100", "DGX-GB200"); an unknown name is a UserError listing the known."""
    from assistant import hardware_data

    return hardware_data.gpu_spec(gpu_type)


def nvlink_domain(gpu_type: str, gpus_per_node: int) -> int:
    """How many GPUs share one NVLink domain: the node, or 72 on NVL72-class systems."""
    return gpu_spec(gpu_type).nvlink_group(gpus_per_node)


def usable_bytes(gpu_type: str) -> float:
    """Memory one GPU gives a training process."""
    return gpu_spec(gpu_type).usable_bytes
