"""Model architectures: the bundled catalog (read side) and the HF-config -> ModelArch mapping.

The mapping and the parameter counter are pure functions so that `ingest.models` (which writes
knowledge_base/models) and `load_local_config` (a user's own config.json) share one copy.
HF keys map to Megatron TransformerConfig names the way Megatron-Bridge's CONFIG_MAPPING does
(`src/megatron/bridge/models/conversion/model_bridge.py`, v0.3.1+).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assistant.errors import UserError
from assistant.estimate.dit import dit_total_params
from assistant.estimate.shapes import dims_of, mamba_mixer_params, total_params
from assistant.kb import KnowledgeBase
from assistant.records import ModelArch, RecipeRecord
from assistant.vision_towers import vision_from_hf_config

# Nested keys under which multimodal configs keep their language model, outermost first
# (Qwen3-Omni: thinker_config.text_config; Nemotron VL: llm_config; most VLMs: text_config).
_TEXT_CONFIG_KEYS = ("thinker_config", "text_config", "llm_config", "language_config")
# Keys whose presence marks a multimodal (vision/audio) model.
_MODALITY_KEYS = ("vision_config", "audio_config", "vision_encoder", "sound_config", "vit_config")
# transformers config classes whose tie_word_embeddings default is True when config.json omits it.
_TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text")
# Activations of plain (non-gated) MLPs.
_NON_GATED_ACTS = ("relu2", "squared_relu")
_NON_GATED_MODEL_TYPES = ("nemotron_h", "nemotron", "nemotronh")
_REQUIRED_KEYS = ("num_hidden_layers", "hidden_size", "num_attention_heads")
# Mamba-hybrid model types: without a layer pattern their layers cannot be counted.
_HYBRID_MODEL_TYPES = ("nemotron_h", "nemotronh")
# Keys of architectures the counter does not model (LatentMoE experts work in a smaller latent width).
_UNCOUNTED_KEYS = ("moe_latent_size",)


# ------------------------------------------------------------------ mapping HF config -> ModelArch


@dataclass(frozen=True)
class MixerDims:
    """Token-mixer layers that ModelArch does not describe field by field (needed to count parameters).

    Mamba-2 layers (Nemotron-H: `hybrid_override_pattern`, M = Mamba, * = attention, - = MLP, E = MoE)
    and Gated-DeltaNet linear-attention layers (Qwen3-Next style, every `full_attention_interval`-th
    layer is full attention, whose query projection is doubled for an output gate).
    """

    pattern: str | None = None
    mamba_num_heads: int = 0
    mamba_head_dim: int = 0
    mamba_state_dim: int = 0
    mamba_num_groups: int = 0
    conv_kernel: int = 4
    linear_layers: int = 0
    linear_num_key_heads: int = 0
    linear_key_head_dim: int = 0
    linear_num_value_heads: int = 0
    linear_value_head_dim: int = 0
    attn_output_gate: bool = False


def split_text_config(config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Return (language-model config, is_multimodal) for a top-level HF config."""
    text = config
    multimodal = any(key in text for key in _MODALITY_KEYS)
    for key in _TEXT_CONFIG_KEYS:
        nested = text.get(key)
        if isinstance(nested, dict):
            text = nested
            multimodal = multimodal or any(k in text for k in _MODALITY_KEYS)
    return text, multimodal


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return None


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def mixer_dims_from_config(text: dict[str, Any]) -> MixerDims | None:
    """Mamba / linear-attention dimensions of a hybrid model; None for a plain transformer."""
    pattern = text.get("hybrid_override_pattern")
    if pattern:
        heads = int(_first(text, "mamba_num_heads") or 0)
        return MixerDims(
            pattern=pattern,
            mamba_num_heads=heads,
            mamba_head_dim=int(_first(text, "mamba_head_dim") or 0),
            mamba_state_dim=int(_first(text, "ssm_state_size", "mamba_state_dim") or 0),
            mamba_num_groups=int(_first(text, "n_groups", "mamba_n_groups", "mamba_num_groups") or 1),
            conv_kernel=int(_first(text, "conv_kernel", "mamba_d_conv") or 4),
        )
    layer_types = text.get("layer_types")
    if isinstance(layer_types, list) and "linear_attention" in layer_types:
        linear_layers = layer_types.count("linear_attention")
    elif text.get("full_attention_interval") and text.get("linear_num_value_heads"):
        n, every = int(text["num_hidden_layers"]), int(text["full_attention_interval"])
        linear_layers = n - n // every
    else:
        return None
    return MixerDims(
        linear_layers=linear_layers,
        linear_num_key_heads=int(text["linear_num_key_heads"]),
        linear_key_head_dim=int(text["linear_key_head_dim"]),
        linear_num_value_heads=int(text["linear_num_value_heads"]),
        linear_value_head_dim=int(text["linear_value_head_dim"]),
        conv_kernel=int(text.get("linear_conv_kernel_dim") or 4),
        attn_output_gate=bool(text.get("attn_output_gate", True)),
    )


def arch_from_hf_config(config: dict[str, Any], hf_model_id: str, source: str) -> ModelArch:
    """Map an HF `config.json` dict to a ModelArch, with parameter counts; bad input -> UserError."""
    if not isinstance(config, dict):
        raise UserError(f"{hf_model_id}: config must be a JSON object, got {type(config).__name__}.")
    text, multimodal = split_text_config(config)
    missing = [key for key in _REQUIRED_KEYS if text.get(key) is None]
    if missing:
        raise UserError(
            f"{hf_model_id}: config.json lacks {', '.join(missing)}; "
            "point at the model's own config.json (a language model or a VLM with text_config)."
        )
    try:
        arch, mixers = _map_text_config(config, text, multimodal, hf_model_id, source)
    except (TypeError, ValueError, KeyError, ValidationError) as exc:
        raise UserError(f"{hf_model_id}: config.json has a missing or wrongly typed value ({exc}).") from exc
    uncounted = [key for key in _UNCOUNTED_KEYS if text.get(key)]
    if arch.vocab_size is None or uncounted or (arch.is_hybrid and mixers is None):
        return arch  # a count would be silently wrong: embeddings, latent experts or layer order unknown
    total, active = count_parameters(arch, mixers)
    return arch.model_copy(update={"total_params": float(total), "active_params": float(active)})


def _moe_layers(text: dict[str, Any]) -> list[int] | None:
    """Step-3.5's moe_layers_enum (a comma-separated string or a list of layer indices), sorted."""
    listed = text.get("moe_layers_enum")
    if listed is None:
        return None
    items = listed.split(",") if isinstance(listed, str) else listed
    return sorted(int(item) for item in items if str(item).strip())


def _second_attention_fields(text: dict[str, Any]) -> dict[str, Any]:
    """ModelArch fields of a second attention shape named per layer by `layer_types` (else none).

    Step-3.5 (attention_other_setting): its sliding layers, MTP entries included, take that setting's heads,
    groups and head size; Bridge gives them TE window (sliding_window, 0), so a query sees sliding_window + 1
    keys (step35_bridge.py provider_bridge). Gemma 4 (global_head_dim): its full-attention layers take
    global_head_dim and num_global_key_value_heads, its sliding ones window (sliding_window - 1, 0), so
    sliding_window keys (modeling_gemma4.py Gemma4SelfAttention, Gemma4TEDotProductAttention).
    """
    types = text.get("layer_types")
    if not isinstance(types, list) or "sliding_attention" not in types or "full_attention" not in types:
        return {}
    window = _int_or_none(text.get("sliding_window"))
    other = text.get("attention_other_setting")
    if isinstance(other, dict):
        return {
            "other_attention_layers": tuple(i for i, kind in enumerate(types) if kind == "sliding_attention"),
            "other_num_attention_heads": int(other.get("num_attention_heads") or text["num_attention_heads"]),
            "other_num_query_groups": int(
                _first(other, "num_attention_groups", "num_key_value_heads")
                or _first(text, "num_key_value_heads", "num_attention_groups")
            ),
            "other_kv_channels": int(other.get("head_dim") or text["head_dim"]),
            "other_attention_window": window + 1 if window else None,
        }
    if text.get("global_head_dim"):
        main = types[: int(text["num_hidden_layers"])]
        full = [i for i, kind in enumerate(main) if kind == "full_attention"]
        return {
            "other_attention_layers": tuple(full),
            "other_num_attention_heads": int(text["num_attention_heads"]),
            "other_num_query_groups": int(_first(text, "num_global_key_value_heads", "num_key_value_heads")),
            "other_kv_channels": int(text["global_head_dim"]),
            "other_k_eq_v": bool(text.get("attention_k_eq_v")),
            "attention_window": window,
        }
    return {}


def _map_text_config(
    config: dict[str, Any], text: dict[str, Any], multimodal: bool, hf_model_id: str, source: str
) -> tuple[ModelArch, MixerDims | None]:
    model_type = str(text.get("model_type") or config.get("model_type") or "unknown")
    hidden, heads = int(text["hidden_size"]), int(text["num_attention_heads"])
    experts = _int_or_none(
        _first(text, "num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
    )
    moe_ffn = _int_or_none(_first(text, "moe_intermediate_size", "expert_intermediate_size"))
    ffn = _int_or_none(_first(text, "intermediate_size", "ffn_hidden_size"))
    if experts and moe_ffn is None:  # gpt-oss / Mixtral: intermediate_size is the expert width
        moe_ffn = ffn
    shared = _int_or_none(
        _first(
            text, "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", "share_expert_dim"
        )
    )
    if experts and shared is None and text.get("enable_moe_block"):  # Gemma 4: a dense MLP beside the experts
        shared = ffn
    if experts and shared is None and text.get("n_shared_experts") and moe_ffn:
        shared = int(text["n_shared_experts"]) * moe_ffn
    first_dense = _int_or_none(text.get("first_k_dense_replace"))
    if experts and first_dense is None and isinstance(text.get("mlp_only_layers"), list):
        only = sorted(text["mlp_only_layers"])
        first_dense = len(only) if only == list(range(len(only))) else None
    moe_layers = _moe_layers(text)
    if experts and first_dense is None and moe_layers:
        contiguous = moe_layers == list(range(moe_layers[0], int(text["num_hidden_layers"])))
        first_dense = moe_layers[0] if contiguous else None
    second = _second_attention_fields(text)
    if second and "attention_other_setting" in text:
        # Step-3.5: Bridge builds its MTP layers dense and expands the per-head g_proj into an output gate
        gate = bool(text.get("use_head_wise_attn_gate"))
        second |= {"mtp_layer_pattern": "D", "attention_output_gate": gate}
    kv_lora = _int_or_none(text.get("kv_lora_rank"))
    act = str(text.get("hidden_act") or text.get("mlp_hidden_act") or "silu")
    tied_default = model_type in _TIED_BY_DEFAULT
    mixers = mixer_dims_from_config(text)
    mamba_hybrid = model_type in _HYBRID_MODEL_TYPES or bool(mixers and mixers.pattern)
    arch = ModelArch(
        hf_model_id=hf_model_id,
        family=model_type,
        num_layers=int(text["num_hidden_layers"]),
        hidden_size=hidden,
        ffn_hidden_size=ffn,
        num_attention_heads=heads,
        num_query_groups=int(_first(text, "num_key_value_heads", "num_attention_groups") or heads),
        kv_channels=int(_first(text, "head_dim", "attention_head_dim") or hidden // heads),
        vocab_size=_int_or_none(text.get("vocab_size")),
        max_position_embeddings=_int_or_none(text.get("max_position_embeddings")),
        tied_embeddings=bool(
            text.get("tie_word_embeddings", config.get("tie_word_embeddings", tied_default))
        ),
        gated_linear_unit=act not in _NON_GATED_ACTS and model_type not in _NON_GATED_MODEL_TYPES,
        num_moe_experts=experts,
        moe_router_topk=_int_or_none(
            _first(text, "num_experts_per_tok", "experts_per_token", "moe_topk", "moe_top_k", "top_k_experts")
        )
        if experts
        else None,
        moe_ffn_hidden_size=moe_ffn if experts else None,
        moe_shared_expert_intermediate_size=shared if experts else None,
        # In Mamba hybrids the layer pattern, not first-k/frequency, places the MoE layers.
        moe_first_k_dense=(first_dense or 0) if experts and not mamba_hybrid else None,
        moe_layer_freq=int(_first(text, "moe_layer_freq", "decoder_sparse_step") or 1)
        if experts and not mamba_hybrid
        else None,
        multi_latent_attention=kv_lora is not None,
        q_lora_rank=_int_or_none(text.get("q_lora_rank")) if kv_lora else None,
        kv_lora_rank=kv_lora,
        qk_head_dim=_int_or_none(text.get("qk_nope_head_dim")) if kv_lora else None,
        qk_pos_emb_head_dim=_int_or_none(text.get("qk_rope_head_dim")) if kv_lora else None,
        v_head_dim=_int_or_none(text.get("v_head_dim")) if kv_lora else None,
        is_vlm=multimodal,
        is_hybrid=mixers is not None or mamba_hybrid,
        hybrid_layer_pattern=mixers.pattern if mixers else None,
        **(_mamba_fields(mixers) if mixers and mixers.pattern and mixers.mamba_num_heads else {}),
        **(_linear_fields(text, mixers) if mixers and mixers.linear_layers else {}),
        mtp_num_layers=_int_or_none(text.get("num_nextn_predict_layers")),
        **second,
        vision=vision_from_hf_config(config),
        source=source,
    )
    return arch, mixers


def _linear_fields(text: dict[str, Any], mixers: MixerDims) -> dict[str, Any]:
    """Gated DeltaNet dimensions; the full-attention interval only when the layout is periodic."""
    every = _int_or_none(text.get("full_attention_interval"))
    layer_types = text.get("layer_types")
    if every is None and isinstance(layer_types, list) and "full_attention" in layer_types:
        first = layer_types.index("full_attention") + 1
        periodic = all((t == "full_attention") == ((i + 1) % first == 0) for i, t in enumerate(layer_types))
        every = first if periodic else None
    return {
        "linear_attention_freq": every,
        "linear_num_key_heads": mixers.linear_num_key_heads,
        "linear_key_head_dim": mixers.linear_key_head_dim,
        "linear_num_value_heads": mixers.linear_num_value_heads,
        "linear_value_head_dim": mixers.linear_value_head_dim,
        "linear_conv_kernel_dim": mixers.conv_kernel,
        "attention_output_gate": mixers.attn_output_gate,
    }


def _mamba_fields(mixers: MixerDims) -> dict[str, int]:
    return {
        "mamba_num_heads": mixers.mamba_num_heads,
        "mamba_head_dim": mixers.mamba_head_dim,
        "mamba_state_dim": mixers.mamba_state_dim,
        "mamba_num_groups": mixers.mamba_num_groups,
    }


# ------------------------------------------------------------------ parameter counting


def _attention_params(arch: ModelArch, output_gate: bool = False) -> int:
    """Weights of one self-attention block (GQA or MLA, with MLA low-rank norms); no biases or QK-norms."""
    h, heads = arch.hidden_size, arch.num_attention_heads
    if arch.multi_latent_attention:
        qk, rope, v = arch.qk_head_dim or 0, arch.qk_pos_emb_head_dim or 0, arch.v_head_dim or 0
        kv_lora = arch.kv_lora_rank or 0
        if arch.q_lora_rank:
            q = h * arch.q_lora_rank + arch.q_lora_rank + arch.q_lora_rank * heads * (qk + rope)
        else:
            q = h * heads * (qk + rope)
        kv = h * (kv_lora + rope) + kv_lora + kv_lora * heads * (qk + v)
        return q + kv + heads * v * h
    d = arch.kv_channels or h // heads
    groups = arch.num_query_groups or heads
    q_out = heads * d * (2 if output_gate else 1)
    return h * q_out + 2 * h * groups * d + heads * d * h


def _mlp_params(hidden: int, ffn: int, gated: bool) -> int:
    return (3 if gated else 2) * hidden * ffn


def _moe_params(arch: ModelArch) -> tuple[int, int]:
    """(all, active-per-token) weights of one MoE block: router, routed experts, shared expert."""
    h, experts = arch.hidden_size, arch.num_moe_experts or 0
    expert = _mlp_params(h, arch.moe_ffn_hidden_size or 0, arch.gated_linear_unit)
    shared = _mlp_params(h, arch.moe_shared_expert_intermediate_size or 0, arch.gated_linear_unit)
    router = h * experts
    return router + experts * expert + shared, router + (arch.moe_router_topk or 0) * expert + shared


def is_moe_layer(arch: ModelArch, index: int) -> bool:
    """Megatron convention: the first `moe_first_k_dense` layers are dense, then every `moe_layer_freq`-th."""
    if not arch.num_moe_experts:
        return False
    first, freq = arch.moe_first_k_dense or 0, arch.moe_layer_freq or 1
    return index >= first and (index - first) % freq == 0


def _mamba_params(arch: ModelArch, m: MixerDims) -> int:
    return mamba_mixer_params(
        arch.hidden_size, m.mamba_num_heads, m.mamba_head_dim, m.mamba_state_dim, m.mamba_num_groups,
        m.conv_kernel,
    )  # fmt: skip


def _linear_attention_params(arch: ModelArch, m: MixerDims) -> int:
    """Gated-DeltaNet mixer: in_proj qkvz and ba, depthwise conv, A_log/dt_bias, head norm, out_proj."""
    key_dim = m.linear_num_key_heads * m.linear_key_head_dim
    value_dim = m.linear_num_value_heads * m.linear_value_head_dim
    h = arch.hidden_size
    in_proj = h * (2 * key_dim + 2 * value_dim) + h * 2 * m.linear_num_value_heads
    conv = (2 * key_dim + value_dim) * m.conv_kernel
    return in_proj + conv + 2 * m.linear_num_value_heads + m.linear_value_head_dim + value_dim * h


def count_parameters(arch: ModelArch, mixers: MixerDims | None = None) -> tuple[int, int]:
    """(total, active-per-token) parameters of the language model, from the architecture alone.

    Counted: input embedding, untied output layer, final norm, and per layer its norms, the attention
    (GQA or MLA, with low-rank norms), and a gated/plain MLP or an MoE block (router + all experts +
    shared expert; active = router + top-k experts + shared). Hybrid layers use `mixers`.
    Not counted: biases, attention sinks, MTP heads, vision/audio towers (VLM counts are the LLM only).
    A diffusion transformer counts every weight and bias of its DiT (assistant.estimate.dit).
    """
    if arch.diffusion is not None:
        return dit_total_params(arch), dit_total_params(arch)
    if arch.csa_compress_ratios or arch.other_attention_layers:
        # DeepSeek-V4 (compressors, indexers, hyper-connections) and models with two attention shapes are
        # counted by the estimators' shapes (every weight, with norms); active = all but the unrouted experts.
        d = dims_of(arch)
        total = int(total_params(d))
        return total, total - d.moe_layers * (d.experts - d.topk) * d.glu * d.hidden * d.moe_ffn
    h = arch.hidden_size
    embed = (arch.vocab_size or 0) * h
    total = active = embed * (1 if arch.tied_embeddings else 2) + h
    dense_mlp = _mlp_params(h, arch.ffn_hidden_size or 0, arch.gated_linear_unit)
    moe_all, moe_active = _moe_params(arch) if arch.num_moe_experts else (0, 0)
    if mixers and mixers.pattern:
        for symbol in mixers.pattern:
            layer_all = layer_active = h  # pre-norm of this layer
            if symbol == "M":
                layer_all = layer_active = layer_all + _mamba_params(arch, mixers)
            elif symbol == "*":
                layer_all = layer_active = layer_all + _attention_params(arch)
            elif symbol == "-":
                layer_all = layer_active = layer_all + dense_mlp
            elif symbol == "E":
                layer_all, layer_active = layer_all + moe_all, layer_active + moe_active
            total, active = total + layer_all, active + layer_active
        return total, active
    linear_left = mixers.linear_layers if mixers else 0
    full_attention = _attention_params(arch, output_gate=bool(mixers and mixers.attn_output_gate))
    linear_attention = _linear_attention_params(arch, mixers) if mixers and mixers.linear_layers else 0
    n_full = arch.num_layers - linear_left
    mixer_total = n_full * full_attention + linear_left * linear_attention
    total, active = (
        total + mixer_total + 2 * h * arch.num_layers,
        active + mixer_total + 2 * h * arch.num_layers,
    )
    for index in range(arch.num_layers):
        if is_moe_layer(arch, index):
            total, active = total + moe_all, active + moe_active
        else:
            total, active = total + dense_mlp, active + dense_mlp
    return total, active


# ------------------------------------------------------------------ local config files


def model_file_name(hf_model_id: str) -> str:
    """knowledge_base/models file name of an HF id: `org/name` -> `org__name.json`."""
    return hf_model_id.strip().replace("/", "__") + ".json"


def resolve_config_path(path: str | Path) -> Path:
    """Find config.json for a file, a model directory, or an HF cache `models--org--name` directory."""
    p = Path(path).expanduser()
    if not p.exists():
        raise UserError(f"{p} does not exist; pass a config.json, a model directory or an HF cache snapshot.")
    if p.is_file():
        return p
    if (p / "config.json").is_file():
        return p / "config.json"
    snapshots = p / "snapshots" if (p / "snapshots").is_dir() else p if p.name == "snapshots" else None
    if snapshots is not None:
        ref = snapshots.parent / "refs" / "main"
        if ref.is_file() and (snapshots / ref.read_text().strip() / "config.json").is_file():
            return snapshots / ref.read_text().strip() / "config.json"
        found = sorted(snapshots.glob("*/config.json"), key=lambda f: f.stat().st_mtime, reverse=True)
        if found:
            return found[0]
    raise UserError(
        f"No config.json under {p}; expected <dir>/config.json or <cache>/snapshots/<hash>/config.json."
    )


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"Cannot read {path}: {exc}.") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON (line {exc.lineno}): fix or re-download it.") from exc
    if not isinstance(data, dict):
        raise UserError(f"{path} must hold a JSON object (an HF config.json).")
    return data


def _model_id_for(config_path: Path, config: dict[str, Any]) -> str:
    """HF id from an HF cache path (models--org--name), else `_name_or_path`, else the directory name."""
    for part in reversed(config_path.parts):
        if part.startswith("models--"):
            return part.removeprefix("models--").replace("--", "/", 1)
    name = config.get("_name_or_path")
    if isinstance(name, str) and name.count("/") == 1 and not name.startswith(("/", ".")):
        return name
    return f"local/{config_path.parent.name}"


def load_local_config(path: str | Path, hf_model_id: str | None = None) -> ModelArch:
    """ModelArch of a model we do not ship, from its config.json or HF cache snapshot."""
    config_path = resolve_config_path(path)
    config = read_config_file(config_path)
    model_id = hf_model_id or _model_id_for(config_path, config)
    return arch_from_hf_config(config, model_id, f"local config.json: {config_path}")


# ------------------------------------------------------------------ bundled catalog


def models_dir(kb: KnowledgeBase) -> Path:
    return kb.models_dir


def all_model_archs(kb: KnowledgeBase) -> list[ModelArch]:
    """Every bundled architecture, sorted by HF id."""
    return sorted(kb.model_archs.values(), key=lambda a: a.hf_model_id.lower())


def architecture_gap(record: RecipeRecord, kb: KnowledgeBase) -> str | None:
    """Why a recipe's model has no architecture record (knowledge_base/architecture_gaps.json), or None."""
    gaps = kb.architecture_gaps
    if record.name in gaps["recipes"]:
        return gaps["recipes"][record.name]
    if record.hf_model_id and record.hf_model_id.lower() in gaps["models"]:
        return gaps["models"][record.hf_model_id.lower()]
    return gaps["providers"].get(str(record.fields.get("model._target_") or ""))


def load_model_arch(hf_model_id: str, kb: KnowledgeBase) -> ModelArch | None:
    """Bundled architecture of an HF id (case-insensitive), or None when we do not ship it."""
    return kb.model_archs.get(hf_model_id.strip().lower())


# ---------------------------------------------------------------- Megatron TransformerConfig fields

# TransformerConfig names that map one-to-one onto ModelArch fields.
TRANSFORMER_ARCH_FIELDS = (
    "num_layers",
    "hidden_size",
    "ffn_hidden_size",
    "num_attention_heads",
    "num_query_groups",
    "kv_channels",
    "vocab_size",
    "num_moe_experts",
    "moe_router_topk",
    "moe_ffn_hidden_size",
    "moe_shared_expert_intermediate_size",
    "gated_linear_unit",
    "multi_latent_attention",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_head_dim",
    "qk_pos_emb_head_dim",
    "v_head_dim",
    "mamba_num_heads",
    "mamba_head_dim",
    "mamba_state_dim",
    "mamba_num_groups",
    "moe_latent_size",
    "vision",  # a VisionTowerDims object (HF vision_config names)
)
# Providers whose model is not a decoder-only transformer the estimators describe (diffusion, encoders).
NOT_DECODER_PROVIDERS = ("Wan", "Flux", "DiT", "T5", "Bert")


def moe_layer_split(value: Any, layers: int) -> tuple[int | None, int | None]:
    """(first dense layers, frequency) from moe_layer_freq: an int, or a 0/1 list like [0]*3+[1]*58."""
    if value is None or isinstance(value, int):
        return None, value
    if isinstance(value, list) and all(v in (0, 1) for v in value) and len(value) == layers:
        first = value.index(1) if 1 in value else layers
        if all(value[first:]):
            return first, 1
    raise UserError("moe_layer_freq must be an int or a 0/1 list of dense layers followed by MoE layers")


def arch_from_transformer_config(
    model: dict[str, Any], *, hf_model_id: str, family: str, source: str
) -> ModelArch:
    """A ModelArch from Megatron TransformerConfig field names (a spec file, or a recipe's own provider)."""
    fields = {k: model[k] for k in TRANSFORMER_ARCH_FIELDS if model.get(k) is not None}
    first_dense, freq = moe_layer_split(model.get("moe_layer_freq"), int(model["num_layers"]))
    untie = model.get("untie_embeddings_and_output_weights")
    tied = (not untie) if untie is not None else bool(model.get("share_embeddings_and_output_weights", True))
    hybrid = model.get("hybrid_layer_pattern") or model.get("hybrid_override_pattern")
    try:
        return ModelArch(
            hf_model_id=hf_model_id,
            family=family,
            source=source,
            tied_embeddings=tied,
            moe_first_k_dense=first_dense,
            moe_layer_freq=freq,
            is_hybrid=bool(hybrid or model.get("is_hybrid_model")),
            hybrid_layer_pattern=hybrid if isinstance(hybrid, str) else None,
            **fields,
        )
    except ValueError as error:
        raise UserError(f"model fields are not valid: {error}") from error


def arch_from_recipe_fields(record: RecipeRecord) -> ModelArch | None:
    """The architecture a recipe defines inline (gemma3_1b_pretrain_config builds its provider from
    numbers, with no Hugging Face id), from the extracted `model.*` writes; None when they are incomplete."""
    model = {k.removeprefix("model."): v for k, v in record.fields.items() if k.startswith("model.")}
    vocab_note = ""
    tokenizer_vocab = record.fields.get("tokenizer.vocab_size")
    null_tokenizer = record.fields.get("tokenizer.tokenizer_type") == "NullTokenizer"
    if model.get("vocab_size") is None and null_tokenizer and isinstance(tokenizer_vocab, int):
        # Bridge sizes an unset model vocabulary from the tokenizer (training/setup.py,
        # _validate_and_set_vocab_size); Megatron-Core's NullTokenizer has exactly `vocab_size` ids.
        model["vocab_size"] = tokenizer_vocab
        vocab_note = f"; vocabulary {tokenizer_vocab} from the recipe's NullTokenizer"
    target = str(model.get("_target_") or "")
    required = ("num_layers", "hidden_size", "num_attention_heads", "vocab_size")
    if any(p in target for p in NOT_DECODER_PROVIDERS) or not all(
        isinstance(model.get(k), int) for k in required
    ):
        return None
    try:
        return arch_from_transformer_config(
            model,
            hf_model_id=record.canonical,
            family=record.family or "recipe",
            source=f"{record.source.path}:{record.source.line} (the recipe's own model provider, "
            f"Megatron-Bridge {record.version}){vocab_note}",
        )
    except UserError:
        return None


# Inline provider fields that identify a model; a bundled architecture equal on all of them is that model.
IDENTIFYING_FIELDS = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "num_query_groups",
    "ffn_hidden_size",
    "num_moe_experts",
    "moe_ffn_hidden_size",
    "hybrid_layer_pattern",
)


def bundled_twin(record: RecipeRecord, archs: Iterable[ModelArch]) -> ModelArch | None:
    """The one bundled architecture with every dimension the recipe's inline provider writes. Some recipes
    (nemotron_3_nano_pretrain_8gpu_h100_bf16_config) spell out a released model's shape but leave the
    vocabulary to the tokenizer, so their own fields cannot describe the model; the released one can."""
    model = {k.removeprefix("model."): v for k, v in record.fields.items() if k.startswith("model.")}
    given = {k: model[k] for k in IDENTIFYING_FIELDS if model.get(k) is not None}
    if not {"num_layers", "hidden_size", "num_attention_heads"} <= given.keys():
        return None
    # A diffusion provider (WanModelProvider) is the twin of a diffusion record only, with its context width.
    diffusion = "Wan" in str(model.get("_target_") or "")
    cross = model.get("crossattn_emb_size")
    twins = [
        a for a in archs
        if all(getattr(a, k) == v for k, v in given.items())
        and (a.diffusion is not None) == diffusion
        and (not diffusion or cross is None or a.diffusion.cross_attention_size == cross)
    ]  # fmt: skip
    twins = [a for a in twins if a.vocab_size is not None] or twins  # a complete record over a partial one
    twins = [a for a in twins if not a.is_vlm] or twins  # an inline provider builds no tower: the text model
    if len({(a.vocab_size, a.hybrid_layer_pattern, a.num_moe_experts) for a in twins}) != 1:
        return None
    twin = twins[0]
    note = (
        f"{twin.source}; matched by {', '.join(sorted(given))} to the model {record.name} defines inline "
        f"({record.source.path}:{record.source.line}, Megatron-Bridge {record.version})"
    )
    return twin.model_copy(update={"source": note})


def recipe_arch(record: RecipeRecord, kb: KnowledgeBase) -> ModelArch | None:
    """The bundled architecture of the recipe's Hugging Face model, else the one it defines inline, else the
    bundled model whose dimensions the inline definition repeats."""
    found = load_model_arch(record.hf_model_id, kb) if record.hf_model_id else None
    return found or arch_from_recipe_fields(record) or bundled_twin(record, all_model_archs(kb))
