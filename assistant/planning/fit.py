"""The fit hook: whether a plan fits in GPU memory, judged by the memory estimator (assistant/estimate).

The estimator is pure; the GPU spec, the calibrated overheads and the preset table come from the
KnowledgeBase the caller passes.
"""

from __future__ import annotations

from assistant.errors import UserError
from assistant.estimate.dit import micro_batch_tokens
from assistant.estimate.features import features_from_fields
from assistant.estimate.memory import estimate_memory
from assistant.estimate.memory_dit import estimate_dit_memory
from assistant.estimate.run import LORA_RANK, RunSettings
from assistant.estimate.shapes import unmodelled_reason
from assistant.kb import KnowledgeBase
from assistant.messages import msg
from assistant.records import Cluster, ModelArch, Plan, RecipeRecord
from assistant.rules.config import EffectiveConfig
from assistant.rules.fit import DEFAULT_SEQ, FitVerdict, optimizer_state_bytes, shards_optimizer_state


def estimate_fit(
    record: RecipeRecord,
    arch: ModelArch | None,
    plan: Plan,
    cluster: Cluster,
    config: EffectiveConfig | None = None,
    *,
    kb: KnowledgeBase,
) -> FitVerdict:
    """Memory verdict for one plan; `config` (the effective values) supplies sequence, mode and recompute."""

    if arch is None:
        note = msg("fit-note.arch_unknown")
        return FitVerdict(status="unknown", note=note.render("en"), note_zh=note.render("zh"))
    unmodelled = unmodelled_reason(arch)
    if arch.diffusion is not None:  # a DiT's memory has its own estimate; tokens are packed latent samples
        run = fit_run_settings(record, config, kb=kb)
        values = {**record.fields, **(config.values if config else {})}
        tokens, _ = micro_batch_tokens(arch.diffusion, run.seq_length, values)
        try:
            memory = estimate_dit_memory(
                arch, plan, kb.gpu_spec(cluster.gpu_type), run.but(seq_length=tokens),
                overheads=kb.memory_overheads,
            )  # fmt: skip
        except UserError as error:
            return FitVerdict(status="unknown", note=str(error))
        return FitVerdict(
            status="fits" if memory.fits else "does-not-fit",
            peak_bytes=memory.peak_bytes,
            usable_bytes=memory.usable_bytes,
            margin_bytes=memory.margin_bytes,
            tight=memory.tight,
        )
    if unmodelled:
        note = msg("fit-note.unmodelled", reason=unmodelled)
        return FitVerdict(status="unknown", note=note.render("en"), note_zh=note.render("zh"))
    try:
        run = fit_run_settings(record, config, kb=kb)
        memory = estimate_memory(
            arch,
            plan,
            kb.gpu_spec(cluster.gpu_type),
            run,
            overheads=kb.memory_overheads,
        )
    except UserError as error:  # an architecture record without the fields the estimator needs
        return FitVerdict(status="unknown", note=str(error))
    return FitVerdict(
        status="fits" if memory.fits else "does-not-fit",
        peak_bytes=memory.peak_bytes,
        usable_bytes=memory.usable_bytes,
        margin_bytes=memory.margin_bytes,
        tight=memory.tight,
    )


def fit_run_settings(
    record: RecipeRecord, config: EffectiveConfig | None, *, kb: KnowledgeBase
) -> RunSettings:
    """What the memory estimator reads from a recipe and its effective values (resize's floor too)."""
    values = {**record.fields, **(config.values if config else {})}
    recompute = (config.recompute_granularity if config else None) or record.recompute
    return RunSettings(
        seq_length=(config.seq_length if config else None) or record.seq_length or DEFAULT_SEQ,
        mode=(config.mode if config else None) or record.mode or "pretrain",
        precision=(config.precision if config else None) or record.precision or "bf16",
        recompute=recompute if recompute in ("selective", "full") else None,  # type: ignore[arg-type]
        recompute_modules=values.get("model.recompute_modules") or record.recompute_modules,
        recompute_num_layers=values.get("model.recompute_num_layers"),
        recompute_method=values.get("model.recompute_method"),
        fp8_param=stores_fp8_weights(values, config.version if config else record.version, kb),
        fp4_param=stores_fp4_weights(values, config.version if config else record.version, kb),
        lora_rank=int(values.get("peft.dim") or LORA_RANK),
        fsdp=bool(config.fsdp) if config else bool(record.fsdp),
        cuda_graphs=bool(config and config.cuda_graph_impl not in ("none", None)),
        distributed_optimizer=shards_optimizer_state(values),
        grad_reduce_in_fp32=reduces_grads_in_fp32(values, config.version if config else record.version, kb),
        precision_aware_optimizer=bool(values.get("optimizer.use_precision_aware_optimizer", False)),
        optimizer_bytes=optimizer_state_bytes(values),
        offload_layers=(config.cpu_offloading_num_layers or 0) if config and config.cpu_offloading else 0,
        features=features_from_fields(values),  # memory reads mtp_layers, te_cross_entropy, lora_targets
    )


def _recipe_flag(values: dict, keys: tuple[str, ...]) -> bool | None:
    """The first of `keys` the recipe sets to a bool, else None."""
    return next((values[key] for key in keys if isinstance(values.get(key), bool)), None)


def reduces_grads_in_fp32(values: dict, version: str | None, kb: KnowledgeBase) -> bool:
    """The gradient buffer dtype the DDP is built with. Bridge's `runtime_config_update` (training/config.py)
    resolves a preset name and calls `MixedPrecisionConfig.setup`, which copies every field it shares with
    the DDP config onto it (`update_config_with_precision_overrides`), so the precision config's
    `grad_reduce_in_fp32` (set by the recipe, else its preset's: True but for fp16) wins over the recipe's
    `ddp.grad_reduce_in_fp32` (Megatron-Bridge issue 5365). Without a precision config, the DDP's own."""
    own = _recipe_flag(values, ("mixed_precision.grad_reduce_in_fp32",))
    if own is not None:
        return own
    preset = values.get("mixed_precision._target_") or values.get("mixed_precision")
    from_preset = kb.preset_reduces_grads_in_fp32(version, preset if isinstance(preset, str) else None)
    if from_preset is not None:
        return from_preset
    return _recipe_flag(values, ("ddp.grad_reduce_in_fp32",)) is not False


FP8_WEIGHT_KEYS = ("mixed_precision.fp8_param_gather", "model.fp8_param")
FP4_WEIGHT_KEYS = ("mixed_precision.fp4_param_gather", "mixed_precision.fp4_param", "model.fp4_param")


def stores_fp8_weights(values: dict, version: str | None, kb: KnowledgeBase) -> bool:
    """The recipe's own fp8_param_gather / fp8_param, else its mixed-precision preset's."""
    own = _recipe_flag(values, FP8_WEIGHT_KEYS)
    preset = values.get("mixed_precision._target_")
    return kb.preset_stores_fp8_weights(version, preset) if own is None else own


def stores_fp4_weights(values: dict, version: str | None, kb: KnowledgeBase) -> bool:
    """The recipe's own fp4_param_gather / fp4_param, else its mixed-precision preset's."""
    own = _recipe_flag(values, FP4_WEIGHT_KEYS)
    preset = values.get("mixed_precision._target_")
    return kb.preset_stores_fp4_weights(version, preset) if own is None else own
