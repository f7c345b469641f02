"""Model architecture catalog: bundled records, HF-config mapping, parameter counts, local loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.kb import knowledge_base
from assistant.models import (
    all_model_archs,
    arch_from_hf_config,
    count_parameters,
    load_local_config,
    load_model_arch,
    model_file_name,
    models_dir,
)
from assistant.records import ModelArch
from ingest.models import check_dir, main, write_model_arch

BUNDLED = sorted(models_dir(kb=knowledge_base()).glob("*.json"))

# Published totals / active counts (billions) and where they are published. Active counts follow the
# publisher's convention, so only those that include the embedding are listed.
PUBLISHED: dict[str, tuple[float, float | None, str]] = {
    "meta-llama/Meta-Llama-3-8B": (8.03, None, "HF model card / safetensors total, 8.03B"),
    "meta-llama/Meta-Llama-3.1-405B": (405.0, None, "Meta Llama 3.1 model card: 405B"),
    "meta-llama/Llama-2-7b-hf": (6.74, None, "HF safetensors total 6.74B"),
    "meta-llama/Llama-3.2-1B": (1.24, None, "Meta model card: 1.23B / HF safetensors 1.24B"),
    "Qwen/Qwen2.5-7B": (7.61, None, "Qwen2.5-7B model card: 7.61B"),
    "Qwen/Qwen2.5-72B": (72.7, None, "Qwen2.5-72B model card: 72.7B"),
    "Qwen/Qwen3-8B": (8.2, None, "Qwen3-8B model card: 8.2B"),
    "Qwen/Qwen3-32B": (32.8, None, "Qwen3-32B model card: 32.8B"),
    "Qwen/Qwen3-30B-A3B": (30.5, 3.3, "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"),
    "Qwen/Qwen3-235B-A22B": (235.0, 22.0, "Qwen3-235B-A22B model card: 235B total, 22B activated"),
    "Qwen/Qwen3-Omni-30B-A3B-Instruct": (30.5, 3.3, "Qwen3-Omni thinker: 30.5B total, 3.3B activated"),
    "deepseek-ai/DeepSeek-V3": (671.0, 37.0, "DeepSeek-V3 card: 671B total, 37B activated, MTP excluded"),
    "deepseek-ai/DeepSeek-V4-Pro": (1600.0, 49.0, "DeepSeek-V4-Pro card: 1.6T total, 49B activated"),
    "deepseek-ai/DeepSeek-V2": (236.0, 21.0, "DeepSeek-V2 card: 236B total, 21B activated"),
    "google/gemma-2-9b": (9.24, None, "HF safetensors total 9.24B"),
    "google/gemma-2-27b": (27.2, None, "HF safetensors total 27.2B"),
    "openai/gpt-oss-120b": (116.83, None, "gpt-oss model card: 116.83B total"),
    "openai/gpt-oss-20b": (20.91, None, "gpt-oss model card: 20.91B total"),
    "zai-org/GLM-4.5": (355.0, None, "GLM-4.5 card: 355B total (MTP layer included there, not here)"),
    "zai-org/GLM-4.5-Air": (106.0, None, "GLM-4.5-Air card: 106B total"),
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (31.6, 3.6, "card: 31.6B total, 3.6B active w/ embeddings"),
    "nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16": (31.6, 3.6, "LM: Nemotron 3 Nano 30B, 31.6B/3.6B"),
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2-Base": (12.31, None, "HF safetensors total 12.3B"),
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16": (12.31, None, "card: LM is Nemotron-Nano-12B-v2, 12.31B"),
    "moonshotai/Kimi-K2-Instruct": (1000.0, 32.0, "Kimi K2 card: 1T total, 32B activated"),
    "moonshotai/Kimi-K2.5": (
        1040.0,
        32.86,
        "NVIDIA blog: 32.86B active; glennklockwood K2.5 page: 1.04T",
    ),
    "allenai/OLMoE-1B-7B-0924": (6.9, 1.3, "OLMoE paper/card: 6.9B total, 1.3B active"),
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (80.0, None, "Qwen3-Next card: 80B total"),
    "MiniMaxAI/MiniMax-M3": (428.0, None, "Megatron-Bridge docs minimax-m3.md: 428B total"),
    "LGAI-EXAONE/K-EXAONE-236B-A23B": (236.0, 23.0, "K-EXAONE card: 236B total, 23B activated"),
    "LGAI-EXAONE/K-EXAONE-2.0-750B-A37B": (750.0, 37.0, "K-EXAONE 2.0 card: 750B total, 37B active"),
    "mistralai/Ministral-3-3B-Instruct-2512": (3.4, None, "Ministral 3 3B card: 3.4B language model"),
    "mistralai/Ministral-3-8B-Instruct-2512": (8.4, None, "Ministral 3 8B card: 8.4B language model"),
    "mistralai/Ministral-3-14B-Instruct-2512": (13.5, None, "Ministral 3 14B card: 13.5B language model"),
}

# Real-shaped HF configs (public config.json files, trimmed to the keys the mapping reads).
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "vocab_size": 128256,
}
QWEN3_30B_A3B = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "decoder_sparse_step": 1,
    "head_dim": 128,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "mlp_only_layers": [],
    "moe_intermediate_size": 768,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "first_k_dense_replace": 3,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_attention_heads": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "tie_word_embeddings": False,
    "v_head_dim": 128,
    "vocab_size": 129280,
}
GEMMA3_4B_IT = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_attention_heads": 8,
        "num_hidden_layers": 34,
        "num_key_value_heads": 4,
        "sliding_window": 1024,
    },
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "num_hidden_layers": 27},
}


def _billions(value: float | None) -> float:
    assert value is not None
    return value / 1e9


# ------------------------------------------------------------------ bundled records


def test_catalog_is_not_empty_and_covers_common_families():
    ids = {arch.hf_model_id for arch in all_model_archs(kb=knowledge_base())}
    for expected in (
        "meta-llama/Meta-Llama-3-8B",
        "Qwen/Qwen3-30B-A3B",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "deepseek-ai/DeepSeek-V3",
        "zai-org/GLM-4.5-Air",
        "google/gemma-3-27b-it",
        "openai/gpt-oss-120b",
        "moonshotai/Kimi-K2-Instruct",
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        "Qwen/Qwen2.5-VL-7B-Instruct",
    ):
        assert expected in ids


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_file_is_a_consistent_model_arch(path: Path):
    arch = ModelArch.model_validate_json(path.read_text(encoding="utf-8"))
    assert path.name == model_file_name(arch.hf_model_id)
    assert arch.source.strip()
    assert arch.num_layers > 0 and arch.hidden_size > 0
    if arch.num_query_groups:
        assert arch.num_attention_heads % arch.num_query_groups == 0
    if arch.num_moe_experts:
        assert arch.moe_router_topk and arch.moe_router_topk <= arch.num_moe_experts
        assert arch.moe_ffn_hidden_size
    if arch.csa_compress_ratios:  # DeepSeek-V4: one KV head of v_head_dim, a grouped low-rank output
        assert arch.q_lora_rank and arch.v_head_dim and arch.o_groups and arch.o_lora_rank
        assert len(arch.csa_compress_ratios) == arch.num_layers + (arch.mtp_num_layers or 0)
    elif arch.multi_latent_attention:
        assert arch.kv_lora_rank and arch.qk_head_dim and arch.qk_pos_emb_head_dim and arch.v_head_dim
    if arch.hybrid_layer_pattern:
        assert len(arch.hybrid_layer_pattern) == arch.num_layers
    if (
        arch.total_params is None
    ):  # only where a count would be wrong: no vocab, or hybrid layer order unknown
        assert arch.active_params is None and "null" in arch.source
        assert arch.vocab_size is None or (arch.is_hybrid and arch.hybrid_layer_pattern is None)
        return
    assert arch.total_params and arch.active_params and arch.active_params <= arch.total_params
    if not arch.is_hybrid:
        assert count_parameters(arch) == (arch.total_params, arch.active_params)


# Families whose attention width is exactly heads x head_dim.
@pytest.mark.parametrize("family", ["llama", "qwen2", "qwen2_5_vl"])
def test_hidden_equals_heads_times_head_dim(family: str):
    archs = [a for a in all_model_archs(kb=knowledge_base()) if a.family == family]
    assert archs
    for arch in archs:
        assert arch.hidden_size == arch.num_attention_heads * arch.kv_channels, arch.hf_model_id


def test_check_command_finds_no_problem_in_bundled_files():
    assert check_dir(models_dir(kb=knowledge_base())) == []


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_parameter_count_within_3_percent_of_published(model_id: str):
    total, active, _source = PUBLISHED[model_id]
    arch = load_model_arch(model_id, kb=knowledge_base())
    assert arch is not None
    assert _billions(arch.total_params) == pytest.approx(total, rel=0.03)
    if active is not None:
        assert _billions(arch.active_params) == pytest.approx(active, rel=0.03)


def test_published_checks_cover_at_least_ten_models():
    assert len(PUBLISHED) >= 10


def test_load_model_arch_is_case_insensitive_and_none_when_unknown():
    arch = load_model_arch("QWEN/qwen3-30b-a3b", kb=knowledge_base())
    assert arch is not None and arch.hf_model_id == "Qwen/Qwen3-30B-A3B"
    assert load_model_arch("nobody/no-such-model", kb=knowledge_base()) is None


def test_moe_and_mla_fields_of_bundled_records():
    qwen = load_model_arch("Qwen/Qwen3-30B-A3B", kb=knowledge_base())
    assert qwen and (qwen.ffn_hidden_size, qwen.moe_ffn_hidden_size, qwen.moe_first_k_dense) == (6144, 768, 0)
    glm = load_model_arch("zai-org/GLM-4.5", kb=knowledge_base())
    assert glm and (glm.moe_first_k_dense, glm.moe_shared_expert_intermediate_size) == (3, 1536)
    v2 = load_model_arch("deepseek-ai/DeepSeek-V2", kb=knowledge_base())
    assert v2 and v2.moe_shared_expert_intermediate_size == 2 * 1536 and v2.q_lora_rank == 1536
    lite = load_model_arch("deepseek-ai/DeepSeek-V2-Lite", kb=knowledge_base())
    assert lite and lite.multi_latent_attention and lite.q_lora_rank is None
    nano = load_model_arch("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", kb=knowledge_base())
    assert nano and nano.is_hybrid and not nano.gated_linear_unit
    assert nano.hybrid_layer_pattern and nano.hybrid_layer_pattern.count("E") == 23


# ------------------------------------------------------------------ mapping real-shaped configs


def test_dense_config_maps_to_megatron_names():
    arch = arch_from_hf_config(LLAMA3_8B, "meta-llama/Meta-Llama-3-8B", "test")
    assert (arch.num_layers, arch.hidden_size, arch.ffn_hidden_size) == (32, 4096, 14336)
    assert (arch.num_attention_heads, arch.num_query_groups, arch.kv_channels) == (32, 8, 128)
    assert (arch.vocab_size, arch.max_position_embeddings, arch.tied_embeddings) == (128256, 8192, False)
    assert arch.num_moe_experts is None and not arch.is_vlm and not arch.multi_latent_attention
    assert _billions(arch.total_params) == pytest.approx(8.03, rel=0.005)


def test_moe_config_keeps_dense_and_expert_widths_apart():
    arch = arch_from_hf_config(QWEN3_30B_A3B, "Qwen/Qwen3-30B-A3B", "test")
    assert (arch.num_moe_experts, arch.moe_router_topk, arch.moe_ffn_hidden_size) == (128, 8, 768)
    assert arch.ffn_hidden_size == 6144 and arch.moe_shared_expert_intermediate_size is None
    assert (arch.moe_first_k_dense, arch.moe_layer_freq) == (0, 1)
    assert _billions(arch.total_params) == pytest.approx(30.5, rel=0.01)
    assert _billions(arch.active_params) == pytest.approx(3.3, rel=0.03)


def test_mla_config_maps_lora_ranks_and_shared_experts():
    arch = arch_from_hf_config(DEEPSEEK_V3, "deepseek-ai/DeepSeek-V3", "test")
    assert arch.multi_latent_attention
    assert (arch.q_lora_rank, arch.kv_lora_rank) == (1536, 512)
    assert (arch.qk_head_dim, arch.qk_pos_emb_head_dim, arch.v_head_dim) == (128, 64, 128)
    assert (arch.moe_first_k_dense, arch.moe_shared_expert_intermediate_size) == (3, 2048)
    assert _billions(arch.total_params) == pytest.approx(671, rel=0.01)
    assert _billions(arch.active_params) == pytest.approx(37, rel=0.03)


def test_vlm_config_reads_text_config_and_gemma_tied_default():
    arch = arch_from_hf_config(GEMMA3_4B_IT, "google/gemma-3-4b-it", "test")
    assert arch.is_vlm and arch.family == "gemma3_text"
    assert (arch.num_layers, arch.hidden_size, arch.kv_channels, arch.num_query_groups) == (34, 2560, 256, 4)
    assert arch.tied_embeddings  # Gemma3 config classes tie embeddings when config.json omits the key
    assert arch.vocab_size is None and arch.max_position_embeddings is None  # absent -> null, not guessed


def test_config_without_vocab_gets_no_parameter_counts():
    config = {key: value for key, value in LLAMA3_8B.items() if key != "vocab_size"}
    arch = arch_from_hf_config(config, "x/y", "test")
    assert arch.vocab_size is None and arch.total_params is None and arch.active_params is None


def test_hybrid_configs_count_mamba_and_linear_attention_layers():
    nemotron_h_8b = {
        "model_type": "nemotron_h",
        "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
        "num_hidden_layers": 52,
        "hidden_size": 4096,
        "intermediate_size": 21504,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "mamba_num_heads": 128,
        "mamba_head_dim": 64,
        "ssm_state_size": 128,
        "n_groups": 8,
        "conv_kernel": 4,
        "mlp_hidden_act": "relu2",
        "vocab_size": 131072,
        "tie_word_embeddings": False,
    }
    arch = arch_from_hf_config(nemotron_h_8b, "nvidia/Nemotron-H-8B-Base-8K", "test")
    assert arch.is_hybrid and not arch.gated_linear_unit and arch.hybrid_layer_pattern.count("*") == 4
    assert _billions(arch.total_params) == pytest.approx(8.1, rel=0.03)  # HF card: 8B-class (8.1B)
    next_80b = load_model_arch("Qwen/Qwen3-Next-80B-A3B-Instruct", kb=knowledge_base())
    assert next_80b and next_80b.is_hybrid and next_80b.hybrid_layer_pattern is None


def test_missing_head_dim_falls_back_to_hidden_over_heads():
    config = dict(LLAMA3_8B)
    config["num_key_value_heads"] = None
    arch = arch_from_hf_config(config, "x/y", "test")
    assert arch.kv_channels == 128 and arch.num_query_groups == 32


# ------------------------------------------------------------------ local files and cache snapshots


def test_load_local_config_file_and_model_dir(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA3_8B))
    from_dir = load_local_config(tmp_path, "my/llama")
    from_file = load_local_config(tmp_path / "config.json", "my/llama")
    assert from_dir.hf_model_id == "my/llama"
    assert from_dir.model_dump(exclude={"source"}) == from_file.model_dump(exclude={"source"})
    assert str(tmp_path / "config.json") in from_dir.source


def test_load_hf_cache_snapshot_follows_refs_main(tmp_path: Path):
    repo = tmp_path / "hub" / "models--Qwen--Qwen3-30B-A3B"
    old, new = repo / "snapshots" / "aaa", repo / "snapshots" / "bbb"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    (old / "config.json").write_text(json.dumps(LLAMA3_8B))
    (new / "config.json").write_text(json.dumps(QWEN3_30B_A3B))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("bbb\n")
    arch = load_local_config(repo)
    assert arch.hf_model_id == "Qwen/Qwen3-30B-A3B" and arch.num_moe_experts == 128
    (repo / "refs" / "main").write_text("aaa")
    assert load_local_config(repo).num_moe_experts is None
    assert load_local_config(new).num_moe_experts == 128  # a snapshot directory itself


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"hidden_size": 10}), "num_hidden_layers"),
        (json.dumps({**LLAMA3_8B, "hidden_size": "wide"}), "wrongly typed"),
    ],
)
def test_bad_config_files_raise_user_error(tmp_path: Path, content: str, message: str):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_local_config(path)


def test_missing_paths_raise_user_error(tmp_path: Path):
    with pytest.raises(UserError, match="does not exist"):
        load_local_config(tmp_path / "nope")
    (tmp_path / "models--a--b" / "snapshots").mkdir(parents=True)
    with pytest.raises(UserError, match="No config.json"):
        load_local_config(tmp_path / "models--a--b")


# ------------------------------------------------------------------ writer and CLI


def test_writer_is_atomic_and_round_trips(tmp_path: Path):
    arch = arch_from_hf_config(DEEPSEEK_V3, "deepseek-ai/DeepSeek-V3", "test")
    target = write_model_arch(arch, tmp_path)
    assert target.name == "deepseek-ai__DeepSeek-V3.json"
    assert ModelArch.model_validate_json(target.read_text()) == arch
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temp file left behind


def test_cli_build_add_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    configs, out = tmp_path / "configs", tmp_path / "out"
    configs.mkdir()
    (configs / "Qwen__Qwen3-30B-A3B.json").write_text(json.dumps({**QWEN3_30B_A3B, "_source": "card"}))
    assert main(["build", str(configs), "--out", str(out)]) == 0
    record = json.loads((out / "Qwen__Qwen3-30B-A3B.json").read_text())
    assert record["hf_model_id"] == "Qwen/Qwen3-30B-A3B" and record["source"] == "card"
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(LLAMA3_8B))
    assert main(["add", str(tmp_path / "m"), "--id", "me/llama", "--out", str(out)]) == 0
    assert main(["check", "--dir", str(out)]) == 0
    (out / "broken.json").write_text("{}")
    assert main(["check", "--dir", str(out)]) == 1
    assert main(["add", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_recipe_that_defines_its_model_inline_has_an_architecture() -> None:
    """gemma3_1b_pretrain_config builds Gemma3ModelProvider from numbers and names no HF model."""
    from assistant.catalog import load_catalog
    from assistant.models import arch_from_recipe_fields, load_model_arch, recipe_arch

    recipes = {r.name: r for r in load_catalog("0.6.0").recipes}
    gemma = recipes["gemma3_1b_pretrain_config"]
    assert gemma.hf_model_id is None
    arch = recipe_arch(gemma, knowledge_base())
    assert (arch.num_layers, arch.hidden_size, arch.num_attention_heads, arch.num_query_groups) == (
        26,
        1152,
        4,
        1,
    )
    assert arch.vocab_size == 262_144 and arch.tied_embeddings and "gemma3.py" in arch.source
    olmoe = arch_from_recipe_fields(recipes["olmoe_7b_pretrain_config"])
    assert (olmoe.num_moe_experts, olmoe.moe_router_topk, olmoe.moe_ffn_hidden_size) == (64, 8, 1024)
    assert arch_from_recipe_fields(recipes["wan_1_3b_pretrain_config"]) is None  # diffusion, not a decoder
    hybrid = arch_from_recipe_fields(recipes["nemotronh_8b_pretrain_config"])
    assert hybrid is None or hybrid.is_hybrid
    # Dimensions written inline without a vocabulary: the bundled model with the same dimensions.
    nano = recipes["nemotron_3_nano_pretrain_8gpu_h100_bf16_config"]
    assert nano.hf_model_id is None and arch_from_recipe_fields(nano) is None
    twin = recipe_arch(nano, knowledge_base())
    assert twin.hf_model_id == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16" and twin.is_hybrid
    assert twin.vocab_size == 131_072 and "matched by" in twin.source and "nemotron_3_nano.py" in twin.source
    # A recipe with a bundled HF architecture keeps it.
    llama = recipes["llama3_8b_pretrain_config"]
    assert recipe_arch(llama, knowledge_base()) == load_model_arch(llama.hf_model_id, kb=knowledge_base())


def test_no_bundled_twin_when_the_inline_dimensions_are_too_few_or_fit_two_models() -> None:
    from assistant.catalog import load_catalog
    from assistant.models import all_model_archs, bundled_twin

    recipes = {r.name: r for r in load_catalog("0.6.0").recipes}
    nano = recipes["nemotron_3_nano_pretrain_8gpu_h100_bf16_config"]
    archs = all_model_archs(kb=knowledge_base())
    assert bundled_twin(nano, archs).hf_model_id == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
    # Only the layer count: many bundled models have 52 layers or none does; never a guess.
    few = nano.model_copy(update={"fields": {"model.num_layers": 52}})
    assert bundled_twin(few, archs) is None
    # Two complete records with these dimensions but different vocabularies: ambiguous.
    real = next(a for a in archs if a.hf_model_id == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    other = real.model_copy(update={"hf_model_id": "example/other-vocab", "vocab_size": 256_000})
    assert bundled_twin(nano, [real, other]) is None
    # A partial record (no vocabulary) gives way to the complete one.
    partial = real.model_copy(update={"hf_model_id": "example/partial", "vocab_size": None})
    assert bundled_twin(nano, [partial, real]).hf_model_id == real.hf_model_id


def test_every_reachable_recipe_has_an_architecture_or_a_documented_gap() -> None:
    """A reachable recipe of 0.6.0 or main either resolves to an architecture (bundled record, inline
    provider, or its bundled twin) or its model is listed in knowledge_base/architecture_gaps.json with the
    reason it is not estimated."""
    from assistant.catalog import load_catalog
    from assistant.models import architecture_gap, recipe_arch

    unexplained = sorted(
        {
            f"{version}:{record.hf_model_id or record.name}"
            for version in ("0.6.0", "main")
            for record in load_catalog(version).recipes
            if record.reachable
            and recipe_arch(record, knowledge_base()) is None
            and not architecture_gap(record, kb=knowledge_base())
        }
    )
    assert not unexplained


def test_an_unset_vocabulary_comes_from_the_null_tokenizer() -> None:
    """gpt3_175b's provider leaves vocab_size unset and its recipe uses a NullTokenizer of 32,000 ids;
    Bridge then sizes the model from the tokenizer (training/setup.py, _validate_and_set_vocab_size)."""
    from assistant.catalog import load_catalog
    from assistant.models import arch_from_recipe_fields

    name = "gpt3_175b_pretrain_32gpu_h100_bf16_config"
    record = next(r for r in load_catalog("main").recipes if r.name == name)
    arch = arch_from_recipe_fields(record)
    assert arch is not None and arch.vocab_size == 32000 and arch.num_layers == 96
    assert "NullTokenizer" in arch.source


def test_qwen3_5_4b_shares_its_embedding_with_the_output_layer() -> None:
    """Qwen3.5-4B ties its embeddings: its Megatron launch script passes no
    --untie-embeddings-and-output-weights (the 9B and 27B scripts do), and public copies of its
    config.json say tie_word_embeddings true. An untied output layer would make the language model
    alone 4.84B, more than the 4.5B listed for the whole checkpoint with its vision tower and MTP
    layer."""
    arch = load_model_arch("Qwen/Qwen3.5-4B", kb=knowledge_base())
    assert arch is not None and arch.tied_embeddings
    untied = arch.model_copy(update={"tied_embeddings": False})
    assert count_parameters(untied)[0] - count_parameters(arch)[0] == arch.vocab_size * arch.hidden_size
    output = arch.vocab_size * arch.hidden_size
    assert _billions(arch.total_params) < 4.5 < _billions(arch.total_params + output)


def test_kimi_k2_5_language_model_is_the_kimi_k2_backbone() -> None:
    """Kimi-K2.5 is continued pretraining on Kimi-K2-Base: its text model has K2's widths (the K2.5 text
    config in Bridge's KimiK25VLBridge test), counted by hand: per MoE layer 384 experts of 3 x 7168 x 2048
    (16.91B) plus one shared expert (44.0M), 60 such layers and one dense one give about 1026B total and
    32.86B active (8 routed + shared per token), against NVIDIA's 32.86B active. MoonViT is not counted."""
    k25 = load_model_arch("moonshotai/Kimi-K2.5", kb=knowledge_base())
    k2 = load_model_arch("moonshotai/Kimi-K2-Instruct", kb=knowledge_base())
    assert k25 is not None and k2 is not None and k25.is_vlm
    widths = (
        "num_layers",
        "hidden_size",
        "ffn_hidden_size",
        "num_moe_experts",
        "moe_ffn_hidden_size",
        "kv_lora_rank",
        "q_lora_rank",
        "vocab_size",
        "moe_first_k_dense",
    )
    assert {w: getattr(k25, w) for w in widths} == {w: getattr(k2, w) for w in widths}
    expert = 3 * 7168 * 2048
    assert 60 * 384 * expert == pytest.approx(1014.7e9, rel=0.001)  # the routed experts alone
    assert count_parameters(k25) == (k25.total_params, k25.active_params)
    assert _billions(k25.active_params) == pytest.approx(32.86, rel=0.01)
    assert _billions(k25.total_params) == pytest.approx(1040.0, rel=0.02)


def test_nemotron_nano_v2_vl_language_model_is_the_12b_v2_backbone() -> None:
    """The VL card names NVIDIA-Nemotron-Nano-12B-v2 as its language model and Bridge's
    NemotronVLModelProvider defaults to the same widths, so the record is the 12B v2 record's:
    12,310,001,152 parameters, the text model's Hugging Face size. The RADIO tower is not counted (the
    record has no vision widths)."""
    vl = load_model_arch("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16", kb=knowledge_base())
    text = load_model_arch("nvidia/NVIDIA-Nemotron-Nano-12B-v2-Base", kb=knowledge_base())
    assert vl is not None and text is not None and vl.is_vlm and vl.vision is None
    same = {"hf_model_id", "is_vlm", "source"}
    assert vl.model_dump(exclude=same) == text.model_dump(exclude=same)
    assert vl.total_params == 12_310_001_152 and "NemotronVLModelProvider" in vl.source


def test_nemotron_3_nano_omni_language_model_is_the_nano_30b_backbone() -> None:
    """The Omni report builds the model on Nemotron 3 Nano 30B-A3B, so the record has the Nano record's
    widths. Bridge's verification card imports 33,015,546,816 parameters for the whole model; the 1.44B
    beyond the language model hold the RADIO tower (32 blocks of width 1280, FFN 5120, biased, two
    LayerNorms: 0.63B by hand), its projector and the Parakeet sound encoder, none of which the record
    counts."""
    omni = load_model_arch("nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16", kb=knowledge_base())
    nano = load_model_arch("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", kb=knowledge_base())
    assert omni is not None and nano is not None and omni.is_vlm and omni.vision is None
    same = {"hf_model_id", "is_vlm", "source"}
    assert omni.model_dump(exclude=same) == nano.model_dump(exclude=same)
    h, f = 1280, 5120
    radio_blocks = 32 * (3 * h * h + 3 * h + h * h + h + 2 * h * f + f + h + 4 * h)
    rest = 33_015_546_816 - omni.total_params - radio_blocks
    assert 0.6e9 < rest < 1.0e9  # the projector and the 0.6B-class Parakeet encoder
    assert "NemotronOmniBridge" in omni.source


def test_qwen3_omni_thinker_is_a_30b_a3b_moe_with_its_own_vocabulary() -> None:
    """Qwen3-Omni's thinker has Qwen3-30B-A3B's widths but a 152,064-wide vocabulary (its lm_head in the
    public module trace), so it counts two 128 x 2048 embedding rows more per matrix. Its output layer is
    untied: tied, the active count would be 3.04B, not the published 3.3B."""
    omni = load_model_arch("Qwen/Qwen3-Omni-30B-A3B-Instruct", kb=knowledge_base())
    text = load_model_arch("Qwen/Qwen3-30B-A3B", kb=knowledge_base())
    assert omni is not None and text is not None and omni.is_vlm and not omni.tied_embeddings
    widths = ("num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "kv_channels",
              "num_moe_experts", "moe_router_topk", "moe_ffn_hidden_size", "moe_layer_freq")  # fmt: skip
    assert {w: getattr(omni, w) for w in widths} == {w: getattr(text, w) for w in widths}
    assert omni.vocab_size == 152_064
    assert omni.total_params - text.total_params == 2 * (152_064 - 151_936) * 2048
    tied = omni.model_copy(update={"tied_embeddings": True})
    assert _billions(count_parameters(tied)[1]) < 3.1 < 3.3 <= _billions(omni.active_params)


def test_k_exaone_236b_counts_its_card_and_checkpoint_sizes() -> None:
    """K-EXAONE-236B-A23B's card gives 236B total and 234B without embeddings; with its dense MTP layer
    the checkpoint holds 237.1B. By hand: 47 MoE layers of 128 experts of 3 x 6144 x 2048 are 227.1B, the
    untied 153,600 x 6,144 embedding and output 1.89B, so tying them would miss the card's 2B gap."""
    arch = load_model_arch("LGAI-EXAONE/K-EXAONE-236B-A23B", kb=knowledge_base())
    assert arch is not None and not arch.tied_embeddings and arch.mtp_num_layers is None
    routed = 47 * 128 * 3 * 6144 * 2048
    assert routed == pytest.approx(227.1e9, rel=0.001)
    embeddings = 2 * arch.vocab_size * arch.hidden_size
    assert _billions(arch.total_params - embeddings) == pytest.approx(234.0, rel=0.005)
    h, q, kv = 6144, 64 * 128, 2 * 8 * 128
    mtp = h * (q + kv) + q * h + 3 * h * 18432 + 2 * h * h  # attention, dense FFN, eh_proj (norms left out)
    assert _billions(arch.total_params + mtp) == pytest.approx(237.1, abs=0.05)


def test_k_exaone_2_counts_the_payload_of_its_verification_card() -> None:
    """Bridge's K-EXAONE 2.0 verification card audits 1,498,715,008,512 bf16 bytes (749.36B parameters).
    The card's widths with untied embeddings count 748.83B; its one dense MTP layer (attention, FFN 18432,
    the 2h->h eh_proj) adds 0.53B. Tied embeddings would be 0.94B short."""
    arch = load_model_arch("LGAI-EXAONE/K-EXAONE-2.0-750B-A37B", kb=knowledge_base())
    assert arch is not None and not arch.tied_embeddings and arch.moe_first_k_dense == 2
    h, q, kv = 6144, 64 * 128, 2 * 8 * 128
    mtp = h * (q + kv) + q * h + 3 * h * 18432 + 2 * h * h
    payload = 1_498_715_008_512 / 2
    assert arch.total_params + mtp == pytest.approx(payload, rel=1e-5)
    assert arch.total_params + mtp - arch.vocab_size * h < payload * (1 - 1e-3)  # tied: too few


def test_nemotron_3_ultra_counts_the_parameters_of_its_verification_card() -> None:
    """The Nemotron 3 Ultra record (ModelOpt launch shapes, the card's 131,072 vocabulary, one "*E" MTP block)
    counts exactly the 560,524,603,904 parameters Megatron-Bridge's verification card reports for the
    checkpoint once the vectors the estimator leaves out are added: the MTP block's two input norms, its
    final norm, and the expert-score correction bias of every MoE layer (48 in the stack, 1 in the block)."""
    from assistant.estimate.memory import estimable
    from assistant.estimate.shapes import dims_of, mix_of, mix_params, total_params

    arch = load_model_arch("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", kb=knowledge_base())
    d = dims_of(arch)
    mtp = mix_params(d, mix_of(d.mtp_block))
    counted = total_params(d) + mtp.tp_sharded + mtp.replicated + mtp.routed + 2 * d.hidden**2
    moe_layers = arch.hybrid_layer_pattern.count("E") + d.mtp_block.count("E")
    assert counted + 3 * d.hidden + moe_layers * d.experts == 560_524_603_904
    assert estimable(arch)  # the memory estimator models every layer kind it has
