"""Diffusion transformers (Megatron-Bridge's Wan): parameters and saved activations, from the layer code.

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
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError
from assistant.records import DiffusionDims, ModelArch


@dataclass(frozen=True, slots=True)
class DitParams:
    """Parameters of one Wan layer, split by how Megatron shards them, and of the rest of the model."""

    layer_sharded: float  # linear weights and column-parallel biases of one layer (TP-sharded)
    layer_replicated: float  # norms, row-parallel biases and the modulation table of one layer
    first_stage: float  # patch, text and timestep embeddings (replicated)
    last_stage: float  # output head and its modulation (replicated)


def diffusion_dims(arch: ModelArch) -> DiffusionDims:
    if arch.diffusion is None:
        raise UserError(f"{arch.hf_model_id} is not a diffusion transformer")
    return arch.diffusion


def dit_params(arch: ModelArch) -> DitParams:
    """Weights of a Wan DiT by module (the counts include every bias and norm the code builds)."""
    dd = diffusion_dims(arch)
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
    p = dit_params(arch)
    return int(arch.num_layers * (p.layer_sharded + p.layer_replicated) + p.first_stage + p.last_stage)


@dataclass(frozen=True, slots=True)
class DitSaved:
    """Elements one Wan layer saves for backward per video token, by how tensor parallelism splits them."""

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


def micro_batch_tokens(dd: DiffusionDims, seq_length: int, fields: dict) -> tuple[int, str]:
    """Video tokens of one micro-batch, and the note that says how they were counted. The latent shape is
    the recipe's dataset.F/H/W_latents, else the data config's defaults (`WanDatasetConfig`).

    With no `dataset.path` (every bundled Wan recipe) the data is `WanMockDataModuleConfig`, whose collate
    function ignores the sampled items and builds one packed batch of `number_packed_samples` samples
    (`wan_mock_datamodule.py`, `mock_batch`), whatever seq_length says. Real data packs whole samples
    first-fit-decreasing into bins of `seq_length` (`DiffusionTaskEncoderWithSequencePacking`), and a
    sample longer than that still travels whole."""
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
