"""Decode what a recipe name encodes: task, GPU count and type, precision, variant.

Grammar of v0.6.0+ names (`recipes/utils/naming.py` upstream):
    <model>_<task>_<N>gpu_<hw>_<precision>[_<variant>]_config
with one known exception where the variant precedes the GPU count
(`qwen35_vl_35b_a3b_sft_long_context_32gpu_h100_bf16_config`, survey H10).
Old performance constants (<= v0.5.1) read
    <MODEL>_<TASK>_CONFIG_<GPU>[_<PREC>][_<VARIANT>]
with TASK in PRETRAIN|SFT|LORA and PREC like BF16, FP8_CS, FP8_MX. The first of them (v0.2.0) read
    <MODEL>_<GPU>[_<TASK>][_<PREC>]_BASE_CONFIG
with TASK in SFT|LORA (none for pretraining).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRECISIONS = ("bf16", "fp8cs", "fp8ds", "fp8mx", "fp8sc", "nvfp4")
HARDWARE_NAME = re.compile(
    r"^(?P<model>.+?)_(?P<task>pretrain|sft|peft)(?:_(?P<pre_variant>[a-z0-9_]+?))?_(?P<gpus>\d+)gpu_"
    r"(?P<gpu>[a-z0-9]+)_(?P<precision>" + "|".join(PRECISIONS) + r")(?:_(?P<variant>[a-z0-9_]+?))?_config$"
)
OLD_PERF_NAME = re.compile(
    r"^(?P<model>.+?)_(?P<task>PRETRAIN|SFT|LORA)_CONFIG_(?P<gpu>[A-Z]+\d+)"
    r"(?:_(?P<precision>BF16|FP8_CS|FP8_DS|FP8_MX|FP8_SC|NVFP4|FP8))?(?:_(?P<variant>[A-Z0-9_]+))?$"
)
FIRST_PERF_NAME = re.compile(
    r"^(?P<model>.+?)_(?P<gpu>[A-Z]+\d+)(?:_(?P<task>SFT|LORA))?"
    r"(?:_(?P<precision>BF16|FP8_CS|FP8_DS|FP8_MX|FP8_SC|NVFP4|FP8))?_BASE_CONFIG$"
)
TASK_TO_MODE = {"pretrain": "pretrain", "sft": "sft", "peft": "peft", "lora": "peft", "finetune": "sft"}
MIXED_PRECISION_TO_TOKEN = {
    "bf16_mixed": "bf16",
    "bf16_with_fp8_current_scaling_mixed": "fp8cs",
    "bf16_with_fp8_delayed_scaling_mixed": "fp8ds",
    "bf16_with_mxfp8_mixed": "fp8mx",
    "bf16_with_fp8_subchannel_scaling_mixed": "fp8sc",
    "bf16_with_nvfp4_mixed": "nvfp4",
    "fp16_mixed": "fp16",
}


@dataclass(frozen=True)
class EncodedName:
    task: str | None
    gpus: int | None = None
    gpu_type: str | None = None
    precision: str | None = None
    variant: str | None = None


def decode_name(name: str) -> EncodedName:
    """Hardware-encoded names give everything; other names give only the task."""
    match = HARDWARE_NAME.match(name)
    if match:
        variant = "_".join(v for v in (match["pre_variant"], match["variant"]) if v) or None
        return EncodedName(match["task"], int(match["gpus"]), match["gpu"], match["precision"], variant)
    old = OLD_PERF_NAME.match(name.upper()) if "_config_" in name.lower() else None
    if old:
        precision = old["precision"].lower().replace("_", "") if old["precision"] else None
        variant = old["variant"].lower() if old["variant"] else None
        return EncodedName(old["task"].lower(), None, old["gpu"].lower(), precision, variant)
    first = FIRST_PERF_NAME.match(name.upper()) if name.lower().endswith("_base_config") else None
    if first:
        precision = first["precision"].lower().replace("_", "") if first["precision"] else None
        return EncodedName((first["task"] or "pretrain").lower(), None, first["gpu"].lower(), precision)
    return EncodedName(task_from_name(name))


def task_from_name(name: str) -> str | None:
    """pretrain/sft/peft/lora/finetune token in a name such as llama3_70b_lora_config_h100."""
    for token in ("pretrain", "sft", "peft", "lora", "dora", "finetune"):
        if re.search(rf"(^|_){token}(_|$)", name):
            return "peft" if token == "dora" else token
    return None


def mode_of(task: str | None) -> str | None:
    return TASK_TO_MODE.get(task) if task else None
