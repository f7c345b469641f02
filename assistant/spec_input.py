"""Reading an `estimate --spec` file: bounded JSON (size, depth), finite numbers only, and the type and
range every field the estimator reads needs, checked before any of it is used. A wrong spec gets one
message naming each bad field (a spec with ffn_hidden_size=-1 once "fitted" at -445 tokens/s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assistant.bounds import MAX_GPUS, MAX_GPUS_PER_NODE, MAX_SEQ_LEN
from assistant.errors import UserError

MAX_SPEC_BYTES = 1_000_000
MAX_DEPTH = 8  # the spec format nests three levels ({"model": {"recompute_modules": [...]}})
MAX_DIM = 2**24  # a hidden size, head count or vocabulary past every published model

# Fields that must be integers >= 1 (dimensions, counts, parallel sizes) and >= 0 (optional counts).
POSITIVE = {
    "model": (
        "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups",
        "kv_channels", "vocab_size", "num_moe_experts", "moe_router_topk", "moe_ffn_hidden_size",
        "moe_shared_expert_intermediate_size", "q_lora_rank", "kv_lora_rank", "qk_head_dim", "v_head_dim",
        "mamba_num_heads", "mamba_head_dim", "mamba_state_dim", "mamba_num_groups", "moe_latent_size",
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
        "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size",
    ),
    "train": ("micro_batch_size", "global_batch_size"),
    "peft": ("dim",),
}  # fmt: skip
NON_NEGATIVE = {
    "model": ("qk_pos_emb_head_dim", "mtp_num_layers", "recompute_num_layers", "cpu_offloading_num_layers"),
}
BOOLEAN = {
    "model": (
        "gated_linear_unit",
        "multi_latent_attention",
        "sequence_parallel",
        "fp8_param",
        "fp4_param",
        "cpu_offloading",
    ),
    "ddp": ("grad_reduce_in_fp32", "use_distributed_optimizer", "use_megatron_fsdp"),
}
OBJECTS = ("model", "train", "ddp", "peft", "cluster")
LIMITS = {
    "seq_length": MAX_SEQ_LEN,
    "gpus": MAX_GPUS,
    "num_gpus": MAX_GPUS,
    "gpus_per_node": MAX_GPUS_PER_NODE,
}


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows here")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth, stopping past `limit` (a deeply nested file is refused, never walked whole)."""
    stack, deepest = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_spec(text: str, name: str) -> dict[str, Any]:
    """The spec as a dict whose known fields have the right type and range; UserError naming each
    bad field otherwise."""
    if len(text) > MAX_SPEC_BYTES:
        raise UserError(f"spec file {name} is {len(text):,} characters; the limit is {MAX_SPEC_BYTES:,}")
    try:
        spec = json.loads(text, parse_constant=_reject_constant)
    except RecursionError as error:
        raise UserError(f"spec file {name} nests too deeply; a spec is at most {MAX_DEPTH} levels") from error
    except ValueError as error:  # JSONDecodeError, and NaN / Infinity
        raise UserError(f"spec file {name} is not valid JSON: {error}") from error
    if _depth(spec, MAX_DEPTH) > MAX_DEPTH:
        raise UserError(f"spec file {name} nests too deeply; a spec is at most {MAX_DEPTH} levels")
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise UserError('spec file needs a "model" object with Megatron TransformerConfig fields')
    problems = [
        f"{key} must be an object"
        for key in OBJECTS
        if spec.get(key) is not None and not isinstance(spec[key], dict)
    ]
    if problems:
        raise UserError(f"spec file {name}: " + "; ".join(problems))
    problems += _field_problems(spec)
    if problems:
        raise UserError(f"spec file {name}: " + "; ".join(problems))
    return spec


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field_problems(spec: dict[str, Any]) -> list[str]:
    problems = []
    for section, keys in POSITIVE.items():
        for key in keys:
            value = (spec.get(section) or {}).get(key)
            if value is not None and not (_is_int(value) and 1 <= value <= MAX_DIM):
                problems.append(
                    f"{section}.{key} must be a whole number from 1 to {MAX_DIM:,}, got {value!r}"
                )
    for section, keys in NON_NEGATIVE.items():
        for key in keys:
            value = (spec.get(section) or {}).get(key)
            if value is not None and not (_is_int(value) and 0 <= value <= MAX_DIM):
                problems.append(
                    f"{section}.{key} must be a whole number from 0 to {MAX_DIM:,}, got {value!r}"
                )
    for section, keys in BOOLEAN.items():
        for key in keys:
            value = (spec.get(section) or {}).get(key)
            if value is not None and not isinstance(value, bool):
                problems.append(f"{section}.{key} must be true or false, got {value!r}")
    scoped = [("model", "seq_length"), *(("cluster", key) for key in ("gpus", "num_gpus", "gpus_per_node"))]
    for section, key in scoped:
        value = (spec.get(section) or {}).get(key)
        if value is not None and not (_is_int(value) and 1 <= value <= LIMITS[key]):
            problems.append(
                f"{section}.{key} must be a whole number from 1 to {LIMITS[key]:,}, got {value!r}"
            )
    for key in ("name", "mode", "mixed_precision"):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            problems.append(f"{key} must be a string, got {spec[key]!r}")
    return problems


def load_spec(path: Path) -> dict[str, Any]:
    """Read and check one spec file."""
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_SPEC_BYTES + 1)
    except OSError as error:
        raise UserError(f"cannot read spec file {path}: {error.strerror}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"spec file {path} is not UTF-8 text (byte {error.start})") from error
    return parse_spec(text, str(path))
