"""Parameter counts and Megatron-Bridge model FLOPs per token, from a ModelArch (pure arithmetic).

The FLOPs follow Megatron-Bridge `training/utils/flop_utils.py::transformer_flops` at commit 067f987 (see
shared research note estimators.md section 4): causal-halved attention core, gated MLP factor 3, padded vocab;
Mamba hybrids follow its `hybrid_flops` (v0.6.0).

A model is a stack of Megatron layers, each holding sublayers: a transformer layer is attention plus an MLP
or MoE block; a Mamba-hybrid layer (one symbol of `hybrid_layer_pattern`) is one of them, or a Mamba mixer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from assistant.errors import UserError
from assistant.records import ModelArch


@dataclass(frozen=True, slots=True)
class AttnShape:
    """A model's second attention shape (ModelArch other_*): its layers use these heads, KV groups, head
    size and sliding window (0: full causal attention)."""

    heads: int
    groups: int
    head_dim: int
    window: int = 0


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
    dense_layers: int  # dense MLP sublayers
    moe_layers: int  # MoE sublayers
    mla: bool
    q_lora: int | None
    kv_lora: int
    qk_dim: int
    qk_pos: int
    v_dim: int
    attn_layers: int = 0  # attention sublayers (every layer of a transformer)
    mamba_layers: int = 0  # Mamba-2 mixers
    ssm_heads: int = 0
    ssm_head_dim: int = 0
    ssm_state: int = 0
    ssm_groups: int = 0
    latent: int = 0  # LatentMoE width of the routed experts (0: they work at the hidden size)
    mtp_block: str = ""  # layer kinds of one multi-token-prediction block (see layer_kinds)
    gdn_layers: int = 0  # Gated DeltaNet mixers
    lin_k_heads: int = 0
    lin_k_dim: int = 0
    lin_v_heads: int = 0
    lin_v_dim: int = 0
    lin_conv: int = 4
    attn_gate: bool = False  # gated attention: the query projection is twice as wide
    # DeepSeek-V4 hybrid attention (o_groups > 0): see dsv4_attention_params
    o_groups: int = 0
    o_lora: int = 0
    window: int = 0
    idx_heads: int = 0
    idx_dim: int = 0
    idx_topk: int = 0
    streams: int = 1  # hyper-connection residual streams (1: a plain residual)
    csa_layers: int = 0  # DSv4 attention sublayers with 4x compression and an indexer
    hca_layers: int = 0  # DSv4 attention sublayers with 128x compression
    attn_window: int = 0  # causal sliding window of the (main-shape) attention, 0: full attention
    other: AttnShape | None = None  # the second attention shape, if the model has one
    other_layers: int = 0  # attention sublayers of the second shape (of attn_layers)

    @property
    def dsv4(self) -> bool:
        return self.o_groups > 0

    @property
    def expert_io(self) -> int:
        """Width of the tokens the routed experts take and return (dispatched and combined)."""
        return self.latent or self.hidden

    @property
    def d_inner(self) -> int:
        """Width of a Mamba mixer's inner stream (x, z and y)."""
        return self.ssm_heads * self.ssm_head_dim

    @property
    def mamba_in_width(self) -> int:
        """Output width of a Mamba mixer's in_proj: z, x, B, C and dt."""
        return mamba_in_proj_width(self.d_inner, self.ssm_heads, self.ssm_state, self.ssm_groups)

    @property
    def mamba_conv_width(self) -> int:
        """Channels of a Mamba mixer's depthwise convolution: x, B and C."""
        return self.d_inner + 2 * self.ssm_groups * self.ssm_state

    @property
    def lin_qk(self) -> int:
        """Width of a Gated DeltaNet mixer's queries (and of its keys)."""
        return self.lin_k_heads * self.lin_k_dim

    @property
    def lin_v(self) -> int:
        """Width of a Gated DeltaNet mixer's values (and of its output gate z and its output)."""
        return self.lin_v_heads * self.lin_v_dim

    @property
    def gdn_in_width(self) -> int:
        """Output width of a Gated DeltaNet in_proj: q, k, v, z and one beta and alpha per value head."""
        return 2 * self.lin_qk + 2 * self.lin_v + 2 * self.lin_v_heads

    @property
    def gdn_conv_width(self) -> int:
        """Channels of a Gated DeltaNet mixer's depthwise convolution: q, k and v."""
        return 2 * self.lin_qk + self.lin_v

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


# Layer kinds: a transformer layer with a dense MLP ("D") or an MoE block ("X"), or with a Gated DeltaNet
# mixer in place of attention ("L": with an MLP, "Y": with an MoE block); the one-sublayer layers of a Mamba
# hybrid by their hybrid_layer_pattern symbols: Mamba ("M"), attention ("*"), MLP ("-"), MoE ("E").
# DeepSeek-V4 MoE layers by compress ratio: "X" sliding window only (0), "C" CSA (4), "H" HCA (128).
# A model with two attention shapes: "d" and "x" are "D" and "X" layers whose attention has the other shape.
HYBRID_SYMBOLS = frozenset("M*-E")
DIFFUSION_REASON = (
    "it is a diffusion transformer: only its memory at a given layout is estimated (no speed model or layout "
    "search for it)"
)


@dataclass(frozen=True, slots=True)
class LayerMix:
    """Sublayer counts of a run of layers (a pipeline stage, or the whole model)."""

    layers: int = 0
    attn: int = 0
    mlp: int = 0
    moe: int = 0
    mamba: int = 0
    gdn: int = 0
    csa: int = 0  # of the attention sublayers, DSv4 CSA ones (4x compressed keys, indexer)
    hca: int = 0  # of the attention sublayers, DSv4 HCA ones (128x compressed keys)
    other_attn: int = 0  # of the attention sublayers, those with the model's second shape

    @property
    def sublayers(self) -> int:
        """Attention, MLP, MoE, Mamba and Gated DeltaNet blocks, each with its own pre-norm."""
        return self.attn + self.mlp + self.moe + self.mamba + self.gdn

    def __add__(self, other: LayerMix) -> LayerMix:
        return LayerMix(
            self.layers + other.layers,
            self.attn + other.attn,
            self.mlp + other.mlp,
            self.moe + other.moe,
            self.mamba + other.mamba,
            self.gdn + other.gdn,
            self.csa + other.csa,
            self.hca + other.hca,
            self.other_attn + other.other_attn,
        )


_KIND_MIX = {
    "D": LayerMix(1, attn=1, mlp=1),
    "X": LayerMix(1, attn=1, moe=1),
    "M": LayerMix(1, mamba=1),
    "*": LayerMix(1, attn=1),
    "-": LayerMix(1, mlp=1),
    "E": LayerMix(1, moe=1),
    "L": LayerMix(1, mlp=1, gdn=1),
    "Y": LayerMix(1, moe=1, gdn=1),
    "C": LayerMix(1, attn=1, moe=1, csa=1),
    "H": LayerMix(1, attn=1, moe=1, hca=1),
    "d": LayerMix(1, attn=1, mlp=1, other_attn=1),
    "x": LayerMix(1, attn=1, moe=1, other_attn=1),
}
OTHER_ATTENTION = str.maketrans("DX", "dx")
DSV4_RATIO_KINDS = {0: "X", 4: "C", 128: "H"}  # compress ratio -> layer kind (MoE layers)


def mix_of(kinds: str) -> LayerMix:
    """Sublayer counts of the layers whose kinds are given (see `layer_kinds`). Counted per kind: the search
    calls this for every candidate layout."""
    counts = [(_KIND_MIX[kind], kinds.count(kind)) for kind in set(kinds)]
    return LayerMix(
        layers=len(kinds),
        attn=sum(mix.attn * n for mix, n in counts),
        mlp=sum(mix.mlp * n for mix, n in counts),
        moe=sum(mix.moe * n for mix, n in counts),
        mamba=sum(mix.mamba * n for mix, n in counts),
        gdn=sum(mix.gdn * n for mix, n in counts),
        csa=sum(mix.csa * n for mix, n in counts),
        hca=sum(mix.hca * n for mix, n in counts),
        other_attn=sum(mix.other_attn * n for mix, n in counts),
    )


def layer_kinds(arch: ModelArch) -> str:
    """One kind per Megatron layer. Transformers: MoE after `moe_first_k_dense` dense layers, every
    `moe_layer_freq`-th layer, lower-cased where the attention has the second shape. Mamba hybrids: their
    layer pattern."""
    if arch.is_hybrid and not arch.linear_attention_freq:
        return arch.hybrid_layer_pattern or ""
    if arch.csa_compress_ratios:
        return dsv4_kinds(arch.csa_compress_ratios[: arch.num_layers])
    if not arch.num_moe_experts:
        kinds = "D" * arch.num_layers
    else:
        kinds = _moe_kinds(arch.num_layers, arch.moe_first_k_dense or 0, arch.moe_layer_freq or 1)
    if arch.other_attention_layers:
        return _with_other_attention(kinds, arch.other_attention_layers)
    return _with_linear_attention(kinds, arch.linear_attention_freq or 0)


@lru_cache(maxsize=64)
def _with_other_attention(kinds: str, layers: tuple[int, ...]) -> str:
    """The listed layers' kinds lower-cased: their attention has the model's second shape."""
    chosen = set(layers)
    return "".join(k.translate(OTHER_ATTENTION) if i in chosen else k for i, k in enumerate(kinds))


@lru_cache(maxsize=64)
def dsv4_kinds(ratios: tuple[int, ...]) -> str:
    """DeepSeek-V4 layers by their compress ratio (csa_compress_ratios, one per layer then per MTP layer)."""
    return "".join(DSV4_RATIO_KINDS[r] for r in ratios)


def dsv4_reason(arch: ModelArch) -> str | None:
    """Why a DeepSeek-V4 hybrid-attention model cannot be described (None when it can)."""
    ratios = arch.csa_compress_ratios or ()
    dims = (arch.o_groups, arch.o_lora_rank, arch.csa_window_size, arch.dsa_indexer_n_heads,
            arch.dsa_indexer_head_dim, arch.dsa_indexer_topk, arch.q_lora_rank, arch.v_head_dim)  # fmt: skip
    if not all(dims):
        return "its DeepSeek-V4 attention dimensions are not all known"
    if len(ratios) < arch.num_layers or set(ratios) - set(DSV4_RATIO_KINDS):
        return "its compress ratios are not one of 0, 4 or 128 for every layer"
    if not arch.num_moe_experts or (arch.moe_first_k_dense or 0) or (arch.moe_layer_freq or 1) != 1:
        return "it has dense layers, which the DeepSeek-V4 model does not describe"
    return None


def other_attention_reason(arch: ModelArch) -> str | None:
    """Why a model with a second attention shape cannot be described (None when it can): the shape must be
    whole, and the model a plain GQA transformer (no MLA, linear attention or Mamba layers)."""
    shape = (arch.other_num_attention_heads, arch.other_num_query_groups, arch.other_kv_channels)
    if not all(shape) or not arch.other_attention_layers:
        return "its second attention shape is not whole (give other_attention_layers and the other_* sizes)"
    if arch.multi_latent_attention or arch.is_hybrid or arch.linear_attention_freq:
        return "it mixes a second attention shape with MLA, linear attention or Mamba layers"
    if min(arch.other_attention_layers) < 0 or set(arch.mtp_layer_pattern or "") - set("DX"):
        return "its second-shape layer indices or its MTP layer kinds are not valid"
    return None


@lru_cache(maxsize=256)
def _moe_kinds(layers: int, first_dense: int, freq: int) -> str:
    return "".join("X" if i >= first_dense and i % freq == 0 else "D" for i in range(layers))


@lru_cache(maxsize=256)
def _with_linear_attention(kinds: str, every: int) -> str:
    """Megatron's linear_attention_freq: layer i is full attention when (i + 1) % every == 0, else its
    attention is a Gated DeltaNet mixer (flop_utils.py, gated_delta_net)."""
    if not every:
        return kinds
    swap = {"D": "L", "X": "Y"}
    return "".join(k if (i + 1) % every == 0 else swap[k] for i, k in enumerate(kinds))


def unmodelled_reason(arch: ModelArch) -> str | None:
    """Why the estimators cannot describe this hybrid (None when they can): they know Mamba-2 mixers,
    attention, MLP and MoE layers laid out by a Megatron hybrid_layer_pattern, nothing else. A diffusion
    transformer has its own memory estimate (memory_dit.py) and nothing else: no speed model, no search."""
    if arch.diffusion is not None:
        return DIFFUSION_REASON
    if arch.csa_compress_ratios:
        return dsv4_reason(arch)
    if arch.other_attention_layers or arch.other_num_attention_heads:
        return other_attention_reason(arch)
    if not arch.is_hybrid:
        return None
    if arch.linear_attention_freq:
        dims = (arch.linear_num_key_heads, arch.linear_key_head_dim, arch.linear_num_value_heads,
                arch.linear_value_head_dim)  # fmt: skip
        if not all(dims):
            return "its Gated DeltaNet dimensions are not known (give the linear_* head counts and sizes)"
        return None
    pattern = arch.hybrid_layer_pattern or ""
    if not pattern or set(pattern) - HYBRID_SYMBOLS:
        return "its layers are not laid out by a Mamba/attention/MLP/MoE pattern the estimators know"
    if len(pattern) != arch.num_layers:
        return f"its layer pattern has {len(pattern)} symbols for {arch.num_layers} layers"
    if "M" in pattern and not (arch.mamba_num_heads and arch.mamba_head_dim and arch.mamba_state_dim):
        return (
            "its Mamba mixer dimensions are not known (give mamba_num_heads, mamba_head_dim and "
            "mamba_state_dim)"
        )
    return None


def dims_of(arch: ModelArch) -> Dims:
    """Resolve a ModelArch into Dims; a missing vocabulary is the user's to supply."""
    if arch.diffusion is not None:
        raise UserError(f"{arch.hf_model_id}: {DIFFUSION_REASON}")
    if arch.vocab_size is None:
        raise UserError(f"model {arch.hf_model_id} has no vocab_size; add it to the model spec")
    reason = unmodelled_reason(arch)
    if reason:
        kind = "model" if arch.other_attention_layers or arch.other_num_attention_heads else "hybrid model"
        raise UserError(
            f"{arch.hf_model_id} is a {kind} and {reason}, so the estimators give no number for it"
        )
    kinds = layer_kinds(arch)
    if arch.num_layers <= 0 or arch.hidden_size <= 0 or arch.num_attention_heads <= 0:
        raise UserError("num_layers, hidden_size and num_attention_heads must be positive")
    mix = mix_of(kinds)
    mamba = (arch.mamba_num_heads, arch.mamba_head_dim, arch.mamba_state_dim, arch.mamba_num_groups or 1)
    if mix.mamba and min(size or 0 for size in mamba) <= 0:
        raise UserError(
            "mamba_num_heads, mamba_head_dim, mamba_state_dim and mamba_num_groups must be positive"
        )
    if (arch.moe_latent_size or 0) < 0:
        raise UserError("moe_latent_size must be positive")
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
        dense_layers=mix.mlp,
        moe_layers=mix.moe,
        mla=arch.multi_latent_attention,
        q_lora=arch.q_lora_rank,
        kv_lora=arch.kv_lora_rank or 512,
        qk_dim=arch.qk_head_dim or 128,
        qk_pos=arch.qk_pos_emb_head_dim or 64,
        v_dim=arch.v_head_dim or 128,
        attn_layers=mix.attn,
        mamba_layers=mix.mamba,
        ssm_heads=arch.mamba_num_heads or 0,
        ssm_head_dim=arch.mamba_head_dim or 0,
        ssm_state=arch.mamba_state_dim or 0,
        ssm_groups=arch.mamba_num_groups or 1,
        latent=arch.moe_latent_size or 0,
        mtp_block=_mtp_block(arch, kinds),
        gdn_layers=mix.gdn,
        lin_k_heads=arch.linear_num_key_heads or 0,
        lin_k_dim=arch.linear_key_head_dim or 0,
        lin_v_heads=arch.linear_num_value_heads or 0,
        lin_v_dim=arch.linear_value_head_dim or 0,
        lin_conv=arch.linear_conv_kernel_dim or 4,
        attn_gate=arch.attention_output_gate,
        o_groups=(arch.o_groups or 0) if arch.csa_compress_ratios else 0,
        o_lora=arch.o_lora_rank or 0,
        window=arch.csa_window_size or 0,
        idx_heads=arch.dsa_indexer_n_heads or 0,
        idx_dim=arch.dsa_indexer_head_dim or 0,
        idx_topk=arch.dsa_indexer_topk or 0,
        streams=arch.num_residual_streams or 1,
        csa_layers=mix.csa,
        hca_layers=mix.hca,
        attn_window=arch.attention_window or 0,
        other=_other_shape(arch),
        other_layers=mix.other_attn,
    )


def _other_shape(arch: ModelArch) -> AttnShape | None:
    if not arch.other_attention_layers:
        return None
    return AttnShape(
        heads=arch.other_num_attention_heads or 0,
        groups=arch.other_num_query_groups or 0,
        head_dim=arch.other_kv_channels or 0,
        window=arch.other_attention_window or 0,
    )


def attention_shapes(d: Dims, mix: LayerMix) -> tuple[tuple[Dims, int], ...]:
    """(dims, count) per attention shape of `mix`'s attention sublayers: the main shape, then the second one
    as a Dims whose heads, groups, head size and window are that shape's. Every attention formula sums over
    these, so a one-shape model gives exactly its one term."""
    if d.other is None or not mix.other_attn:
        return ((d, mix.attn),)
    o = d.other
    second = replace(d, heads=o.heads, groups=o.groups, head_dim=o.head_dim, attn_window=o.window, other=None)
    return (d, mix.attn - mix.other_attn), (second, mix.other_attn)


def _mtp_block(arch: ModelArch, kinds: str) -> str:
    """Layer kinds of one MTP block: a Mamba hybrid's mtp_layer_pattern; a DeepSeek-V4 model's compress
    ratio after its layers (csa_compress_ratios has one per MTP layer); a model with two attention shapes its
    mtp_layer_pattern ("D" or "X", else the last layer's), in the second shape when the first MTP layer's
    index is listed; else the last layer's kind."""
    if arch.is_hybrid and not arch.linear_attention_freq:
        return arch.mtp_layer_pattern or ""
    ratios = arch.csa_compress_ratios or ()
    if len(ratios) > arch.num_layers:
        return DSV4_RATIO_KINDS[ratios[arch.num_layers]]
    if arch.other_attention_layers:
        block = (arch.mtp_layer_pattern or kinds[-1:]).upper()
        return block.translate(OTHER_ATTENTION) if arch.num_layers in arch.other_attention_layers else block
    return kinds[-1:]


def padded_vocab(vocab: int, tp: int) -> int:
    """Megatron pads the vocabulary to a multiple of 128·TP."""
    multiple = 128 * tp
    return -(-vocab // multiple) * multiple


# ---------------------------------------------------------------- parameters


@dataclass(frozen=True, slots=True)
class LayerParams:
    """Parameters of a run of layers, split by how Megatron shards them."""

    attn: float  # TP-sharded
    mlp: float  # dense MLP or shared expert, TP-sharded
    routed: float  # all routed experts, sharded over EP·ETP
    replicated: float  # norms and router
    mamba: float = 0.0  # Mamba mixers, TP-sharded by heads
    gdn: float = 0.0  # Gated DeltaNet mixers, TP-sharded by heads

    @property
    def tp_sharded(self) -> float:
        return self.attn + self.mlp + self.mamba + self.gdn


def attention_params(d: Dims) -> float:
    """QKV and output projections (biases ignored); MLA uses its low-rank projections."""
    h = d.hidden
    if not d.mla:
        gate = h * d.q_width if d.attn_gate else 0
        return h * (d.q_width + 2 * d.kv_width) + d.q_width * h + gate
    qk = d.qk_dim + d.qk_pos
    q_term = h * d.heads * qk if d.q_lora is None else d.q_lora * (h + d.heads * qk)
    kv_term = d.kv_lora * (h + d.heads * (d.qk_dim + d.v_dim)) + h * d.qk_pos
    return q_term + kv_term + d.heads * d.v_dim * h


# DeepSeek-V4 (Megatron-LM dev 89ad096, docs/estimators.md section "DeepSeek-V4"): the query goes through a
# low-rank q_lora, the keys and values are one 512-wide head (v_head_dim), the output projection is grouped.


def dsv4_attention_params(d: Dims) -> tuple[float, float]:
    """(TP-sharded, replicated) parameters of one DSv4 attention block without its compressor and indexer:
    linear_q_up_proj and the grouped output (linear_o_group_proj, o_groups·o_lora × heads·v/o_groups, then
    linear_proj, o_groups·o_lora × hidden) are split by TP; linear_q_down_proj ("duplicated") and the single
    KV head's linear_kv_proj, their norms and the per-head attention sinks are whole on every rank."""
    h, v = d.hidden, d.v_dim
    q_lora = d.q_lora or 0
    sharded = q_lora * d.heads * v + d.o_groups * d.o_lora * (d.heads * v // d.o_groups + h)
    return sharded, h * q_lora + h * v + q_lora + v + d.heads


def dsv4_compressor_params(hidden: int, head_dim: int, ratio: int) -> int:
    """A CSA/HCA Compressor: linear_wkv and linear_wgate (hidden -> coff·head_dim; coff 2 for the
    overlapping 4x windows, else 1), the learned positional bias ape (ratio × coff·head_dim), its norm."""
    coff = 2 if ratio == 4 else 1
    return 2 * hidden * coff * head_dim + ratio * coff * head_dim + head_dim


def dsv4_indexer_params(d: Dims) -> int:
    """The CSA indexer: linear_wq_b (q_lora -> heads·head_dim), linear_weights_proj (hidden -> heads), and
    its own 4x compressor over head_dim-wide keys."""
    return (d.q_lora or 0) * d.idx_heads * d.idx_dim + d.hidden * d.idx_heads + \
        dsv4_compressor_params(d.hidden, d.idx_dim, 4)  # fmt: skip


def hyper_connection_params(d: Dims) -> int:
    """One HyperConnectionModule (one per sublayer): mapping_proj (n·hidden -> n² + 2n, no bias), three
    alphas and the n² + 2n static bias; 0 without hyper-connections."""
    n = d.streams
    return n * d.hidden * (n * n + 2 * n) + 3 + n * n + 2 * n if n > 1 else 0


MAMBA_CONV_KERNEL = 4  # Megatron MambaMixer d_conv


def mamba_in_proj_width(inner: int, heads: int, state: int, groups: int) -> int:
    """Output width of a Mamba-2 mixer's in_proj: z and x (`inner` each), B and C (groups × state each), dt
    (one per head)."""
    return 2 * inner + 2 * groups * state + heads


def mamba_mixer_params(
    hidden: int, heads: int, head_dim: int, state: int, groups: int, conv_kernel: int = MAMBA_CONV_KERNEL
) -> int:
    """One Mamba-2 mixer: in_proj (z, x, B, C, dt), depthwise conv with bias, A/D/dt_bias, gated norm,
    out_proj."""
    inner = heads * head_dim
    bc = 2 * groups * state
    return (
        hidden * mamba_in_proj_width(inner, heads, state, groups)
        + (inner + bc) * (conv_kernel + 1)
        + 3 * heads
        + inner
        + inner * hidden
    )


def mamba_params(d: Dims) -> float:
    return mamba_mixer_params(d.hidden, d.ssm_heads, d.ssm_head_dim, d.ssm_state, d.ssm_groups)


def gdn_params(d: Dims) -> float:
    """One Gated DeltaNet mixer (Megatron-Core ssm/gated_delta_net.py): in_proj (q, k, v, z, beta, alpha),
    depthwise convolution over q, k and v (no bias), A_log and dt_bias per value head, the gated norm over a
    value head, out_proj."""
    return (
        d.hidden * d.gdn_in_width
        + d.gdn_conv_width * d.lin_conv
        + 2 * d.lin_v_heads
        + d.lin_v_dim
        + d.lin_v * d.hidden
    )


def mix_params(d: Dims, mix: LayerMix) -> LayerParams:
    """Parameters of layers with these sublayer counts; each sublayer has its own pre-norm."""
    h = d.hidden
    attn = float(sum(n * attention_params(s) for s, n in attention_shapes(d, mix))) if not d.dsv4 else 0.0
    attn_replicated = 0.0
    if d.dsv4:
        sharded, whole = dsv4_attention_params(d)
        attn = mix.attn * sharded
        attn_replicated = mix.attn * whole + mix.csa * (
            dsv4_compressor_params(h, d.v_dim, 4) + dsv4_indexer_params(d)
        ) + mix.hca * dsv4_compressor_params(h, d.v_dim, 128)
    return LayerParams(
        attn=attn,
        # dense MLPs, shared experts and LatentMoE's down- and up-projections
        mlp=d.glu * h * (mix.mlp * d.ffn + mix.moe * d.shared_ffn) + mix.moe * 2 * h * d.latent,
        routed=mix.moe * d.experts * d.glu * d.expert_io * d.moe_ffn,
        replicated=mix.sublayers * (h + hyper_connection_params(d)) + mix.moe * h * d.experts
        + attn_replicated,
        mamba=mix.mamba * mamba_params(d) if mix.mamba else 0.0,
        gdn=mix.gdn * gdn_params(d) if mix.gdn else 0.0,
    )


def whole_model(d: Dims) -> LayerMix:
    return LayerMix(d.layers, d.attn_layers, d.dense_layers, d.moe_layers, d.mamba_layers, d.gdn_layers,
                    d.csa_layers, d.hca_layers, d.other_layers)  # fmt: skip


def total_params(d: Dims) -> float:
    """All parameters: layers, embedding, untied output layer and final norm; with hyper-connections the
    block's learned output contraction (hc_head_fn n × n·hidden, hc_head_base n, hc_head_scale 1)."""
    lp = mix_params(d, whole_model(d))
    embed = d.hidden * d.vocab * (1 if d.tied else 2)
    head = d.streams * d.streams * d.hidden + d.streams + 1 if d.streams > 1 else 0
    return lp.tp_sharded + lp.routed + lp.replicated + embed + d.hidden + head


# ---------------------------------------------------------------- FLOPs


@dataclass(frozen=True, slots=True)
class TokenFlops:
    """Training FLOPs per token (fwd + bwd), by the kind of kernel that runs them."""

    dense_gemm: float  # attention projections, dense MLP, shared experts, Mamba projections, logits
    expert_gemm: float  # routed experts (grouped GEMM)
    attention_core: float  # QK^T and AV (flash attention)
    logits: float = 0.0  # the output layer's share of dense_gemm (last pipeline stage only)
    ssm_scan: float = 0.0  # Mamba-2 state-space scan (Bridge's 7·d_inner·state per token and layer)
    # Bridge's hybrid formula takes a Mamba mixer's inner width as 2 × hidden; the reported model FLOPs
    # follow it, the timing uses the real width (heads × head size): this is the difference.
    bridge_extra: float = 0.0

    @property
    def total(self) -> float:
        return self.dense_gemm + self.expert_gemm + self.attention_core + self.ssm_scan + self.bridge_extra


def flops_per_token(d: Dims, seq_length: int, tp: int = 1, mtp_layers: int = 0) -> TokenFlops:
    """Megatron-Bridge `transformer_flops` (or `hybrid_flops`) divided by the token count (BSHD, no packing).
    With `mtp_layers` multi-token-prediction blocks, their layers and output layers are added, as Bridge
    counts them."""
    layers = whole_model(d) + mix_of(d.mtp_block * mtp_layers)
    h, s = d.hidden, seq_length
    mlp = 6 * h * d.glu * (d.ffn * layers.mlp + d.shared_ffn * layers.moe) + 6 * layers.moe * 2 * h * d.latent
    experts = 6 * d.expert_io * d.glu * d.moe_ffn * d.topk * layers.moe
    if d.dsv4:
        attn_proj, attn_core = dsv4_flops(d, layers, s)
    elif d.mla:
        qk = d.qk_dim + d.qk_pos
        q_term = h * d.heads * qk if d.q_lora is None else d.q_lora * (h + d.heads * qk + 1)
        proj = q_term + d.kv_lora * (h + d.heads * (d.qk_dim + d.v_dim) + 1) + h * d.qk_pos
        proj += d.heads * d.v_dim * h
        core = s * d.heads * qk / 2 + s * d.heads * d.v_dim / 2
        attn_proj, attn_core = 6 * layers.attn * proj, 6 * layers.attn * core
    else:
        attn_proj = attn_core = 0.0
        for shape, n in attention_shapes(d, layers):
            layer_proj, layer_core = gqa_layer_flops(shape, s)
            attn_proj, attn_core = attn_proj + n * layer_proj, attn_core + n * layer_core
    logits = 6 * h * padded_vocab(d.vocab, tp) * (1 + mtp_layers)
    mamba_proj, scan = mamba_flops(d, d.d_inner, layers.mamba)
    bridge_proj, bridge_scan = mamba_flops(d, 2 * h, layers.mamba)
    gdn_proj, gdn_core = gdn_flops(d, layers.gdn)
    hc = 6 * layers.sublayers * (d.streams + 1) * (d.streams**2 + 2 * d.streams) * h if d.streams > 1 else 0
    return TokenFlops(
        dense_gemm=mlp + attn_proj + mamba_proj + gdn_proj + logits + hc,
        expert_gemm=experts,
        attention_core=attn_core,
        logits=logits,
        ssm_scan=scan + gdn_core,
        bridge_extra=bridge_proj + bridge_scan - mamba_proj - scan,
    )


def gqa_layer_flops(d: Dims, seq_length: int) -> tuple[float, float]:
    """(projections, core) training FLOPs per token of one GQA attention layer of this shape: QKV, output
    and gate projections; the causal core over seq/2 keys on average, or over a sliding window's keys."""
    h, q = d.hidden, d.q_width
    gate = h * q if d.attn_gate else 0
    proj = 6 * (h * (q + 2 * d.kv_width) + q * h + gate)
    if not d.attn_window:
        return proj, 6 * q * seq_length
    return proj, 12 * q * causal_window_keys(d.attn_window, seq_length)


def mamba_flops(d: Dims, inner: int, mixers: int) -> tuple[float, float]:
    """(in_proj + out_proj, scan) training FLOPs per token of `mixers` Mamba mixers with this inner width
    (Bridge `mamba_layer_flops`, times 3 for forward and backward)."""
    if not mixers:
        return 0.0, 0.0
    in_width = mamba_in_proj_width(inner, d.ssm_heads, d.ssm_state, d.ssm_groups)
    projections = 6 * mixers * d.hidden * (in_width + inner)
    return projections, 21 * mixers * inner * d.ssm_state


def gdn_flops(d: Dims, mixers: int) -> tuple[float, float]:
    """(in_proj + out_proj, convolution + delta-rule core) training FLOPs per token of `mixers` Gated
    DeltaNet mixers: Bridge's gdn_layer_flops (v0.6.0 flop_utils.py), times 3 for forward and backward."""
    if not mixers:
        return 0.0, 0.0
    projections = 6 * mixers * d.hidden * (d.gdn_in_width + d.lin_v)
    core = 6 * mixers * (d.lin_conv * d.gdn_conv_width + 4 * d.lin_v_heads * d.lin_v_dim**2)
    return projections, core


def causal_window_keys(window: int, seq_length: int) -> float:
    """Mean keys a query sees under a causal sliding window: min(i + 1, window) over positions i."""
    w, s = window, seq_length
    if s <= w:
        return (s + 1) / 2
    return (w * (w + 1) / 2 + (s - w) * w) / s


def causal_topk_keys(topk: int, keys: float) -> float:
    """Mean of min(topk, j) for j visible compressed keys, j growing evenly from 0 to `keys` (causal)."""
    if keys <= topk:
        return keys / 2
    return topk - topk * topk / (2 * keys)


def dsv4_flops(d: Dims, layers: LayerMix, seq_length: int) -> tuple[float, float]:
    """(projections, attention core) training FLOPs per token (6 per multiply-add) of DSv4 attention.
    Projections: every GEMM weight of the blocks, compressors and indexers. Core, per attention layer: 64
    heads score and average a 512-wide key for each of the window's keys (csa_window_size, causal), plus on
    CSA layers the indexer's top-k of the seq/4 compressed keys, on HCA layers every visible one of the
    seq/128 compressed keys; the CSA indexer scores every visible compressed key with its own heads."""
    h, v, s = d.hidden, d.v_dim, seq_length
    sharded, whole = dsv4_attention_params(d)
    gemm = sharded + whole - (d.q_lora or 0) - v - d.heads  # not the norms and sinks
    csa = dsv4_compressor_params(h, v, 4) + dsv4_indexer_params(d)
    hca = dsv4_compressor_params(h, v, 128)
    proj = 6 * (layers.attn * gemm + layers.csa * csa + layers.hca * hca)
    per_key = d.heads * 2 * v  # QK^T and AV over one key, one query
    keys = layers.attn * causal_window_keys(d.window, s) + layers.csa * causal_topk_keys(d.idx_topk, s / 4) \
        + layers.hca * s / 128 / 2  # fmt: skip
    indexer = layers.csa * d.idx_heads * d.idx_dim * s / 4 / 2
    return proj, 6 * (per_key * keys + indexer)
