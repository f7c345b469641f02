"""A VLM config.json's vision_config -> VisionTowerDims, per tower build Megatron-Bridge uses (pure).

Each top-level `model_type` names one build (assistant/estimate/vision.py describes them); a config whose
keys do not pin every width, or that sets an option the build here does not model (biased Mistral 3 or
GLM-4V linears, several Pixtral feature layers, another Kimi projector), gets None, and the estimate says
the tower is not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assistant.records import VisionTowerDims

Parser = Callable[[dict[str, Any], dict[str, Any]], VisionTowerDims | None]


def vision_from_hf_config(config: dict[str, Any]) -> VisionTowerDims | None:
    """The vision tower of a VLM config.json whose build is modelled; None otherwise."""
    vision, parser = config.get("vision_config"), _PARSERS.get(str(config.get("model_type")))
    if not isinstance(vision, dict) or parser is None:
        return None
    return parser(config, vision)


def _ints(cfg: dict[str, Any], *keys: str) -> list[int] | None:
    values = [cfg.get(key) for key in keys]
    return [int(v) for v in values if v is not None] if all(v is not None for v in values) else None


def _text_width(config: dict[str, Any]) -> int | None:
    text = config.get("text_config")
    width = text.get("hidden_size") if isinstance(text, dict) else None
    return None if width is None else int(width)


def _qwen(*, megatron: bool) -> Parser:
    """Qwen3-VL / Qwen3.5 (Megatron layers, LayerNorm, learned positions, deepstack) or Qwen2.5-VL (HF)."""

    def parse(_config: dict[str, Any], v: dict[str, Any]) -> VisionTowerDims | None:
        keys = ("depth", "hidden_size", "intermediate_size", "num_heads", "patch_size", "out_hidden_size")
        dims = _ints(v, *keys)
        if dims is None:
            return None  # a partial vision_config: the tower stays uncounted
        depth, hidden, ffn, heads, patch, out = dims
        return VisionTowerDims(
            depth=depth, hidden_size=hidden, ffn_hidden_size=ffn, num_heads=heads, patch_size=patch,
            temporal_patch_size=int(v.get("temporal_patch_size", 2)),
            in_channels=int(v.get("in_channels") or v.get("in_chans") or 3),
            spatial_merge_size=int(v.get("spatial_merge_size", 2)),
            out_hidden_size=out,
            num_position_embeddings=int(v.get("num_position_embeddings") or 0) if megatron else 0,
            gated_mlp=not megatron, layer_norm=megatron, patch_bias=megatron,
            deepstack_mergers=len(v.get("deepstack_visual_indexes") or []) if megatron else 0,
            tensor_parallel=megatron,
        )  # fmt: skip

    return parse


def _gemma3(config: dict[str, Any], v: dict[str, Any]) -> VisionTowerDims | None:
    """SigLIP without its pooling head, then Bridge's RMSNorm + ColumnParallelLinear projector."""
    dims = _ints(v, "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                 "patch_size", "image_size")  # fmt: skip
    out = _text_width(config)
    if dims is None or out is None:
        return None
    depth, hidden, ffn, heads, patch, image = dims
    return VisionTowerDims(
        depth=depth, hidden_size=hidden, ffn_hidden_size=ffn, num_heads=heads, patch_size=patch,
        in_channels=int(v.get("num_channels") or 3), out_hidden_size=out,
        num_position_embeddings=(image // patch) ** 2, extra_norms=1, projector="gemma3",
    )  # fmt: skip


def _mistral3(config: dict[str, Any], v: dict[str, Any]) -> VisionTowerDims | None:
    """Pixtral and the Mistral 3 projector, without biases and from one feature layer."""
    dims = _ints(v, "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                 "patch_size")  # fmt: skip
    out = _text_width(config)
    if dims is None or out is None or config.get("multimodal_projector_bias"):
        return None
    if not isinstance(config.get("vision_feature_layer", -1), int):
        return None  # several feature layers widen the projector's first linear
    depth, hidden, ffn, heads, patch = dims
    return VisionTowerDims(
        depth=depth, hidden_size=hidden, ffn_hidden_size=ffn, num_heads=heads, patch_size=patch,
        in_channels=int(v.get("num_channels") or 3), out_hidden_size=out,
        spatial_merge_size=int(config.get("spatial_merge_size", 2)), gated_mlp=True, layer_norm=False,
        patch_bias=False, linear_bias=False, extra_norms=1, projector="mistral3",
    )  # fmt: skip


def _glm4v(_config: dict[str, Any], v: dict[str, Any]) -> VisionTowerDims | None:
    """transformers' Glm4vVisionModel: the blocks' MLP is out_hidden_size wide, the merger's is
    intermediate_size."""
    dims = _ints(v, "depth", "hidden_size", "intermediate_size", "num_heads", "patch_size", "image_size",
                 "out_hidden_size")  # fmt: skip
    if dims is None or v.get("attention_bias"):
        return None
    depth, hidden, ffn, heads, patch, image, out = dims
    return VisionTowerDims(
        depth=depth, hidden_size=hidden, ffn_hidden_size=out, num_heads=heads, patch_size=patch,
        temporal_patch_size=int(v.get("temporal_patch_size", 2)), in_channels=int(v.get("in_channels") or 3),
        spatial_merge_size=int(v.get("spatial_merge_size", 2)), out_hidden_size=out,
        num_position_embeddings=(image // patch) ** 2, gated_mlp=True, layer_norm=False, linear_bias=False,
        extra_norms=2, projector="glm4v", projector_ffn_hidden_size=ffn,
    )  # fmt: skip


def _kimi_k25(config: dict[str, Any], v: dict[str, Any]) -> VisionTowerDims | None:
    """The checkpoint's MoonViT and PatchMergerMLP (vt_* keys; a square merge kernel)."""
    keys = ("vt_num_hidden_layers", "vt_hidden_size", "vt_intermediate_size", "vt_num_attention_heads",
            "patch_size", "init_pos_emb_height", "init_pos_emb_width")  # fmt: skip
    dims = _ints(v, *keys)
    out = v.get("text_hidden_size") or _text_width(config)
    kernel = v.get("merge_kernel_size") or [2, 2]
    if dims is None or out is None or v.get("mm_projector_type", "patchmerger") != "patchmerger":
        return None
    if len(kernel) != 2 or kernel[0] != kernel[1]:
        return None
    depth, hidden, ffn, heads, patch, height, width = dims
    return VisionTowerDims(
        depth=depth, hidden_size=hidden, ffn_hidden_size=ffn, num_heads=heads, patch_size=patch,
        spatial_merge_size=int(kernel[0]), out_hidden_size=int(out), num_position_embeddings=height * width,
        extra_norms=1,
    )  # fmt: skip


_PARSERS: dict[str, Parser] = {
    **dict.fromkeys(("qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"), _qwen(megatron=True)),
    "qwen2_5_vl": _qwen(megatron=False),
    "gemma3": _gemma3,
    "mistral3": _mistral3,
    "glm4v_moe": _glm4v,
    "kimi_k25": _kimi_k25,
}
