"""Overrides that turn on a performance feature the user asked for by name, without giving keys (pure).

Precision: the release's generic mixed-precision preset, by name
(`mixed_precision=bf16_with_fp8_current_scaling_mixed`), which Bridge resolves with get_mixed_precision_config
exactly as it does the recipe's own "bf16_mixed".
CUDA graphs: the guide's safe first configuration (cuda-graphs.md#cuda-graph-first-try). Transformer Engine
graphs of the attention block for dense models, of the router and dispatch preprocessing for MoE (whole MoE
layers have dynamic shapes), and the TE RNG tracker that graph capture needs, on both config sections that
carry it (Bridge keeps them in sync, but setting both is what the recipes do).
"""

from __future__ import annotations

from typing import Any

# Bridge's generic mixed-precision preset per recipe-name precision code (names checked against the release's
# extracted presets, knowledge_base/mixed_precision.json, before use).
PRESET_OF_PRECISION = {
    "bf16": "bf16_mixed",
    "fp8cs": "bf16_with_fp8_current_scaling_mixed",
    "fp8mx": "bf16_with_mxfp8_mixed",
    "nvfp4": "bf16_with_nvfp4_mixed",
}
CUDA_GRAPH_SCOPE_DENSE = ["attn"]
CUDA_GRAPH_SCOPE_MOE = ["moe_router", "moe_preprocess"]


_PRESET_MARKERS = (
    ("fp8mx", "mxfp8"),
    ("nvfp4", "nvfp4"),
    ("fp8sc", "fp8_subchannel"),
    ("fp8ds", "fp8_delayed"),
    ("fp8cs", "fp8_current"),
    ("bf16", "bf16_mixed"),
)


def precision_of_preset(preset: str) -> str | None:
    """The precision code of a mixed-precision preset name ("bf16_with_mxfp8_mixed" -> "fp8mx")."""
    name = preset.replace("-", "_")
    return next((code for code, marker in _PRESET_MARKERS if marker in name), None)


def feature_overrides(
    features: list[str],
    *,
    is_moe: bool,
    precision: str | None = None,
    recipe_precision: str | None = None,
    presets: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Config writes for the requested features and precision (when the release has the preset and the
    recipe does not already train in it); the user's own KEY=VALUE pairs are applied after these."""
    out: dict[str, Any] = {}
    preset = PRESET_OF_PRECISION.get(precision or "")
    if preset in presets and precision != (recipe_precision or "bf16"):
        out["mixed_precision"] = preset
    if "cuda_graphs" in features:
        out.update(
            {
                "model.cuda_graph_impl": "transformer_engine",
                "model.cuda_graph_scope": list(CUDA_GRAPH_SCOPE_MOE if is_moe else CUDA_GRAPH_SCOPE_DENSE),
                "model.use_te_rng_tracker": True,
                "rng.te_rng_tracker": True,
            }
        )
    return out
