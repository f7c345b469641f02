"""Model architectures the estimator tests share, written from public Hugging Face config.json values."""

from assistant.records import ModelArch

# Public Hugging Face config.json values (meta-llama/Meta-Llama-3-8B, -70B, Meta-Llama-3.1-405B).
LLAMA3_8B = ModelArch(
    hf_model_id="meta-llama/Meta-Llama-3-8B", family="llama", num_layers=32, hidden_size=4096,
    ffn_hidden_size=14336, num_attention_heads=32, num_query_groups=8, kv_channels=128, vocab_size=128256,
    source="huggingface.co/meta-llama/Meta-Llama-3-8B config.json",
)  # fmt: skip
LLAMA3_70B = LLAMA3_8B.model_copy(
    update={"hf_model_id": "meta-llama/Meta-Llama-3-70B", "num_layers": 80, "hidden_size": 8192,
            "ffn_hidden_size": 28672, "num_attention_heads": 64}
)  # fmt: skip
LLAMA31_405B = LLAMA3_8B.model_copy(
    update={"hf_model_id": "meta-llama/Meta-Llama-3.1-405B", "num_layers": 126, "hidden_size": 16384,
            "ffn_hidden_size": 53248, "num_attention_heads": 128}
)  # fmt: skip
# deepseek-ai/DeepSeek-V3 config.json (MLA, 256 routed experts top-8, one shared expert, 3 dense layers).
DEEPSEEK_V3 = ModelArch(
    hf_model_id="deepseek-ai/DeepSeek-V3", family="deepseek", num_layers=61, hidden_size=7168,
    ffn_hidden_size=18432, num_attention_heads=128, vocab_size=129280, num_moe_experts=256, moe_router_topk=8,
    moe_ffn_hidden_size=2048, moe_shared_expert_intermediate_size=2048, moe_first_k_dense=3, moe_layer_freq=1,
    multi_latent_attention=True, q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64,
    v_head_dim=128, source="huggingface.co/deepseek-ai/DeepSeek-V3 config.json",
)  # fmt: skip
# Qwen/Qwen3-30B-A3B config.json: 48 MoE layers, 128 experts, top-8.
QWEN3_30B = ModelArch(
    hf_model_id="Qwen/Qwen3-30B-A3B", family="qwen3", num_layers=48, hidden_size=2048, ffn_hidden_size=6144,
    num_attention_heads=32, num_query_groups=4, kv_channels=128, vocab_size=151936, num_moe_experts=128,
    moe_router_topk=8, moe_ffn_hidden_size=768, source="huggingface.co/Qwen/Qwen3-30B-A3B config.json",
)  # fmt: skip
# Megatron-Bridge v0.3.1 Nemotron3NanoProvider (nemotronh/nemotron_h_provider.py) and the HF config of
# nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: 23 Mamba-2, 23 MoE and 6 attention layers, squared-ReLU MLPs.
NEMOTRON_3_NANO = ModelArch(
    hf_model_id="nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", family="nemotron_h", num_layers=52,
    hidden_size=2688, ffn_hidden_size=1856, num_attention_heads=32, num_query_groups=2, kv_channels=128,
    vocab_size=131072, gated_linear_unit=False, num_moe_experts=128, moe_router_topk=6,
    moe_ffn_hidden_size=1856, moe_shared_expert_intermediate_size=3712, is_hybrid=True,
    hybrid_layer_pattern="MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", mamba_num_heads=64,
    mamba_head_dim=64, mamba_state_dim=128, mamba_num_groups=8,
    source="Megatron-Bridge v0.3.1 Nemotron3NanoProvider; HF config.json",
)  # fmt: skip
