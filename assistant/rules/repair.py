"""The overrides, taken from the rules' own fixes, after which a config passes the rule module.

Every step is re-checked by `validate`, so a fix the answer gives is one the rules accept, not one they
merely suggested. `self_check` runs this on a recipe's own defaults at its own GPU count (catalog build time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant.errors import UserError
from assistant.estimate.hardware import GpuSpec, resolve_gpu
from assistant.records import Cluster, Finding, LauncherSpec, ModelArch, RecipeRecord, SelfCheck
from assistant.rules.config import build_config, parse_overrides
from assistant.rules.validate import validate

MAX_STEPS = 4
# Checks on what the user brings at launch (their checkpoint, their dataset flag), not on the recipe itself.
LAUNCH_INPUT_RULES = frozenset({"peft-checkpoint", "dataset-flag", "dataset-unknown", "mode-dataset"})
# GB200/GB300 NVL72 compute trays hold 4 GPUs (upstream's perf launcher uses 4 per node for them).
_GPUS_PER_NODE = {"gb200": 4, "gb300": 4}


@dataclass(frozen=True)
class Repair:
    """`fix`: overrides added on top of the user's; `remaining`: errors still raised with them (none: the
    fix re-validates)."""

    fix: dict[str, Any] = field(default_factory=dict)
    remaining: list[Finding] = field(default_factory=list)

    @property
    def passes(self) -> bool:
        return not self.remaining


def errors_of(
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    launcher: LauncherSpec | None = None,
    ignore: frozenset[str] = frozenset(),
    *,
    hardware: Mapping[str, GpuSpec],
) -> list[Finding]:
    """The errors the rules find with these overrides (`hardware`: the GPU table the cluster's type is
    looked up in; an unknown type is a UserError)."""
    config = build_config(record, overrides, version=version)
    found = validate(config, arch, cluster, version, launcher, gpu=resolve_gpu(hardware, cluster.gpu_type))
    return [f for f in found if f.severity == "error" and f.id not in ignore]


def _fix_of(finding: Finding) -> dict[str, Any] | None:
    if not finding.fix:
        return None
    try:
        return parse_overrides(finding.fix.split())
    except UserError:
        return None


def repair(
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    launcher: LauncherSpec | None = None,
    ignore: frozenset[str] = frozenset(),
    *,
    hardware: Mapping[str, GpuSpec],
) -> Repair:
    """Apply the first error's fix, re-validate, repeat (MAX_STEPS at most); stop when a fix adds nothing."""
    fix: dict[str, Any] = {}
    errors = errors_of(record, overrides, arch, cluster, version, launcher, ignore, hardware=hardware)
    for _ in range(MAX_STEPS):
        if not errors:
            break
        step = next((f for f in map(_fix_of, errors) if f), None)
        if not step or all(key in fix and fix[key] == value for key, value in step.items()):
            break
        fix.update(step)
        errors = errors_of(
            record, {**overrides, **fix}, arch, cluster, version, launcher, ignore, hardware=hardware
        )
    return Repair(fix=fix, remaining=errors)


def own_cluster(record: RecipeRecord) -> Cluster:
    """The GPUs a recipe is written for: the count its name encodes, else its layout's minimum world size."""
    gpus = record.encoded_gpus or record.min_gpus or 1
    gpu_type = (record.gpu_type or "h100").lower()
    return Cluster(num_gpus=gpus, gpu_type=gpu_type, gpus_per_node=min(gpus, _GPUS_PER_NODE.get(gpu_type, 8)))


def self_check(
    record: RecipeRecord, arch: ModelArch | None, version: str, *, hardware: Mapping[str, GpuSpec]
) -> SelfCheck | None:
    """The rule module on the recipe's defaults at its own GPU count; None when its values cannot be read.
    Checks of what the user supplies at launch (LAUNCH_INPUT_RULES) do not make a recipe fail."""
    cluster = own_cluster(record)
    ignore = LAUNCH_INPUT_RULES
    try:
        errors = errors_of(record, {}, arch, cluster, version, ignore=ignore, hardware=hardware)
        fixed = (
            repair(record, {}, arch, cluster, version, ignore=ignore, hardware=hardware)
            if errors
            else Repair()
        )
    except UserError:
        return None  # an unknown GPU type or a value the rules cannot type: nothing to say
    return SelfCheck(
        passes=not errors,
        gpus=cluster.num_gpus,
        gpu_type=cluster.gpu_type,
        failing_rules=sorted({f.id for f in errors}),
        upstream_errors=[f.upstream_error for f in errors if f.upstream_error],
        fix=fixed.fix if errors and fixed.passes and fixed.fix else None,
        arch_known=arch is not None,
    )
