"""The fit hook: whether a plan fits in GPU memory, judged by the memory estimator (assistant/estimate).

The estimator is pure; the GPU table and the calibrated overheads it needs are bundled data read once
through assistant.hardware_data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from assistant.errors import UserError
from assistant.records import Cluster, ModelArch, Plan, RecipeRecord, Record

if TYPE_CHECKING:
    from assistant.rules.config import EffectiveConfig

FitStatus = Literal["fits", "does-not-fit", "unknown"]
DEFAULT_SEQ = 4096


class FitVerdict(Record):
    status: FitStatus
    peak_bytes: float | None = None
    usable_bytes: float | None = None
    margin_bytes: float | None = None
    tight: bool = False  # inside the memory estimator's typical error: it may go either way
    note: str | None = None  # why the fit is unknown
    note_zh: str | None = None


# Bytes per element of the optimizer dtypes a recipe can name; Megatron keeps each in fp32 unless told.
DTYPE_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.uint8": 1}
OPTIMIZER_DTYPES = ("optimizer.main_params_dtype", "optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype")


# Muon (Megatron-Core optimizer/muon.py, via emerging_optimizers) keeps one momentum buffer per weight
# matrix beside the fp32 master copy: 8 bytes per parameter instead of Adam's 12 (the few non-matrix
# parameters it hands to Adam are ignored).
MUON_STATE_BYTES = 8.0


def optimizer_state_bytes(values: dict) -> float | None:
    """Bytes per parameter of the optimizer's master weights and state: the precision-aware optimizer's
    dtypes as the recipe names them (Nemotron 3 Super's H100 recipe: fp16 + bf16 + bf16 = 6, not 12), or
    Muon's 8; None for the default Adam (12)."""
    if str(values.get("optimizer.optimizer") or "").removeprefix("dist_") == "muon":
        return MUON_STATE_BYTES
    if not values.get("optimizer.use_precision_aware_optimizer"):
        return None
    return float(sum(DTYPE_BYTES.get(str(values.get(key)), 4) for key in OPTIMIZER_DTYPES))


def shards_optimizer_state(values: dict) -> bool:
    """The optimizer state is split over the data-parallel ranks: Megatron's distributed optimizer, or the
    layer-wise one that "dist_*" optimizers and use_layer_wise_distributed_optimizer turn on
    (optimizer/layer_wise_optimizer.py: each rank keeps only its layers' state)."""
    if str(values.get("optimizer.optimizer") or "").startswith("dist_"):
        return True
    if values.get("optimizer.use_layer_wise_distributed_optimizer"):
        return True
    return (
        values.get("ddp.use_distributed_optimizer", values.get("optimizer.use_distributed_optimizer", True))
        is not False
    )


def estimate_fit(
    record: RecipeRecord,
    arch: ModelArch | None,
    plan: Plan,
    cluster: Cluster,
    config: EffectiveConfig | None = None,
) -> FitVerdict:
    """Memory verdict for one plan; `config` (the effective values) supplies sequence, mode and recompute."""
    from assistant import hardware_data
    from assistant.estimate.features import features_from_fields
    from assistant.estimate.memory import estimate_memory
    from assistant.estimate.run import LORA_RANK, RunSettings
    from assistant.estimate.shapes import unmodelled_reason

    if arch is None:
        return FitVerdict(
            status="unknown", note="the model architecture is not known", note_zh="模型结构未知"
        )
    unmodelled = unmodelled_reason(arch)
    if unmodelled:
        return FitVerdict(
            status="unknown",
            note=f"the memory estimator cannot describe this hybrid model: {unmodelled}",
            note_zh="显存估算无法描述这个混合模型的层结构",
        )
    values = {**record.fields, **(config.values if config else {})}
    recompute = (config.recompute_granularity if config else None) or record.recompute
    try:
        run = RunSettings(
            seq_length=(config.seq_length if config else None) or record.seq_length or DEFAULT_SEQ,
            mode=(config.mode if config else None) or record.mode or "pretrain",
            precision=(config.precision if config else None) or record.precision or "bf16",
            recompute=recompute if recompute in ("selective", "full") else None,  # type: ignore[arg-type]
            recompute_modules=values.get("model.recompute_modules") or record.recompute_modules,
            recompute_num_layers=values.get("model.recompute_num_layers"),
            recompute_method=values.get("model.recompute_method"),
            fp8_param=_stores_fp8_weights(values, config.version if config else record.version),
            lora_rank=int(values.get("peft.dim") or LORA_RANK),
            fsdp=bool(config.fsdp) if config else bool(record.fsdp),
            cuda_graphs=bool(config and config.cuda_graph_impl not in ("none", None)),
            distributed_optimizer=shards_optimizer_state(values),
            grad_reduce_in_fp32=bool(values.get("ddp.grad_reduce_in_fp32", True)),
            precision_aware_optimizer=bool(values.get("optimizer.use_precision_aware_optimizer", False)),
            optimizer_bytes=optimizer_state_bytes(values),
            offload_layers=(config.cpu_offloading_num_layers or 0) if config and config.cpu_offloading else 0,
            features=features_from_fields(values),  # memory reads mtp_layers, te_cross_entropy, lora_targets
        )
        memory = estimate_memory(
            arch,
            plan,
            hardware_data.gpu_spec(cluster.gpu_type),
            run,
            overheads=hardware_data.memory_overheads(),
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


def _stores_fp8_weights(values: dict, version: str | None) -> bool:
    """The recipe's own fp8_param_gather / fp8_param, else its mixed-precision preset's."""
    from assistant import hardware_data

    for key in ("mixed_precision.fp8_param_gather", "model.fp8_param"):
        if isinstance(values.get(key), bool):
            return values[key]
    return hardware_data.preset_stores_fp8_weights(version, values.get("mixed_precision._target_"))
