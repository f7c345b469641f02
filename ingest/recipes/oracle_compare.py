"""Compare upstream's recipe-test assertions (knowledge_base/recipe_oracle.json) with a bundled catalog.

Each assertion is matched to the record of its recipe (benchmark when the test imports it from
megatron.bridge.perf_recipes), to the recorded call its keyword arguments select (peft=None: the full-SFT
variant), and to the value the catalog records for the environment the test sets up: a GPU-dependent
field is read for no CUDA, a fake AutoBridge provider or the helper patched out, else the recipe's own GPU.
An assertion is left out, and counted by reason, when its call sets the asserted field itself, when the
catalog records no call with those arguments, or when the catalog does not know the field statically.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from assistant.records import Catalog, RecipeRecord

MISSING = object()
# Keyword arguments of recipe functions whose name is not the field they set.
KWARG_FIELDS = {
    "finetune_lr": ("optimizer.lr", "scheduler"),
    "lr": ("optimizer.lr", "scheduler"),
    "min_lr": ("optimizer.min_lr", "scheduler"),
    "lr_warmup_iters": ("scheduler",),
    "train_iters": ("train.train_iters", "scheduler"),
    "seq_length": ("dataset.seq_length", "model.seq_length", "dataset"),
    "dataset_type": ("dataset",),
    "dir": ("checkpoint", "logger"),
    "name": ("checkpoint", "logger"),
    "mock": ("dataset",),
    "precision_config": ("mixed_precision",),
    "pretrained_checkpoint": ("checkpoint",),
    "packed_sequence": ("dataset", "model.seq_length"),
    "hf_path": ("model", "tokenizer", "dataset"),
    "hf_model_path": ("model", "tokenizer", "dataset"),
    "optimizer_type": ("optimizer", "ddp", "mixed_precision"),
    "lora_on_language_model": ("peft",),
    "lora_on_vision_model": ("peft",),
}
PEFT_KWARGS = ("peft", "peft_scheme")


@dataclass
class Comparison:
    compared: int = 0
    agreed: int = 0
    on_mutated_fields: int = 0  # compared assertions on a field an upstream helper sets after construction
    by_environment: Counter = field(default_factory=Counter)
    left_out: Counter = field(default_factory=Counter)
    disagreements: list[dict[str, Any]] = field(default_factory=list)


def _record(catalog: Catalog, row: dict[str, Any]) -> RecipeRecord | None:
    kind = "benchmark" if row["module"].startswith("megatron.bridge.perf_recipes") else "library"
    matches = [r for r in catalog.recipes if r.name == row["recipe"]]
    matches.sort(key=lambda r: r.kind != kind)
    return matches[0] if matches else None


def _called(record: RecipeRecord, call: dict[str, Any]) -> tuple[dict[str, Any], RecipeRecord | None]:
    """(the keyword arguments left to exclude fields for, the record as called) or None when not recorded."""
    rest = dict(call)
    chosen = [key for key in PEFT_KWARGS if key in rest]
    if not chosen:
        return rest, record
    peft = rest.pop(chosen[0])
    peft = None if isinstance(peft, str) and peft.lower() == "none" else peft
    own = record.peft
    if (peft is None and own is None and "peft._target_" not in record.fields) or (
        isinstance(peft, str) and own == peft.lower()
    ):
        return rest, record
    for variant in record.variants:
        if variant.call.get("peft") == peft:
            fields = {**record.fields, **variant.changed}
            as_called = record.model_copy(
                update={"fields": fields, "peft": variant.peft, "mode": variant.mode}
            )
            return rest, as_called
    return rest, None


def _overridden(path: str, call: dict[str, Any]) -> bool:
    """The test's own keyword arguments set this field (recipe kwargs are named after the field they set)."""
    leaf = path.rsplit(".", 1)[-1]
    for key in call:
        if key == leaf or key in path.split("."):
            return True
        if any(path == target or path.startswith(target + ".") for target in KWARG_FIELDS.get(key, ())):
            return True
    return False


def _environment_value(record: RecipeRecord, path: str, env: list[str]) -> tuple[Any, str]:
    value = record.gpu_dependent.get(path)
    if value is None:
        return record.fields.get(path, MISSING), "recipe"
    for name in ("helper_patched_out", "no_cuda"):
        if name in env and name in value.environments:
            return value.environments[name], name
        if name in env and name in value.raises:
            return MISSING, name
    if "fake_autobridge" in env and "no_num_moe_experts" in value.environments:
        return value.environments["no_num_moe_experts"], "no_num_moe_experts"
    return record.fields.get(path, MISSING), value.assumed


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _same(e, a) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, str) and isinstance(actual, str) and expected != actual:
        # An enum or constant written as a dotted name: the catalog keeps its member name
        # (CudaGraphScope.attn -> attn) or the full dotted name (torch.bfloat16).
        short = expected.rsplit(".", 1)[-1]
        return actual in (short,) or actual.endswith("." + expected) or actual.rsplit(".", 1)[-1] == short
    return expected == actual


def compare(rows: list[dict[str, Any]], catalog: Catalog) -> Comparison:
    result = Comparison()
    for row in rows:
        record = _record(catalog, row)
        if record is None:
            result.left_out["recipe not in the catalog"] += 1
            result.disagreements.append({**row, "actual": "<no record>"})
            continue
        if row["call"] is None:
            result.left_out["called with arguments not known statically"] += 1
            continue
        rest, as_called = _called(record, row["call"])
        if as_called is None:
            result.left_out["called with a peft value the catalog records no call for"] += 1
            continue
        path = row["path"]
        if _overridden(path, rest):
            result.left_out["the test's own arguments set the field"] += 1
            continue
        set_by_env = [e for e in row["env"] if e.startswith("env:") and e in as_called.unknown]
        if set_by_env:
            result.left_out["read from an environment variable the test sets"] += 1
            continue
        actual, environment = _environment_value(as_called, path, row["env"])
        if actual is MISSING:
            if path in as_called.unknown:
                result.left_out["field not known statically in the catalog"] += 1
            else:
                result.left_out["field not written by the recipe (an upstream default)"] += 1
            continue
        if isinstance(actual, str) and actual.startswith(("AutoBridge.", "AutoConfig.")):
            result.left_out["provider class decided by the HF config"] += 1
            continue
        if row.get("op") == "isinstance" and not _same(row["expected"], actual):
            result.left_out["isinstance of a base class (the catalog records the exact class)"] += 1
            continue
        result.compared += 1
        result.by_environment[environment] += 1
        if path in as_called.gpu_dependent:
            result.on_mutated_fields += 1
        if _same(row["expected"], actual):
            result.agreed += 1
        else:
            result.disagreements.append({**row, "actual": actual, "environment": environment})
    return result
