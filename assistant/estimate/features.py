"""The performance features of a run that change its speed but not its layout (pure).

Megatron-Bridge releases turn these on per recipe: full-iteration CUDA graphs, MoE all-to-all overlap,
FP8 attention and fused grouped expert MLPs. The throughput estimator needs them to tell a layout's speed
under one release's software from another's. They are read from a recipe's extracted fields: the old
`scripts/performance` WorkloadBaseConfig fields (<= 0.5.x) or the ConfigContainer paths of later releases.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from assistant.records import Record

CudaGraph = Literal["full_iteration", "partial"] | None
Frozen = Literal["language_model", "vision_model", "vision_projection"]
FROZEN_PARTS: tuple[Frozen, ...] = ("language_model", "vision_model", "vision_projection")


class RunFeatures(Record):
    cuda_graph: CudaGraph = None  # full_iteration captures the whole step; partial = per-layer scopes
    moe_a2a_overlap: bool = False  # EP all-to-all overlapped with the other micro-batch's compute
    fp8_attention: bool = False  # the attention core runs in FP8 (fp8_dot_product_attention)
    fused_grouped_mlp: bool = False  # expert MLP, activation and quantisation fused (CuTe DSL / TE op fuser)
    flex_dispatcher: bool = False  # DeepEP / HybridEP: a token crosses the network once per destination node
    mtp_layers: int = 0  # multi-token-prediction blocks run after the last layer (mtp_num_layers)
    # mtp_use_repeated_layer: the passes reuse one block's weights (memory only; the work is per pass).
    mtp_repeated: bool = Field(default=False, exclude=True)
    # Fused cross-entropy in Transformer Engine (logits kept in bf16, in place): memory only, so it is left
    # out of the features stored with the perf rows.
    te_cross_entropy: bool = Field(default=False, exclude=True)
    # The linear layers a LoRA run adapts (peft.target_modules; None: Bridge's LoRA defaults): memory only.
    lora_targets: tuple[str, ...] | None = Field(default=None, exclude=True)
    # The parts of a VLM the recipe freezes (model.freeze_language_model / freeze_vision_model /
    # freeze_vision_projection): they keep weights but no gradients or optimizer state. Memory only.
    frozen: tuple[Frozen, ...] = Field(default=(), exclude=True)

    def describe(self) -> list[str]:
        parts = []
        if self.cuda_graph:
            parts.append(f"{self.cuda_graph.replace('_', '-')} CUDA graphs")
        if self.moe_a2a_overlap:
            parts.append("MoE all-to-all overlap")
        if self.fp8_attention:
            parts.append("FP8 attention")
        if self.fused_grouped_mlp:
            parts.append("fused grouped expert MLP")
        if self.flex_dispatcher:
            parts.append("DeepEP/HybridEP token dispatcher")
        if self.mtp_layers:
            parts.append(f"{self.mtp_layers} multi-token-prediction blocks")
        return parts


# Field names: WorkloadBaseConfig (scripts/performance, <= 0.5.x) first, then ConfigContainer paths.
_GRAPH_IMPL = ("cuda_graph_impl", "model.cuda_graph_impl")
_GRAPH_SCOPE = ("cuda_graph_scope", "model.cuda_graph_scope")
_A2A_OVERLAP = ("moe_a2a_overlap", "comm_overlap.overlap_moe_expert_parallel_comm")
_FP8_ATTENTION = ("fp8_dot_product_attention", "mixed_precision.fp8_dot_product_attention")
_FUSED_MLP = ("cutedsl_fused_grouped_mlp",)
_FUSED_MLP_NEW = ("model.use_transformer_engine_op_fuser", "model.moe_mlp_glu_interleave_size")
_FLEX_BACKEND_OLD = "moe_flex_dispatcher_backend"  # setting a backend switches the old recipes to flex
_DISPATCHER_NEW = "model.moe_token_dispatcher_type"
_MTP = ("mtp_num_layers", "model.mtp_num_layers")


def _first(fields: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((fields[n] for n in names if fields.get(n) is not None), None)


def cuda_graph_kind(impl: Any, scope: Any) -> CudaGraph:
    """Older releases spelled a full-iteration graph as scope "full_iteration"; later ones as the impl."""
    scopes = [scope] if isinstance(scope, str) else list(scope or [])
    if impl == "none":  # the scope keeps its default ("full") but nothing is captured
        return None
    if impl == "full_iteration" or "full_iteration" in scopes:
        return "full_iteration"
    if impl in ("local", "transformer_engine"):
        return "partial"
    return None


def features_from_fields(fields: dict[str, Any]) -> RunFeatures:
    """RunFeatures of one extracted recipe (its `fields`), old or new naming."""
    fused = bool(_first(fields, _FUSED_MLP)) or (
        bool(fields.get(_FUSED_MLP_NEW[0])) and fields.get(_FUSED_MLP_NEW[1]) is not None
    )
    return RunFeatures(
        cuda_graph=cuda_graph_kind(_first(fields, _GRAPH_IMPL), _first(fields, _GRAPH_SCOPE)),
        moe_a2a_overlap=bool(_first(fields, _A2A_OVERLAP)),
        fp8_attention=bool(_first(fields, _FP8_ATTENTION)),
        fused_grouped_mlp=fused,
        flex_dispatcher=fields.get(_DISPATCHER_NEW) == "flex" or fields.get(_FLEX_BACKEND_OLD) is not None,
        mtp_layers=int(_first(fields, _MTP) or 0),
        mtp_repeated=bool(fields.get("model.mtp_use_repeated_layer")),
        te_cross_entropy=fields.get("model.cross_entropy_loss_fusion") is not False
        and fields.get("model.cross_entropy_fusion_impl") == "te",
        lora_targets=_lora_targets(fields.get("peft.target_modules")),
        frozen=tuple(part for part in FROZEN_PARTS if fields.get(f"model.freeze_{part}") is True),
    )


def _lora_targets(targets: Any) -> tuple[str, ...] | None:
    return tuple(targets) if isinstance(targets, list) else None
