"""Parameters of a VLM's vision encoder and projector, split by how Megatron-Bridge shards them (pure).

Qwen3-VL and Qwen3.5 (Bridge `qwen_vl/modelling_qwen3_vl/vision_model.py`, v0.5.1+): a Conv3d patch
embedding with a bias and a learned position table (plain torch modules, whole on every rank), then
`depth` ViT blocks from Megatron's TE layer spec (`get_vision_model_config`: LayerNorm, biases on every
linear, GELU, no GQA) and the patch merger (`utils.py` Qwen3VLVisionPatchMerger: a norm, then two linears
on merge²·hidden), one more merger per deepstack index. The linears are column/row parallel over the
language model's TP group, so their weights (and the column-parallel biases) divide by TP.

Qwen2.5-VL (`modeling_qwen25_vl.py`): the Hugging Face `Qwen2_5_VisionTransformerPretrainedModel`, built
whole on every TP rank (its gradients are all-reduced over TP): RMSNorm, a SwiGLU MLP, a Conv3d patch
embedding without a bias, rotary positions, and one merger.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.records import VisionTowerDims


@dataclass(frozen=True, slots=True)
class VisionParams:
    """Parameters of the encoder and of the projector (the mergers): TP-sharded and replicated parts."""

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
    """Every weight and bias of the tower; with `tensor_parallel` False all of it is replicated."""
    h, f = v.hidden_size, v.ffn_hidden_size
    norm = 2 * h if v.layer_norm else h
    mlp_in = 2 if v.gated_mlp else 1  # gate and up projections, or one fc1
    # qkv (weight, bias) and fc1/gate/up (weight, bias) are column parallel; proj and fc2 row parallel
    # (weight sharded, bias whole).
    block_sharded = h * 3 * h + 3 * h + h * h + mlp_in * (h * f + f) + f * h
    block_replicated = 2 * norm + h + h
    patch = v.in_channels * v.temporal_patch_size * v.patch_size**2 * h + (h if v.patch_bias else 0)
    encoder_replicated = v.depth * block_replicated + patch + v.num_position_embeddings * h
    merged = h * v.spatial_merge_size**2
    merger_sharded = merged * merged + merged + merged * v.out_hidden_size
    merger_norm = 2 * h if v.layer_norm else h
    deepstack_norm = 2 * merged  # the deepstack mergers normalise after the merge (use_postshuffle_norm)
    projector_replicated = merger_norm + v.out_hidden_size + v.deepstack_mergers * (
        deepstack_norm + v.out_hidden_size
    )
    projector_sharded = (1 + v.deepstack_mergers) * merger_sharded
    if not v.tensor_parallel:
        return VisionParams(0.0, float(v.depth * block_sharded + encoder_replicated), 0.0,
                            float(projector_sharded + projector_replicated))  # fmt: skip
    return VisionParams(
        encoder_sharded=float(v.depth * block_sharded),
        encoder_replicated=float(encoder_replicated),
        projector_sharded=float(projector_sharded),
        projector_replicated=float(projector_replicated),
    )
