"""Diffusion transformers (Megatron-Bridge's Wan and FLUX): parameters and saved activations, from the layer
code.

Read from Megatron-Bridge main (067f987), `src/megatron/bridge/diffusion/models/wan/`:
- `wan_layer_spec.py` (`WanLayerWithAdaLN.forward`): per layer a modulated non-affine LayerNorm,
  self-attention (fused QKV with biases, RMSNorm over all heads of q and k, fused RoPE), a gated
  residual; an affine LayerNorm and cross-attention to the text context (q from the video tokens, k and
  v from the context, RMSNorm of q and k); a modulated LayerNorm, a GELU MLP with biases (no gate), a
  gated residual; and the per-layer adaLN modulation table (6 × hidden).
- `wan_model.py`: the Conv3d patch embedding (first stage), the text embedding (text_dim → crossattn →
  crossattn, with biases), the timestep embedder (freq_dim → hidden → hidden) and its 6 × hidden
  projection, the output head (Linear to out_channels × patch volume, and its 2 × hidden modulation).
  Everything outside the layer stack is plain `nn.Linear`/`nn.Conv3d`, replicated over TP.
- The text encoder (UMT5) and the VAE are not part of training: the data (`WanDatasetConfig`, and its mock
  module) hands the step precomputed latents and context embeddings, so only the DiT is on the GPU.

FLUX, read from Megatron-Bridge v0.6.0 (51885cf) and main (067f987, the model code is the same),
`src/megatron/bridge/diffusion/models/flux/`:
- `flux_layer_spec.py`: `MMDiTLayer` (double-stream) keeps an image and a text stream, each with its own
  adaLN table (`AdaLN`, 6 × hidden, a column-parallel linear), QKV with biases, per-head q/k RMSNorms, output
  projection and GELU MLP; the two streams meet in one attention (`flux_attention.py`,
  `JointSelfAttention`). `FluxSingleTransformerBlock` runs on the joined text + image tokens: an adaLN
  table of 3 × hidden, the MLP and a self-attention side by side on the same modulated input, their sum
  gated.
- `flux_model.py`: `img_embed` and `txt_embed` (T5 width → hidden), the timestep, pooled-text (CLIP) and
  guidance embedders (`layers.py`, `MLPEmbedder`: two linears with biases), `norm_out` (adaLN 2 × hidden)
  and `proj_out`; all plain `nn.Linear`, replicated over TP. `provide()` builds every block on every rank
  (no pipeline split) and the forward scatters no sequence (no sequence or context parallelism).
- `flow_matching/flux_adapter.py`: the step packs 2 × 2 latent pixels into one token (`_pack_latents`) and
  takes precomputed T5 and CLIP embeddings from the data (`flux_mock_datamodule.py`): neither text encoder
  nor the VAE is on the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError
from assistant.records import DiffusionDims, ModelArch


@dataclass(frozen=True, slots=True)
class DitParams:
    """Parameters of one Wan layer (a FLUX double-stream block), split by how Megatron shards them, of a
    FLUX single-stream block, and of the rest of the model."""

    layer_sharded: float  # linear weights and column-parallel biases of one layer (TP-sharded)
    layer_replicated: float  # norms, row-parallel biases and the modulation table of one layer
    first_stage: float  # patch, text and timestep embeddings (replicated)
    last_stage: float  # output head and its modulation (replicated)
    single_sharded: float = 0.0  # FLUX single-stream block, as layer_sharded
    single_replicated: float = 0.0


def tensor_parallel_only(arch: ModelArch) -> bool:
    """Bridge's Flux builds every block on each rank and scatters no sequence (`flux_provider.py`
    `provide`, `flux_model.py` `forward`): of the model-parallel sizes only TP applies, without SP."""
    return arch.diffusion is not None and arch.diffusion.kind == "flux"


def diffusion_dims(arch: ModelArch) -> DiffusionDims:
    if arch.diffusion is None:
        raise UserError(f"{arch.hf_model_id} is not a diffusion transformer")
    return arch.diffusion


def dit_params(arch: ModelArch) -> DitParams:
    """Weights of a Wan DiT (or, for FLUX, of a double-stream block) by module (the counts include every
    bias and norm the code builds)."""
    dd = diffusion_dims(arch)
    if dd.kind == "flux":
        return flux_params(arch)
    h, f, c = arch.hidden_size, arch.ffn_hidden_size or 4 * arch.hidden_size, dd.cross_attention_size
    self_attn = 3 * h * h + 3 * h + h * h  # linear_qkv (weight, bias), linear_proj weight
    cross_attn = h * h + h + 2 * c * h + 2 * h + h * h  # linear_q, linear_kv (weights, biases), linear_proj
    mlp = 2 * h * f + f  # linear_fc1 (weight, bias), linear_fc2 weight
    # Row-parallel biases (both linear_proj, linear_fc2), the q/k RMSNorms of both attentions (over all
    # heads), norm3's weight and bias, and the adaLN modulation table (6 × hidden).
    replicated = 3 * h + 4 * h + 2 * h + 6 * h
    first = (
        dd.in_channels * dd.patch_volume * h + h  # patch_embedding (Conv3d)
        + dd.context_dim * c + c + c * c + c  # text_embedding
        + dd.freq_dim * h + h + h * h + h  # time_embedder
        + 6 * h * h + 6 * h  # time_proj
    )  # fmt: skip
    last = h * dd.out_channels * dd.patch_volume + dd.out_channels * dd.patch_volume + 2 * h  # head
    return DitParams(self_attn + cross_attn + mlp, replicated, first, last)


def dit_total_params(arch: ModelArch) -> int:
    """Every parameter of the DiT (what a checkpoint of the transformer holds)."""
    p, dd = dit_params(arch), diffusion_dims(arch)
    if dd.kind == "flux":
        single = arch.num_layers - dd.joint_layers
        blocks = dd.joint_layers * (p.layer_sharded + p.layer_replicated)
        blocks += single * (p.single_sharded + p.single_replicated)
        return int(blocks + p.first_stage + p.last_stage)
    return int(arch.num_layers * (p.layer_sharded + p.layer_replicated) + p.first_stage + p.last_stage)


def flux_params(arch: ModelArch) -> DitParams:
    """Weights of FLUX's blocks and embedders as Bridge builds them (`flux_layer_spec.py`,
    `flux_attention.py`, `flux_model.py`, `layers.py`). Column-parallel linears (the adaLN tables, QKV,
    fc1) shard weight and bias over TP; row-parallel ones (output projections, fc2) shard the weight and
    keep the bias whole; the per-head q/k RMSNorms (kv_channels wide) are whole."""
    dd = diffusion_dims(arch)
    h, f = arch.hidden_size, arch.ffn_hidden_size or 4 * arch.hidden_size
    kv = arch.kv_channels or h // arch.num_attention_heads
    adaln_double = 6 * h * h + 6 * h  # AdaLN(n_adaln_chunks=6, modulation_bias=True)
    qkv = 3 * h * h + 3 * h  # linear_qkv / added_linear_qkv with add_qkv_bias
    mlp_sharded = h * f + f + f * h  # linear_fc1 (weight, bias), linear_fc2 weight
    # Per stream (image and text): adaLN, QKV, linear_proj weight, MLP; the biases of linear_proj and fc2.
    double_sharded = 2 * (adaln_double + qkv + h * h + mlp_sharded)
    double_replicated = 2 * (h + h) + 4 * kv  # and q, k, added_q, added_k RMSNorms
    # adaLN (3 chunks, bias), QKV, linear_proj without a bias, the MLP; fc2's bias and the q/k RMSNorms.
    single_sharded = 3 * h * h + 3 * h + qkv + h * h + mlp_sharded
    single_replicated = h + 2 * kv

    def mlp_embedder(width: int) -> int:  # in_layer and out_layer, both with biases
        return width * h + h + h * h + h

    first = (
        dd.in_channels * dd.patch_volume * h + h  # img_embed
        + dd.context_dim * h + h  # txt_embed
        + mlp_embedder(dd.freq_dim)  # timestep_embedding.time_embedder
        + mlp_embedder(dd.pooled_dim)  # vector_embedding
        + (mlp_embedder(dd.freq_dim) if dd.guidance_embed else 0)  # guidance_embedding
    )  # fmt: skip
    last = 2 * h * h + 2 * h + h * dd.out_channels * dd.patch_volume + dd.out_channels * dd.patch_volume
    return DitParams(
        double_sharded, double_replicated, first, last, single_sharded=single_sharded,
        single_replicated=single_replicated,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class DitSaved:
    """Elements one Wan layer (or FLUX block) saves for backward per token, by how tensor parallelism splits
    them."""

    sequence: float  # hidden-wide, split over TP only with sequence parallelism
    heads: float  # split over TP by heads (or the FFN)
    whole: float  # never split: the q/k RMSNorm inputs over all heads


def dit_saved_elements(arch: ModelArch, tokens: float) -> DitSaved:
    """What one layer saves for backward per video token (the context's share spread over `tokens`).

    Self-attention: the layer input (the LayerNorm's; the LayerNorm-and-modulate is one `jit_fuser`
    (torch.compile) function, which recomputes the normalised tensor), the modulated QKV input and the
    projected output (its gate's gradient); per head v, q and k after the fused RoPE (which saves nothing
    else) and the attention output. The QKV output itself is not kept: v is a strided view of it, which TE's
    `get_qkv_layout` finds "not_supported" next to separate q and k, so TE attention saves contiguous copies.
    The provider's `layernorm_across_heads` gathers q and k over all heads before their RMSNorms
    (`dit_attention.py`, `gather_from_tensor_model_parallel_region`), so those two saved norm inputs are
    hidden-wide on every TP rank. Cross-attention: the affine LayerNorm's input and output (linear_q input),
    q's RMSNorm input (gathered, whole), q after it and the attention output; per context token its input,
    k and v. MLP: the LayerNorm input, the modulated fc1 input, the MLP output (its gate's gradient); the
    GELU input and output (fc2 input). Flash attention's fp32 softmax statistics (two per head and token)
    for both attentions.
    """
    dd = diffusion_dims(arch)
    h, f, heads = arch.hidden_size, arch.ffn_hidden_size or 4 * arch.hidden_size, arch.num_attention_heads
    context = dd.context_tokens * (dd.cross_attention_size + 3 * h) / max(tokens, 1.0)
    stats = 2 * (2 * heads) * 2  # two fp32 statistics per head, in bf16 units, for two attentions
    sequence = 3 * h + 2 * h + 3 * h  # self-attention, cross-attention, MLP
    per_head = 4 * h + 2 * h + 2 * f + context + stats
    return DitSaved(sequence=sequence, heads=per_head, whole=2 * h + h)


def flux_saved_elements(arch: ModelArch) -> tuple[DitSaved, DitSaved]:
    """What a FLUX double-stream and a single-stream block save for backward per token of the joined
    text + image sequence (both streams of a double block save the same set, each per its own tokens).

    Double block, per stream (`MMDiTLayer.forward`): the layer input (AdaLN's `modulated_layernorm` is one
    `jit_fuser` function), the modulated QKV input, the projected attention output its gate multiplies
    (`scale_add`), the second LayerNorm's input, the modulated fc1 input, the MLP output (its gate); per head
    q and k as the TE RMSNorms save them (they are strided views of the fused QKV output), and the joint
    attention's q, k and v (rebuilt by `torch.cat` and the unfused RoPE: FluxProvider sets
    apply_rope_fusion=False) and its output, which linear_proj reads as a slice; the GELU input and output
    (fc2 input); flash attention's two fp32 statistics per head. The RoPE multiplies q and k by a bf16 cos and
    sin table per token (`rope_utils.py`, `_apply_rotary_pos_emb_bshd`), one head wide and whole on every
    TP rank. Single block (`FluxSingleTransformerBlock.forward`): the input, the modulated input fc1 and
    linear_qkv both read, the gated sum of MLP and attention; per head the same attention tensors and GELU.
    """
    h, f, heads = arch.hidden_size, arch.ffn_hidden_size or 4 * arch.hidden_size, arch.num_attention_heads
    kv = arch.kv_channels or h // heads
    stats = 2 * heads * 2  # two fp32 statistics per head, in bf16 units
    per_head = 2 * h + 4 * h + 2 * f + stats  # q/k norm inputs; q, k, v, output; GELU in and out
    rope = 4 * kv  # cos and sin for q and for k
    double = DitSaved(sequence=6 * h, heads=per_head, whole=rope)
    single = DitSaved(sequence=3 * h, heads=per_head, whole=rope)
    return double, single


def flux_sample_tokens(dd: DiffusionDims, fields: dict) -> tuple[int, int, str]:
    """(image, text) tokens of one FLUX sample and the note that says how they were counted: the image is
    the recipe's dataset.image_H × image_W over its vae_scale_factor, in 2 × 2 latent patches
    (`flux_adapter.py`, `_pack_latents`), and the text dataset.prompt_seq_len T5 tokens. A micro-batch
    stacks micro_batch_size such samples (no packing: `flux_mock_datamodule.py`, `_collate_fn`)."""

    def field(name: str, default: int) -> int:
        value = fields.get(name)
        return value if isinstance(value, int) and value > 0 else default

    vae = field("dataset.vae_scale_factor", dd.vae_scale_factor)
    height = field("dataset.image_H", dd.sample_latents[1] * dd.vae_scale_factor)
    width = field("dataset.image_W", dd.sample_latents[2] * dd.vae_scale_factor)
    image = dd.sample_tokens(1, height // vae, width // vae)
    text = field("dataset.prompt_seq_len", dd.context_tokens)
    patch = f"{dd.patch_spatial}×{dd.patch_spatial}"
    if image < 1:
        raise UserError(f"an image of {height}×{width} pixels gives no {patch} latent patches")
    real = (
        " (the recipe's size; with dataset.path the dataset's images set it)"
        if fields.get("dataset.path")
        else ""
    )
    note = (
        f"diffusion transformer (FLUX): a sample is {image:,} image tokens ({height}×{width} pixels{real}, "
        f"latents of 1/{vae} in {patch} patches) and {text:,} text tokens, joined in every block; the T5 and "
        "CLIP encoders and the VAE are not on the GPU (precomputed embeddings and latents)"
    )
    return image, text, note


def micro_batch_tokens(dd: DiffusionDims, seq_length: int, fields: dict) -> tuple[int, str]:
    """Video tokens of one micro-batch, and the note that says how they were counted. The latent shape is
    the recipe's dataset.F/H/W_latents, else the data config's defaults (`WanDatasetConfig`).

    With no `dataset.path` (every bundled Wan recipe) the data is `WanMockDataModuleConfig`, whose collate
    function ignores the sampled items and builds one packed batch of `number_packed_samples` samples
    (`wan_mock_datamodule.py`, `mock_batch`), whatever seq_length says. Real data packs whole samples
    first-fit-decreasing into bins of `seq_length` (`DiffusionTaskEncoderWithSequencePacking`), and a
    sample longer than that still travels whole. FLUX: one sample's image and text tokens
    (flux_sample_tokens), which the memory estimate multiplies by the micro-batch size."""
    if dd.kind == "flux":
        image, text, note = flux_sample_tokens(dd, fields)
        return image + text, note
    names = ("dataset.F_latents", "dataset.H_latents", "dataset.W_latents")
    shape: list[int] = []
    for name, default in zip(names, dd.sample_latents, strict=True):
        value = fields.get(name)
        shape.append(value if isinstance(value, int) else default)
    sample = dd.sample_tokens(*shape)
    patch = f"{dd.patch_temporal}×{dd.patch_spatial}×{dd.patch_spatial}"
    if sample < 1:
        raise UserError(f"the latent shape {shape} gives no patches of {patch}")
    packed = fields.get("dataset.number_packed_samples")
    if not fields.get("dataset.path"):  # mock data
        count, how = (packed if isinstance(packed, int) and packed > 0 else 1), "mock data packs"
    else:
        count = max(1, seq_length // sample)
        how = f"a micro-batch packs, within the recipe's seq_length {seq_length:,},"
    note = (
        f"diffusion transformer: {how} {count} whole sample(s) of {sample:,} latent patches "
        f"({shape[0]}×{shape[1]}×{shape[2]} latents in {patch} patches); the text encoder and VAE are not on "
        "the GPU (precomputed context embeddings and latents)"
    )
    return count * sample, note
