"""Parameter counts and Megatron-Bridge model FLOPs per token, from a ModelArch (pure arithmetic).

The FLOPs follow Megatron-Bridge `training/utils/flop_utils.py::transformer_flops` at commit 067f987 (see
shared research note estimators.md section 4): causal-halved attention core, gated MLP factor 3, padded vocab.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError
from assistant.records import ModelArch


@dataclass(frozen=True, slots=True)
class Dims:
    """The dimensions every formula needs, with Megatron defaults filled in."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    groups: int
    head_dim: int
    vocab: int
    gated: bool
    tied: bool
    experts: int
    topk: int
    moe_ffn: int
    shared_ffn: int
    dense_layers: int
    moe_layers: int
    mla: bool
    q_lora: int | None
    kv_lora: int
    qk_dim: int
    qk_pos: int
    v_dim: int

    @property
    def q_width(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.groups * self.head_dim

    @property
    def glu(self) -> int:
        """Matrices of width ffn in one MLP: 3 for a gated unit (up, gate, down), else 2."""
        return 3 if self.gated else 2


def moe_layer_flags(arch: ModelArch) -> list[bool]:
    """Which layers are MoE: after `moe_first_k_dense` dense layers, every `moe_layer_freq`-th layer."""
    if not arch.num_moe_experts:
        return [False] * arch.num_layers
    first_dense = arch.moe_first_k_dense or 0
    freq = arch.moe_layer_freq or 1
    return [i >= first_dense and i % freq == 0 for i in range(arch.num_layers)]


def dims_of(arch: ModelArch) -> Dims:
    """Resolve a ModelArch into Dims; a missing vocabulary is the user's to supply."""
    if arch.vocab_size is None:
        raise UserError(f"model {arch.hf_model_id} has no vocab_size; add it to the model spec")
    if arch.is_hybrid:
        raise UserError(
            f"{arch.hf_model_id} mixes Mamba/linear-attention layers with attention; the estimators model "
            "transformer layers only, so they give no number for it"
        )
    if arch.num_layers <= 0 or arch.hidden_size <= 0 or arch.num_attention_heads <= 0:
        raise UserError("num_layers, hidden_size and num_attention_heads must be positive")
    flags = moe_layer_flags(arch)
    moe_layers = sum(flags)
    head_dim = arch.kv_channels or arch.hidden_size // arch.num_attention_heads
    return Dims(
        layers=arch.num_layers,
        hidden=arch.hidden_size,
        ffn=arch.ffn_hidden_size or 4 * arch.hidden_size,
        heads=arch.num_attention_heads,
        groups=arch.num_query_groups or arch.num_attention_heads,
        head_dim=head_dim,
        vocab=arch.vocab_size,
        gated=arch.gated_linear_unit,
        tied=arch.tied_embeddings,
        experts=arch.num_moe_experts or 0,
        topk=arch.moe_router_topk or (1 if arch.num_moe_experts else 0),
        moe_ffn=arch.moe_ffn_hidden_size or arch.ffn_hidden_size or 4 * arch.hidden_size,
        shared_ffn=arch.moe_shared_expert_intermediate_size or 0,
        dense_layers=arch.num_layers - moe_layers,
        moe_layers=moe_layers,
        mla=arch.multi_latent_attention,
        q_lora=arch.q_lora_rank,
        kv_lora=arch.kv_lora_rank or 512,
        qk_dim=arch.qk_head_dim or 128,
        qk_pos=arch.qk_pos_emb_head_dim or 64,
        v_dim=arch.v_head_dim or 128,
    )


def padded_vocab(vocab: int, tp: int) -> int:
    """Megatron pads the vocabulary to a multiple of 128·TP."""
    multiple = 128 * tp
    return -(-vocab // multiple) * multiple


# ---------------------------------------------------------------- parameters


@dataclass(frozen=True, slots=True)
class LayerParams:
    """Parameters of one layer, split by how Megatron shards them."""

    attn: float  # TP-sharded
    mlp: float  # dense MLP or shared expert, TP-sharded
    routed: float  # all routed experts, sharded over EP·ETP
    replicated: float  # norms and router


def attention_params(d: Dims) -> float:
    """QKV and output projections (biases ignored); MLA uses its low-rank projections."""
    h = d.hidden
    if not d.mla:
        return h * (d.q_width + 2 * d.kv_width) + d.q_width * h
    qk = d.qk_dim + d.qk_pos
    q_term = h * d.heads * qk if d.q_lora is None else d.q_lora * (h + d.heads * qk)
    kv_term = d.kv_lora * (h + d.heads * (d.qk_dim + d.v_dim)) + h * d.qk_pos
    return q_term + kv_term + d.heads * d.v_dim * h


def layer_params(d: Dims, is_moe: bool) -> LayerParams:
    h = d.hidden
    norms = 2 * h
    if not is_moe:
        return LayerParams(attention_params(d), d.glu * h * d.ffn, 0.0, norms)
    return LayerParams(
        attn=attention_params(d),
        mlp=d.glu * h * d.shared_ffn,
        routed=d.experts * d.glu * h * d.moe_ffn,
        replicated=norms + h * d.experts,
    )


def total_params(d: Dims) -> float:
    """All parameters: layers, embedding, untied output layer and final norm."""
    per = layer_params(d, False)
    moe = layer_params(d, True)
    layers = d.dense_layers * (per.attn + per.mlp + per.replicated)
    layers += d.moe_layers * (moe.attn + moe.mlp + moe.routed + moe.replicated)
    embed = d.hidden * d.vocab * (1 if d.tied else 2)
    return layers + embed + d.hidden


# ---------------------------------------------------------------- FLOPs


@dataclass(frozen=True, slots=True)
class TokenFlops:
    """Training FLOPs per token (fwd + bwd), by the kind of kernel that runs them."""

    dense_gemm: float  # attention projections, dense MLP, shared experts, logits
    expert_gemm: float  # routed experts (grouped GEMM)
    attention_core: float  # QK^T and AV (flash attention)
    logits: float = 0.0  # the output layer's share of dense_gemm (last pipeline stage only)

    @property
    def total(self) -> float:
        return self.dense_gemm + self.expert_gemm + self.attention_core


def flops_per_token(d: Dims, seq_length: int, tp: int = 1) -> TokenFlops:
    """Megatron-Bridge `transformer_flops` divided by the token count (BSHD, no packing)."""
    h, s = d.hidden, seq_length
    mlp = 6 * h * d.glu * (d.ffn * d.dense_layers + d.shared_ffn * d.moe_layers)
    experts = 6 * h * d.glu * d.moe_ffn * d.topk * d.moe_layers
    if d.mla:
        qk = d.qk_dim + d.qk_pos
        q_term = h * d.heads * qk if d.q_lora is None else d.q_lora * (h + d.heads * qk + 1)
        proj = q_term + d.kv_lora * (h + d.heads * (d.qk_dim + d.v_dim) + 1) + h * d.qk_pos
        proj += d.heads * d.v_dim * h
        core = s * d.heads * qk / 2 + s * d.heads * d.v_dim / 2
        attn_proj, attn_core = 6 * d.layers * proj, 6 * d.layers * core
    else:
        attn_proj = 6 * d.layers * (h * (d.q_width + 2 * d.kv_width) + d.q_width * h)
        attn_core = 6 * d.layers * d.q_width * s
    logits = 6 * h * padded_vocab(d.vocab, tp)
    return TokenFlops(
        dense_gemm=mlp + attn_proj + logits, expert_gemm=experts, attention_core=attn_core, logits=logits
    )
