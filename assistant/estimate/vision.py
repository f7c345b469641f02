"""Parameters of a VLM's vision encoder and projector, split by how Megatron-Bridge shards them (pure).

Qwen3-VL and Qwen3.5 (Bridge `qwen_vl/modelling_qwen3_vl/vision_model.py`, v0.5.1+): a Conv3d patch
embedding with a bias and a learned position table (plain torch modules, whole on every rank), then
`depth` ViT blocks from Megatron's TE layer spec (`get_vision_model_config`: LayerNorm, biases on every
linear, GELU, no GQA) and the patch merger (`utils.py` Qwen3VLVisionPatchMerger: a norm, then two linears
on merge²·hidden), one more merger per deepstack index. The linears are column/row parallel over the
language model's TP group, so their weights (and the column-parallel biases) divide by TP.

The others are Hugging Face modules built whole on every TP rank (their gradients are all-reduced over
TP, `hook_hf_module_setattr_for_tp_grad_sync`):
- Qwen2.5-VL (`modeling_qwen25_vl.py`, `Qwen2_5_VisionTransformerPretrainedModel`): RMSNorm, a SwiGLU MLP,
  a Conv3d patch embedding without a bias, rotary positions, and one merger.
- Gemma 3 (`gemma_vl/modeling_gemma3_vl.py`): SigLIP's vision model without its pooling head
  (`vision_use_head = False`): a Conv2d patch embedding with a bias, a learned position table, LayerNorm
  and GELU blocks with biases, a final LayerNorm. Its projector is Megatron's (`Gemma3VLMultimodalProjector`):
  an average pool, an RMSNorm and one ColumnParallelLinear without bias, sharded over the TP group.
- Ministral 3 (`ministral3/modeling_ministral3.py`): Pixtral's vision model (a Conv2d patch embedding
  without bias, an RMSNorm before the blocks, RMSNorm and SwiGLU blocks without biases, rotary positions)
  and transformers' `Mistral3MultiModalProjector` (an RMSNorm, a merge² patch-merging linear, two linears).
- GLM-4.5V (`glm_vl/modeling_glm_45v.py`, transformers' `Glm4vVisionModel`): a Conv3d patch embedding
  with a bias, a learned position table, RMSNorm and SwiGLU blocks (attention without biases; the MLP is
  out_hidden_size wide), two more RMSNorms, a merge² Conv2d downsample to the language width and a merger
  (a linear, a LayerNorm, a SwiGLU MLP of intermediate_size, no biases).
- Kimi-K2.5 (`kimi_vl/modeling_kimi_k25_vl.py`, the checkpoint's MoonViT and PatchMergerMLP): SigLIP-like
  blocks and position table, a final LayerNorm, and the Qwen-style merger (LayerNorm, two biased linears).
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.records import VisionTowerDims


@dataclass(frozen=True, slots=True)
class VisionParams:
    """Parameters of the encoder and of the projector: TP-sharded and replicated parts."""

    encoder_sharded: float
    encoder_replicated: float
    projector_sharded: float
    projector_replicated: float

    @property
    def total(self) -> float:
        encoder = self.encoder_sharded + self.encoder_replicated
        return encoder + self.projector_sharded + self.projector_replicated

    def encoder_per_rank(self, tp: int) -> float:
        return self.encoder_sharded / tp + self.encoder_replicated

    def projector_per_rank(self, tp: int) -> float:
        return self.projector_sharded / tp + self.projector_replicated


def vision_params(v: VisionTowerDims) -> VisionParams:
    """Every weight and bias of the tower; a Hugging Face module (`tensor_parallel` False) is replicated."""
    h, f = v.hidden_size, v.ffn_hidden_size
    norm = 2 * h if v.layer_norm else h
    mlp_in = 2 if v.gated_mlp else 1  # gate and up projections, or one fc1
    bias = 1 if v.linear_bias else 0
    # qkv (weight, bias) and fc1/gate/up (weight, bias) are column parallel; proj and fc2 row parallel
    # (weight sharded, bias whole).
    block_sharded = h * 3 * h + bias * 3 * h + h * h + mlp_in * (h * f + bias * f) + f * h
    block_replicated = 2 * norm + bias * (h + h)
    patch = v.in_channels * v.temporal_patch_size * v.patch_size**2 * h + (h if v.patch_bias else 0)
    encoder_replicated = (
        v.depth * block_replicated + patch + v.num_position_embeddings * h + v.extra_norms * norm
    )
    projector_sharded, projector_replicated = _projector(v)
    if not v.tensor_parallel:
        encoder_replicated += v.depth * block_sharded
        block_sharded = 0
        if v.projector != "gemma3":  # Gemma 3's projector linear is Megatron's, sharded over TP anyway
            projector_sharded, projector_replicated = 0, projector_sharded + projector_replicated
    return VisionParams(
        encoder_sharded=float(v.depth * block_sharded),
        encoder_replicated=float(encoder_replicated),
        projector_sharded=float(projector_sharded),
        projector_replicated=float(projector_replicated),
    )


def _projector(v: VisionTowerDims) -> tuple[int, int]:
    """(TP-shardable, replicated) parameters of the projector as Bridge builds it (see the module doc)."""
    h, out, merge2 = v.hidden_size, v.out_hidden_size, v.spatial_merge_size**2
    if v.projector == "gemma3":
        return h * out, h  # ColumnParallelLinear without bias; the RMSNorm weight
    if v.projector == "mistral3":
        return 0, h + h * merge2 * h + h * out + out * out  # norm, merging_layer, linear_1, linear_2
    if v.projector == "glm4v":
        ctx = v.projector_ffn_hidden_size
        downsample = h * merge2 * out + out  # Conv2d(hidden -> out, kernel merge) with a bias
        merger = out * out + 2 * out + 2 * out * ctx + ctx * out  # proj, LayerNorm, gate/up, down
        return 0, downsample + merger
    merged = h * merge2
    merger_sharded = merged * merged + merged + merged * out
    merger_norm = 2 * h if v.layer_norm else h
    deepstack_norm = 2 * merged  # the deepstack mergers normalise after the merge (use_postshuffle_norm)
    replicated = merger_norm + out + v.deepstack_mergers * (deepstack_norm + out)
    return (1 + v.deepstack_mergers) * merger_sharded, replicated
