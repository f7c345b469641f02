"""GPU hardware records built from knowledge_base/hardware.json data (the caller reads the file)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant.errors import UserError
from assistant.records import Record

GIB = 1024**3
BASEBOARD_GPUS = 8  # an HGX/DGX baseboard joins up to 8 GPUs; larger NVLink domains (NVL72) span nodes


class GpuSpec(Record):
    """Dense peaks in TFLOP/s, memory in bytes, bandwidths in bytes/s per GPU and direction."""

    key: str
    name: str
    generation: str  # ampere, hopper, blackwell
    peak_tflops: dict[str, float | None]
    hbm_capacity_bytes: float
    usable_bytes: float
    hbm_bw: float
    nvlink_bw: float
    nvlink_domain: int
    network_bw: float
    host_bw: float  # GPU-CPU link (PCIe or NVLink-C2C): what CPU activation offloading moves data over
    host_memory_bytes: float  # CPU memory per GPU, where offloaded activations wait
    aliases: list[str] = []
    approximate: list[str] = []
    calibrated_as: str | None = None  # a variant without published runs uses this GPU's efficiencies
    peaks_unknown: str | None = None  # why no tensor-core peak is known (throughput is then not estimated)

    @property
    def calibration_key(self) -> str:
        return self.calibrated_as or self.key

    @property
    def blackwell(self) -> bool:
        """Blackwell or newer (Rubin keeps Blackwell's MXFP8/NVFP4 tensor cores)."""
        return self.generation in ("blackwell", "rubin")

    def nvlink_group(self, gpus_per_node: int) -> int:
        """GPUs that reach each other over NVLink: the whole NVL72 rack, or the GPUs of one node."""
        if self.nvlink_domain > BASEBOARD_GPUS:
            return self.nvlink_domain
        return min(self.nvlink_domain, gpus_per_node)

    def peak_flops(self, precision: str) -> float:
        """Peak FLOP/s of the tensor cores a precision runs on (MXFP8/FP8-CS use FP8, NVFP4 uses FP4)."""
        unit = precision_unit(precision)
        value = self.peak_tflops.get(unit)
        if value is None and self.peaks_unknown:
            raise UserError(f"throughput not estimated on {self.name}: {self.peaks_unknown}")
        if value is None:
            raise UserError(f"{self.name} has no {unit.upper()} tensor cores; use --precision bf16")
        return float(value) * 1e12


def precision_unit(precision: str) -> str:
    """Map a recipe precision name to the tensor-core rate it runs at: bf16, fp8 or fp4."""
    p = precision.lower().replace("-", "_")
    if "fp4" in p:
        return "fp4"
    if "fp8" in p:
        return "fp8"
    if p in {"bf16", "bf16_mixed", "fp16", "fp16_mixed", "16_mixed", "bf16-mixed"}:
        return "bf16"
    raise UserError(f"unknown precision {precision!r}; use bf16, fp8, fp8_cs, mxfp8 or nvfp4")


def load_hardware(data: dict[str, Any]) -> dict[str, GpuSpec]:
    """Build GpuSpec records from the parsed hardware.json mapping (no I/O here)."""
    specs: dict[str, GpuSpec] = {}
    for key, row in data["gpus"].items():
        specs[key] = GpuSpec(
            key=key,
            name=row["name"],
            generation=row["generation"],
            peak_tflops=row["peak_tflops"],
            hbm_capacity_bytes=row["hbm_capacity_gib"] * GIB,
            usable_bytes=row["usable_gib"] * GIB,
            hbm_bw=row["hbm_bw_gbps"] * 1e9,
            nvlink_bw=row["nvlink_bw_gbps"] * 1e9,
            nvlink_domain=row["nvlink_domain"],
            network_bw=row["network_bw_gbps"] * 1e9,
            host_bw=row["host_link_gbps"] * 1e9,
            host_memory_bytes=row["host_memory_gib"] * GIB,
            aliases=row.get("aliases", []),
            approximate=row.get("approximate", []),
            calibrated_as=row.get("calibrated_as"),
            peaks_unknown=row.get("peaks_unknown"),
        )
    return specs


def resolve_gpu(specs: Mapping[str, GpuSpec], gpu_type: str) -> GpuSpec:
    """Find a GPU by key or alias, case-insensitively ("DGX-H100", "h100", "a100-40g")."""
    wanted = gpu_type.strip().lower().replace(" ", "-")
    for spec in specs.values():
        names = {spec.key, *(a.lower() for a in spec.aliases)}
        if wanted in names or wanted.replace("-", "_") in names:
            return spec
    known = ", ".join(sorted(specs))
    raise UserError(f"unknown GPU type {gpu_type!r}; known types: {known}")
