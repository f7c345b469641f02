"""The run-time environments in which upstream's environment-dependent config helpers are run statically.

A recipe may end with a call such as `apply_flex_dispatcher_backend(cfg.model, "deepep")`, whose effect
depends on `torch.cuda` (is a GPU present, its name and compute capability). The interpreter runs such a
helper once per environment listed here: one per GPU family of knowledge_base/cuda_devices.json, one
without CUDA (upstream's CPU unit tests), and, when the model's expert count comes from the HF config, one
whose model config has no `num_moe_experts` (a unit test's fake AutoBridge provider).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.kb import knowledge_base

NO_CUDA = "no_cuda"
NO_MOE_EXPERTS = "no_num_moe_experts"
# The value before the helper ran: upstream's recipe tests replace apply_flex_dispatcher_backend with a
# no-op (recipe_test_utils.patch_recipe_construction_dependencies).
HELPER_PATCHED_OUT = "helper_patched_out"
PATCHED_OUT_IN_TESTS = frozenset({"apply_flex_dispatcher_backend"})
# The GPU whose value a record's `fields` holds when its name encodes none: library recipes are written
# and tuned for H100 (their docstrings and the h100/ recipe folders).
DEFAULT_GPU = "h100"


@dataclass(frozen=True)
class Environment:
    name: str
    cuda: bool = True
    device_name: str = ""
    major: int = 0
    minor: int = 0
    moe_experts_known: bool = True


@lru_cache(maxsize=4)
def environments(path: Path | None = None) -> tuple[Environment, ...]:
    """Every GPU family of the device table (default: the knowledge base's cuda_devices.json), then the
    CPU-only environment."""
    table = (
        json.loads(path.read_text(encoding="utf-8")) if path else knowledge_base().json("cuda_devices.json")
    )
    devices = table["devices"]
    gpus = tuple(
        Environment(d["gpu"], True, d["device_name"], int(d["major"]), int(d["minor"])) for d in devices
    )
    return (*gpus, Environment(NO_CUDA, cuda=False))


def fake_provider_environment() -> Environment:
    """A unit test's fake AutoBridge: a model config without num_moe_experts, on the default GPU."""
    base = next(e for e in environments() if e.name == DEFAULT_GPU)
    return Environment(
        NO_MOE_EXPERTS, True, base.device_name, base.major, base.minor, moe_experts_known=False
    )
