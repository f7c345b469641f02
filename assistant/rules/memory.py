"""A coarse per-GPU memory heuristic used only to decide where PP/TP/EP/CP are needed.

Model state: bf16 weights + fp32 gradients (6 B/param) sharded by TP·PP (experts by EP·ETP·PP), Adam
master weights and moments (12 B/param) sharded further over the data-parallel ranks (distributed
optimizer). PEFT keeps frozen bf16 weights (2 B/param) plus a small adapter. Activations follow the
selective-recompute estimate of Korthikanti et al. (34·s·b·h bytes per layer, divided by TP·CP), with
the first pipeline stage holding PP micro-batches in flight. Resize prunes candidate layouts with it; the
verdict on the chosen plan comes from the memory estimator (assistant/estimate) through the fit hook.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.records import ModelArch

HEADROOM = 1.0  # fraction of HBM the heuristic lets model state + activations use (it already over-counts)


@dataclass(frozen=True)
class ParamSplit:
    dense: float  # replicated across the expert-parallel group
    expert: float  # sharded by EP·ETP


def heuristic_applies(arch: ModelArch) -> bool:
    """The parameter heuristic needs to know which layers hold experts: any transformer, a hybrid with its
    layer pattern, or a published parameter total to scale to (Nemotron 3 Super's record has none)."""
    return not arch.is_hybrid or bool(arch.hybrid_layer_pattern) or arch.total_params is not None


def param_split(arch: ModelArch) -> ParamSplit:
    """Dense and routed-expert parameter counts from the architecture shapes (scaled to total_params)."""
    hidden = arch.hidden_size
    heads = arch.num_attention_heads
    groups = arch.num_query_groups or heads
    head_dim = arch.kv_channels or hidden // heads
    if arch.multi_latent_attention:
        qk = (arch.qk_head_dim or head_dim) + (arch.qk_pos_emb_head_dim or 0)
        v_dim = arch.v_head_dim or head_dim
        kv_rank = arch.kv_lora_rank or hidden // 4
        q = (
            hidden * arch.q_lora_rank + arch.q_lora_rank * heads * qk
            if arch.q_lora_rank
            else hidden * heads * qk
        )
        attention = (
            q
            + hidden * (kv_rank + (arch.qk_pos_emb_head_dim or 0))
            + kv_rank * heads * ((arch.qk_head_dim or head_dim) + v_dim)
            + heads * v_dim * hidden
        )
    else:
        attention = hidden * heads * head_dim * 2 + 2 * hidden * groups * head_dim
    mats = 3 if arch.gated_linear_unit else 2
    dense_mlp = mats * hidden * (arch.ffn_hidden_size or 4 * hidden)
    layers = arch.num_layers
    experts = arch.num_moe_experts or 0
    pattern = arch.hybrid_layer_pattern
    moe_layers = 0
    expert_params = 0.0
    moe_dense = 0.0
    if experts:
        first_dense = min(arch.moe_first_k_dense or 0, layers)
        freq = max(arch.moe_layer_freq or 1, 1)
        moe_layers = pattern.count("E") if pattern else -(-(layers - first_dense) // freq)
        moe_ffn = arch.moe_ffn_hidden_size or arch.ffn_hidden_size or 4 * hidden
        latent = arch.moe_latent_size or 0  # LatentMoE: experts work in this width, behind two projections
        expert_params = moe_layers * experts * mats * (latent or hidden) * moe_ffn
        shared = arch.moe_shared_expert_intermediate_size or 0
        moe_dense = moe_layers * (mats * hidden * shared + hidden * experts + 2 * hidden * latent)
    # A Mamba hybrid's pattern says which layers hold attention, an MLP or a Mamba mixer (in/out projections).
    attention_layers = pattern.count("*") if pattern else layers
    dense_layers = pattern.count("-") if pattern else layers - moe_layers
    inner = (arch.mamba_num_heads or 0) * (arch.mamba_head_dim or 0)
    mamba = pattern.count("M") * 3 * hidden * inner if pattern else 0
    embeddings = (arch.vocab_size or 32_000) * hidden * (1 if arch.tied_embeddings else 2)
    dense = attention_layers * attention + dense_layers * dense_mlp + moe_dense + mamba + embeddings
    total = dense + expert_params
    if arch.total_params and total > 0:
        scale = arch.total_params / total
        return ParamSplit(dense * scale, expert_params * scale)
    return ParamSplit(float(dense), float(expert_params))


def bytes_per_gpu(
    arch: ModelArch,
    *,
    tp: int,
    pp: int,
    cp: int,
    ep: int,
    etp: int,
    world: int,
    seq_length: int,
    micro_batch_size: int,
    peft: bool,
    full_recompute: bool = False,
    split: ParamSplit | None = None,
) -> float:
    """Heuristic peak bytes on the busiest GPU (first pipeline stage) for one layout."""
    split = split or param_split(arch)
    dense_shard = split.dense / (tp * pp)
    expert_shard = split.expert / (ep * etp * pp) if split.expert else 0.0
    if peft:
        state = 2 * (dense_shard + expert_shard) + 16 * 0.01 * (dense_shard + expert_shard)
    else:
        dp = max(world // (tp * pp * cp), 1)
        edp = max(world // (pp * ep * etp), 1)
        state = 6 * (dense_shard + expert_shard) + 12 * (dense_shard / (dp * cp) + expert_shard / edp)
    per_layer = (2 if full_recompute else 34) * seq_length * micro_batch_size * arch.hidden_size / (tp * cp)
    activations = per_layer * arch.num_layers  # first stage: (layers / PP) x PP micro-batches in flight
    return state + activations


def fits(bytes_needed: float, hbm_bytes: float) -> bool:
    return bytes_needed <= HEADROOM * hbm_bytes
