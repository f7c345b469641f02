"""The effective config: a recipe's statically known values with the user's KEY=VALUE overrides on top.

Overrides are parsed by Hydra's own override parser (`hydra-core`), as Megatron-Bridge parses them.
The v0.6.0 run_recipe.py short names (tp, pp, cp, vp, ep, etp, mbs,
gbs, seq_length/sl) are accepted and expanded to the dotted keys they set.
"""

from __future__ import annotations

import copy
import math
import threading
from functools import lru_cache
from typing import Any

from pydantic import Field

from assistant.errors import UserError
from assistant.records import Mode, RecipeRecord, Record
from assistant.rules.features import precision_of_preset
from assistant.rules.versions import normalize_version

SHORTCUTS: dict[str, tuple[str, ...]] = {
    "tp": ("model.tensor_model_parallel_size",),
    "pp": ("model.pipeline_model_parallel_size",),
    "vp": ("model.virtual_pipeline_model_parallel_size",),
    "cp": ("model.context_parallel_size",),
    "ep": ("model.expert_model_parallel_size",),
    "etp": ("model.expert_tensor_parallel_size",),
    "sp": ("model.sequence_parallel",),
    "mbs": ("train.micro_batch_size",),
    "gbs": ("train.global_batch_size",),
    "seq_length": ("model.seq_length", "dataset.seq_length"),
    "sl": ("model.seq_length", "dataset.seq_length"),
    "tensor_model_parallel_size": ("model.tensor_model_parallel_size",),
    "pipeline_model_parallel_size": ("model.pipeline_model_parallel_size",),
    "virtual_pipeline_model_parallel_size": ("model.virtual_pipeline_model_parallel_size",),
    "context_parallel_size": ("model.context_parallel_size",),
    "expert_model_parallel_size": ("model.expert_model_parallel_size",),
    "expert_tensor_parallel_size": ("model.expert_tensor_parallel_size",),
    "micro_batch_size": ("train.micro_batch_size",),
    "global_batch_size": ("train.global_batch_size",),
}

_GRAMMAR_DOCS = "https://hydra.cc/docs/advanced/override_grammar/basic/"
_LEXER_ERROR = "LexerNoViableAltException: "
# Hydra's package imports itself in a cycle: two threads importing it at once (the Gradio and Slack workers
# do) hit importlib's deadlock detection and get a half-initialised module. One lock serialises the import and
# the parse; the ANTLR runtime's shared DFA cache is not documented as thread-safe either.
_HYDRA_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _parser():
    # Lazy: importing hydra (omegaconf, antlr4) costs about 0.3 s, paid only by a command given overrides.
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create()


def _grammar_error(item: str, error: Exception) -> UserError:
    """Hydra's parse error in one line, without its ANTLR caret drawing or traceback."""
    lines = [line for line in str(error).splitlines() if line.strip() and not line.startswith("See http")]
    if lines and lines[0].startswith(_LEXER_ERROR) and len(lines) > 1:
        position = max(0, lines[1].index("^") - len(_LEXER_ERROR))
        reason = f"unexpected character {item[position : position + 1]!r} at position {position + 1}"
    else:
        reason = lines[-1] if lines else "cannot be parsed"
    return UserError(
        f"malformed override {item!r}: {reason}. Write KEY=VALUE as Hydra reads it, e.g. "
        f"model.tensor_model_parallel_size=2 or train.global_batch_size=64 (grammar: {_GRAMMAR_DOCS})"
    )


@lru_cache(maxsize=4096)
def _parse_one(item: str) -> tuple[str, bool, Any]:
    """(key, is a deletion, value) of one override; cached, since answers re-parse the same fix strings."""
    with _HYDRA_LOCK:
        # lazy: Hydra loads only on this path (start-up time)
        from hydra.errors import HydraException

        try:
            override = _parser().parse_overrides([item])[0]
        except HydraException as error:
            raise _grammar_error(item, error) from None
    key = override.key_or_group
    if not key:
        raise UserError(f"malformed override {item!r}: the key is missing; write KEY=VALUE, e.g. tp=2")
    if override.package is not None or "/" in key:
        raise UserError(
            f"override {item!r} selects a Hydra config group; Megatron-Bridge recipes take dotted "
            "config keys only, e.g. model.tensor_model_parallel_size=2"
        )
    if override.is_sweep_override():
        raise UserError(
            f"override {item!r} is a sweep (one run per value); give one value, "
            f"or a list in brackets: {key}=[1,2]"
        )
    return key, override.is_delete(), override.value()


def parse_value(text: str) -> Any:
    """Read one override value exactly as Hydra reads a command-line value (null, true, 1e-4, [lists],
    {dicts}, 'quoted'; `none` stays the string "none", as upstream)."""
    return copy.deepcopy(_parse_one(f"value={text}")[2])


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """['tp=2', 'train.global_batch_size=64'] -> dotted keys and values; malformed input -> UserError.

    Parsed by Hydra's own OverridesParser, as Megatron-Bridge parses its CLI overrides
    (training/utils/omegaconf_utils.py). `+key=` and `++key=` set the key like `key=`; `~key` drops it, so
    the recipe's value stands (Bridge deletes the key from the override dict it applies); `${...}` values stay
    text, since only the full run config can resolve them.
    """
    parsed: dict[str, Any] = {}
    for item in items:
        key, delete, value = _parse_one(item)
        for target in SHORTCUTS.get(key, (key,)):
            if delete:
                parsed.pop(target, None)
            else:
                parsed[target] = copy.deepcopy(value)  # the cached value is shared: callers get their own
    return parsed


class EffectiveConfig(Record):
    """Values a run would use: the recipe's, then the user's overrides. None = unknown / upstream default."""

    recipe: str
    version: str
    kind: str = "library"
    family: str = ""
    mode: Mode | None = None
    hf_model_id: str | None = None
    tp: int = 1
    pp: int = 1
    vp: int | None = None
    cp: int = 1
    ep: int = 1
    etp: int | None = None
    sp: bool = False
    seq_length: int | None = None
    model_seq_length: int | None = None
    global_batch_size: int | None = None
    micro_batch_size: int | None = None
    precision: str | None = None
    peft: str | None = None
    recompute_granularity: str | None = None
    cuda_graph_impl: str = "none"
    cuda_graph_scope: list[str] = Field(default_factory=list)
    use_te_rng_tracker: bool = False
    fsdp: bool = False
    cpu_offloading: bool = False
    cpu_offloading_num_layers: int | None = None
    packed_sequence: bool = False
    packed_sequence_size: int | None = None
    pad_to_max_length: bool | None = None
    dataset_target: str | None = None  # the dataset config class the recipe builds, when known
    pad_cu_seqlens: bool | None = None
    calculate_per_token_loss: bool = False
    average_in_collective: bool = True
    overlap_grad_reduce: bool | None = None
    cp_comm_type: str | list[str] | None = None
    hierarchical_context_parallel_sizes: list[int] | None = None
    check_for_nan_in_loss: bool = True
    pretrained_checkpoint: str | None = None
    dataset: str | None = None
    layout_builder: str | None = None  # RecipeRecord.layout_builder
    # The recipe assigns its pipeline layout from a call the catalog extractor could not evaluate (the layout
    # is in RecipeRecord.unknown): one exists, built for the recipe's own PP and VP; its stages are unknown.
    layout_unread: bool = False
    # Model what run_recipe.py does to the config after the overrides (rebuild a recipe-owned layout, clear
    # stale edge-stage counts); False checks the config as another entry point, or an older checkout, sees it.
    runner_sync: bool = True
    user_overrides: dict[str, Any] = Field(default_factory=dict)
    values: dict[str, Any] = Field(default_factory=dict)

    @property
    def graphs_enabled(self) -> bool:
        return self.cuda_graph_impl not in ("none", "")

    @property
    def is_peft(self) -> bool:
        return self.mode == "peft" or bool(self.peft)

    @property
    def is_finetune(self) -> bool:
        return self.mode in ("sft", "peft") or bool(self.peft)


def _first(values: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((values[key] for key in keys if values.get(key) is not None), None)


# Sizes and counts a run divides by: 0 or less is a typo, not a setting.
_AT_LEAST_ONE = frozenset(
    {
        "model.tensor_model_parallel_size",
        "model.pipeline_model_parallel_size",
        "model.context_parallel_size",
        "model.expert_model_parallel_size",
        "model.expert_tensor_parallel_size",
        "train.global_batch_size",
        "train.micro_batch_size",
        "dataset.seq_length",
        "model.seq_length",
    }
)


def _as_int(value: Any, key: str) -> int | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or int(value) != value
    ):
        raise UserError(f"{key} must be an integer, got {value!r}")
    return int(value)


def _as_bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return bool(value)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(item).split(".")[-1].lower() for item in value]
    return [str(value).split(".")[-1].lower()]


def _pad_to_max_length(values: dict[str, Any]) -> bool | None:
    """Bridge accepts the flag on the dataset config or inside its dataset_kwargs."""
    kwargs = values.get("dataset.dataset_kwargs")
    nested = kwargs.get("pad_to_max_length") if isinstance(kwargs, dict) else None
    for value in (
        values.get("dataset.pad_to_max_length"),
        values.get("dataset.dataset_kwargs.pad_to_max_length"),
        nested,
    ):
        if value is not None:
            return _as_bool(value, False)
    return None


def _precision(user: dict[str, Any], recipe_precision: str | None) -> str | None:
    """The recipe's precision, or the one a `mixed_precision=<preset>` override switches it to."""
    preset = user.get("mixed_precision")
    return (precision_of_preset(preset) if isinstance(preset, str) else None) or recipe_precision


def build_config(
    record: RecipeRecord,
    overrides: dict[str, Any] | list[str] | None = None,
    *,
    version: str | None = None,
    dataset: str | None = None,
) -> EffectiveConfig:
    """Merge a recipe record with user overrides into typed effective values."""
    user = parse_overrides(overrides) if isinstance(overrides, list) else dict(overrides or {})
    values: dict[str, Any] = dict(record.fields)
    par = record.parallelism
    seeded = {
        "model.tensor_model_parallel_size": par.tp,
        "model.pipeline_model_parallel_size": par.pp,
        "model.virtual_pipeline_model_parallel_size": par.vp,
        "model.context_parallel_size": par.cp,
        "model.expert_model_parallel_size": par.ep,
        "model.expert_tensor_parallel_size": par.etp,
        "model.sequence_parallel": par.sp,
        "train.global_batch_size": record.global_batch_size,
        "train.micro_batch_size": record.micro_batch_size,
        "dataset.seq_length": record.seq_length,
        "model.seq_length": record.model_seq_length or record.seq_length,
        "model.recompute_granularity": record.recompute,
    }
    for key, value in seeded.items():
        if value is not None:
            values.setdefault(key, value)
    if record.cuda_graph is not None:
        if record.cuda_graph.impl is not None:
            values.setdefault("model.cuda_graph_impl", record.cuda_graph.impl)
        if record.cuda_graph.scope is not None:
            values.setdefault("model.cuda_graph_scope", record.cuda_graph.scope)
    values.update(user)

    def integer(*keys: str, default: int | None = None) -> int | None:
        key = next((k for k in keys if values.get(k) is not None), keys[0])
        raw = values.get(key)
        if key not in user and (isinstance(raw, bool) or not isinstance(raw, int)):
            raw = None  # a recipe expression we could not evaluate statically
        value = _as_int(raw, key)
        if value is not None and value < 1 and key in user and key in _AT_LEAST_ONE:
            raise UserError(f"{key} must be at least 1, got {value}")
        return default if value is None else value

    def size(key: str) -> int:
        """A parallel size: the value, or 1 when unset."""
        value = integer(key, default=1)
        return 1 if value is None else value

    dataset_seq = integer("dataset.seq_length")
    model_seq = integer("model.seq_length")
    packed_size = integer(
        "dataset.packed_sequence_specs.packed_sequence_size",
        "dataset.offline_packing_specs.packed_sequence_size",
    )
    packed = (
        bool(record.packed_sequence)
        or _as_bool(values.get("dataset.enable_offline_packing"), False)
        or (packed_size is not None and packed_size > 0)
    )
    if packed_size is not None and packed_size <= 0 and "dataset.enable_offline_packing" not in values:
        packed = False
    scope = _as_list(_first(values, ("model.cuda_graph_modules", "model.cuda_graph_scope")))
    fsdp = _as_bool(_first(values, ("ddp.use_megatron_fsdp", "dist.use_megatron_fsdp")), bool(record.fsdp))
    return EffectiveConfig(
        recipe=record.name,
        version=normalize_version(version or record.version),
        kind=record.kind,
        family=record.family,
        mode=record.mode,
        hf_model_id=record.hf_model_id,
        tp=size("model.tensor_model_parallel_size"),
        pp=size("model.pipeline_model_parallel_size"),
        vp=integer("model.virtual_pipeline_model_parallel_size"),
        cp=size("model.context_parallel_size"),
        ep=size("model.expert_model_parallel_size"),
        etp=integer("model.expert_tensor_parallel_size"),
        sp=_as_bool(values.get("model.sequence_parallel"), False),
        seq_length=dataset_seq if dataset_seq is not None else model_seq,
        model_seq_length=model_seq,
        global_batch_size=integer("train.global_batch_size"),
        micro_batch_size=integer("train.micro_batch_size"),
        precision=_precision(user, record.precision),
        peft=None
        if values.get("peft", record.peft) in (None, "none")
        else str(values.get("peft", record.peft)),
        recompute_granularity=values.get("model.recompute_granularity"),
        cuda_graph_impl=str(values.get("model.cuda_graph_impl") or "none").lower(),
        cuda_graph_scope=scope,
        use_te_rng_tracker=_as_bool(values.get("model.use_te_rng_tracker"), False)
        or _as_bool(values.get("rng.te_rng_tracker"), False),
        fsdp=fsdp,
        cpu_offloading=_as_bool(values.get("model.cpu_offloading"), False),
        cpu_offloading_num_layers=integer("model.cpu_offloading_num_layers"),
        packed_sequence=packed,
        packed_sequence_size=packed_size if packed_size and packed_size > 0 else None,
        pad_to_max_length=_pad_to_max_length(values),
        dataset_target=str(values["dataset._target_"]) if values.get("dataset._target_") else None,
        pad_cu_seqlens=values.get("dataset.offline_packing_specs.pad_cu_seqlens"),
        calculate_per_token_loss=_as_bool(values.get("model.calculate_per_token_loss"), False),
        # Bridge's recipe helpers (recipes/common.py) set ddp.average_in_collective=True.
        average_in_collective=_as_bool(values.get("ddp.average_in_collective"), True),
        overlap_grad_reduce=None
        if values.get("ddp.overlap_grad_reduce") is None
        else _as_bool(values.get("ddp.overlap_grad_reduce"), False),
        cp_comm_type=values.get("model.cp_comm_type"),
        hierarchical_context_parallel_sizes=values.get("model.hierarchical_context_parallel_sizes"),
        check_for_nan_in_loss=_as_bool(values.get("rerun_state_machine.check_for_nan_in_loss"), True),
        pretrained_checkpoint=values.get("checkpoint.pretrained_checkpoint"),
        dataset=dataset,
        layout_builder=record.layout_builder,
        layout_unread="model.pipeline_model_parallel_layout" in record.unknown,
        user_overrides=user,
        values=values,
    )
