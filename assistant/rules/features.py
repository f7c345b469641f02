"""Overrides that turn on a performance feature the user asked for by name, without giving keys (pure).

CUDA graphs: the guide's safe first configuration (cuda-graphs.md#cuda-graph-first-try). Transformer Engine
graphs of the attention block for dense models, of the router and dispatch preprocessing for MoE (whole MoE
layers have dynamic shapes), and the TE RNG tracker that graph capture needs, on both config sections that
carry it (Bridge keeps them in sync, but setting both is what the recipes do).
"""

from __future__ import annotations

from typing import Any

CUDA_GRAPH_SCOPE_DENSE = ["attn"]
CUDA_GRAPH_SCOPE_MOE = ["moe_router", "moe_preprocess"]


def feature_overrides(features: list[str], *, is_moe: bool) -> dict[str, Any]:
    """Config writes for the requested features; the user's own KEY=VALUE pairs are applied after these."""
    out: dict[str, Any] = {}
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
