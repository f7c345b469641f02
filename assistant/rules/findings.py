"""Small helpers shared by the rule functions: building findings and picking fix values."""

from __future__ import annotations

from math import isqrt
from typing import Any, Literal

from assistant.messages import Message
from assistant.records import Finding, ModelArch
from assistant.rules.versions import traits

Severity = Literal["error", "warning", "info"]


def finding(
    rule_id: str,
    severity: Severity,
    message: Message,
    *,
    upstream_error: str | None = None,
    fix: str | None = None,
) -> Finding:
    """A finding; its catalog Message is put in words in both languages, as the JSON carries both."""
    return Finding(
        id=rule_id,
        severity=severity,
        message=message.render("en"),
        message_zh=message.render("zh"),
        upstream_error=upstream_error,
        fix=fix,
    )


def render_value(value: Any) -> str:
    """Hydra literal for one override value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ",".join(render_value(item) for item in value) + "]"
    return str(value)


def kv(**pairs: Any) -> str:
    """'model.x=1 train.y=2' from keyword pairs whose names use '__' for '.'."""
    return " ".join(f"{key.replace('__', '.')}={render_value(value)}" for key, value in pairs.items())


def mamba_tp_allowed(arch: ModelArch, tp: int) -> bool:
    """Megatron-Core's MambaMixer splits its heads and B/C groups over the TP ranks."""
    return not arch.mamba_num_heads or (
        arch.mamba_num_heads % tp == 0 and (arch.mamba_num_groups or 1) % tp == 0
    )


def head_shapes(arch: ModelArch) -> list[tuple[int, int]]:
    """(query heads, KV groups) of each attention shape: the main one, then a second one (ModelArch other_*),
    whose layers Megatron builds from a config copy with those sizes, so TP must divide both."""
    heads = arch.num_attention_heads
    shapes = [(heads, arch.num_query_groups or heads)]
    if arch.other_attention_layers and arch.other_num_attention_heads:
        other = arch.other_num_attention_heads
        shapes.append((other, arch.other_num_query_groups or other))
    return shapes


def tp_allowed(arch: ModelArch, tp: int, version: str) -> bool:
    """The head and KV-group checks Megatron-Core applies to one TP value in this version."""
    if not mamba_tp_allowed(arch, tp):
        return False
    loose = traits(version).query_groups_multiple_or_divisor
    return all(
        heads % tp == 0 and (groups % tp == 0 or (loose and tp % groups == 0))
        for heads, groups in head_shapes(arch)
    )


def effective_etp(etp: int | None, tp: int, ep: int, version: str) -> int:
    """The ETP a run uses: explicit, else 1 with EP > 1 from Bridge 0.6.0, else Megatron-Core's TP."""
    if etp is not None:
        return etp
    if ep > 1 and traits(version).etp_defaults_to_one:
        return 1
    return tp


def divisors(value: int) -> list[int]:
    """The divisors of `value` in ascending order, in O(sqrt(value)) steps."""
    small = [d for d in range(1, isqrt(value) + 1) if value % d == 0]
    return small + [value // d for d in reversed(small) if d * d != value]


def next_pow2(value: float) -> int:
    result = 1
    while result < value:
        result *= 2
    return result
