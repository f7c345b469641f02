"""validate(): each rule on both sides of its boundary, with the exact upstream texts."""

from __future__ import annotations

import pytest

from assistant.kb import knowledge_base
from assistant.records import Cluster
from assistant.rules.config import build_config
from assistant.rules.validate import has_errors, looks_like_hub_id, validate
from tests.test_rules_fixtures import (
    DEEPSEEK_LIKE,
    HAND_LAUNCHERS,
    LLAMA3_8B,
    LLAMA3_70B,
    QWEN3_30B_A3B,
    QWEN35_VL_MOE,
    make_record,
)


def run(
    overrides=(),
    *,
    arch=LLAMA3_8B,
    gpus=8,
    gpu="h100",
    per_node=8,
    version="0.6.0",
    dataset=None,
    launcher=None,
    **record_kwargs,
):
    record = make_record(version=version, **record_kwargs)
    config = build_config(record, list(overrides), version=version, dataset=dataset)
    return validate(
        config,
        arch,
        Cluster(num_gpus=gpus, gpu_type=gpu, gpus_per_node=per_node),
        version,
        launcher,
        gpu=knowledge_base().gpu_spec(gpu),
    )


def by_id(findings, rule_id):
    return [item for item in findings if item.id == rule_id]


def one(findings, rule_id):
    matches = by_id(findings, rule_id)
    assert len(matches) == 1, [f.id for f in findings]
    return matches[0]


# ---------------------------------------------------------------- TP


def test_heads_tp_error_text_and_fix():
    item = one(run(["tp=3"], gpus=3), "tp-heads")
    assert item.severity == "error"
    assert (
        item.upstream_error
        == "num_attention_heads (32) must be a multiple of tensor_model_parallel_size (3)."
    )
    assert item.fix == "model.tensor_model_parallel_size=2"
    assert item.message and item.message_zh


def test_heads_tp_passes_when_divisible():
    assert not by_id(run(["tp=4"]), "tp-heads")


def test_mamba_mixers_must_split_evenly_over_tp():
    """Megatron-Core's MambaMixer asserts that TP divides its heads and its B/C groups (mamba_mixer.py)."""
    from tests.archs import NEMOTRON_3_NANO  # 64 Mamba heads, 8 groups, 32 attention heads

    assert not by_id(run(["tp=8"], arch=NEMOTRON_3_NANO), "tp-mamba")
    groups = one(run(["tp=16"], arch=NEMOTRON_3_NANO, gpus=16, gpu="gb200", per_node=4), "tp-mamba")
    assert (
        groups.severity == "error" and groups.upstream_error == "ngroups must be evenly divisible by tp_size"
    )
    odd_heads = NEMOTRON_3_NANO.model_copy(update={"mamba_num_heads": 100})
    heads = one(run(["tp=8"], arch=odd_heads), "tp-mamba")
    assert heads.upstream_error == "nheads must be evenly divisble by tp_size"  # upstream's spelling
    assert heads.fix == "model.tensor_model_parallel_size=4"


def test_query_groups_current_mcore_allows_tp_multiple_of_groups():
    found = run(["tp=16"], gpus=16, gpu="gb200", per_node=4, version="0.6.0")
    item = one(found, "tp-query-groups")
    assert item.severity == "info"
    assert not has_errors(found)


def test_query_groups_old_mcore_rejects_tp_above_groups_with_old_text():
    item = one(run(["tp=16"], gpus=16, gpu="gb200", per_node=4, version="0.3.1"), "tp-query-groups")
    assert item.severity == "error"
    assert item.upstream_error == (
        "num_query_groups (8) must be a multiple of tensor_model_parallel_size (16)."
    )
    assert item.fix == "model.tensor_model_parallel_size=8"


def test_query_groups_new_text_for_non_divisor():
    arch = LLAMA3_8B.model_copy(update={"num_attention_heads": 48, "num_query_groups": 8})
    item = one(run(["tp=6"], arch=arch, gpus=6), "tp-query-groups")
    assert item.upstream_error == (
        "num_query_groups (8) must be a multiple or divisor of tensor_model_parallel_size (6)."
    )


@pytest.mark.parametrize("version", ["0.3.1", "0.5.1", "0.6.0", "main"])
def test_query_groups_divisor_is_fine_everywhere(version):
    assert not by_id(run(["tp=8"], version=version), "tp-query-groups")


def test_old_rule_reproduces_reported_message():
    arch = LLAMA3_8B.model_copy(update={"num_query_groups": 2})
    item = one(run(["tp=8"], arch=arch, version="0.3.1"), "tp-query-groups")
    assert item.upstream_error == "num_query_groups (2) must be a multiple of tensor_model_parallel_size (8)."


def test_tp_cross_node_on_h100_but_not_on_nvl72():
    assert one(run(["tp=16"], arch=LLAMA3_70B, gpus=16), "tp-cross-node").severity == "warning"
    assert not by_id(run(["tp=8"], arch=LLAMA3_70B, gpus=16), "tp-cross-node")
    assert not by_id(run(["tp=16"], arch=LLAMA3_70B, gpus=16, gpu="gb200", per_node=4), "tp-cross-node")


def test_sequence_parallel_rules():
    item = one(run(["tp=2", "sp=false"]), "sp-off")
    assert item.fix == "model.sequence_parallel=true" and item.upstream_error is None
    assert not by_id(run(["tp=2", "sp=true"]), "sp-off")
    ignored = one(run(["tp=1", "sp=true"]), "sp-ignored")
    assert (
        ignored.severity == "info"
        and "Cannot use sequence parallelism without tensor parallelism" in ignored.message
    )
    moe = one(run(["tp=2", "ep=4"], arch=QWEN3_30B_A3B), "sp-off")
    assert moe.upstream_error == (
        "When using expert parallelism and tensor parallelism for training, sequence parallelism must be used"
    )


# ---------------------------------------------------------------- PP / VP


def test_layers_pp():
    item = one(run(["pp=3"], gpus=3), "pp-layers")
    assert item.upstream_error == "num_layers=32 should be divisible by config.pipeline_model_parallel_size=3"
    assert item.fix == "model.pipeline_model_parallel_size=2"
    assert not by_id(run(["pp=4", "vp=2"]), "pp-layers")
    old = one(run(["pp=3"], gpus=3, version="0.3.1"), "pp-layers")
    assert old.upstream_error == "num_layers should be divisible by pipeline_model_parallel_size"


def test_custom_pipeline_layout_skips_layer_checks():
    found = run(["pp=3", "model.account_for_embedding_in_pipeline_split=true"], gpus=3)
    assert not by_id(found, "pp-layers")


def test_vp_needs_pp():
    item = one(run(["vp=2"]), "vp-needs-pp")
    assert (
        item.upstream_error
        == "pipeline-model-parallel size should be greater than 1 with interleaved schedule"
    )
    assert item.fix == "model.virtual_pipeline_model_parallel_size=null"
    assert not by_id(run(["pp=2", "vp=2"]), "vp-needs-pp")


def test_vp_divides_layers_per_stage():
    item = one(run(["pp=4", "vp=3"]), "vp-layers")
    assert (
        item.upstream_error == "Make sure the number of model chunks is the same across all pipeline stages."
    )
    assert item.fix == "model.virtual_pipeline_model_parallel_size=2"
    assert not by_id(run(["pp=4", "vp=4"]), "vp-layers")


def test_pp_without_vp():
    item = one(run(["pp=2"]), "pp-without-vp")
    assert item.severity == "warning" and item.fix == "model.virtual_pipeline_model_parallel_size=4"
    assert not by_id(run(["pp=2", "vp=4"]), "pp-without-vp")


# ---------------------------------------------------------------- CP


def test_cp_sequence_divisibility():
    item = one(run(["cp=2", "seq_length=8190"]), "cp-seq")
    assert item.upstream_error == (
        "Sequence length must be divisible by 2 * context parallel size if context parallel is used."
    )
    assert not by_id(run(["cp=2", "seq_length=8192"]), "cp-seq")


@pytest.mark.parametrize("version", ["0.3.1", "0.5.1"])
def test_finetune_cp_needs_loss_settings_in_older_versions(version):
    first = one(run(["cp=2"], version=version, mode="sft", name="llama3_8b_sft_config"), "finetune-cp-loss")
    assert first.severity == "error"
    assert first.upstream_error == "When finetuning with CP>1, calculate_per_token_loss must be True"
    assert first.fix == "model.calculate_per_token_loss=true ddp.average_in_collective=false"
    second = one(
        run(["cp=2", "model.calculate_per_token_loss=true"], version=version, mode="sft"), "finetune-cp-loss"
    )
    assert second.upstream_error == "When finetuning with CP>1, average_in_collective must be False"
    fixed = ["cp=2", "model.calculate_per_token_loss=true", "ddp.average_in_collective=false"]
    assert not by_id(run(fixed, version=version, mode="sft"), "finetune-cp-loss")


def test_finetune_cp_is_synced_by_the_060_runner():
    item = one(run(["cp=2"], version="0.6.0", mode="sft"), "finetune-cp-loss")
    assert item.severity == "info"
    assert not by_id(run(["cp=2"], version="0.5.1", mode="pretrain"), "finetune-cp-loss")


def test_hierarchical_cp():
    missing = one(run(["cp=4", "model.cp_comm_type=a2a+p2p"]), "cp-a2a-p2p")
    assert missing.upstream_error.startswith(
        "hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'. "
        "Without it, CP "
        "communication is silently disabled"
    )
    assert missing.fix == "model.hierarchical_context_parallel_sizes=[4,1]"
    wrong = one(
        run(["cp=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,4]"]),
        "cp-a2a-p2p",
    )
    assert wrong.upstream_error == (
        "Product of hierarchical_context_parallel_sizes [2, 4] (=8) must equal context_parallel_size (=4)."
    )
    fine = run(["cp=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"])
    assert not by_id(fine, "cp-a2a-p2p")
    old = one(run(["cp=4", "model.cp_comm_type=a2a+p2p"], version="0.3.1"), "cp-a2a-p2p")
    assert old.severity == "error" and old.upstream_error is None and "silently" in old.message


def test_long_context_without_cp():
    item = one(run(["seq_length=32768", "cp=1"]), "long-context-no-cp")
    assert item.fix == "model.context_parallel_size=4"
    assert not by_id(run(["seq_length=8192", "cp=1"]), "long-context-no-cp")
    assert not by_id(run(["seq_length=32768", "cp=4"]), "long-context-no-cp")


# ---------------------------------------------------------------- meshes and batches


def test_dense_mesh():
    item = one(run(["tp=8"], arch=LLAMA3_70B, gpus=12), "dense-mesh")
    assert item.upstream_error == (
        "world size (12) is not divisible by total_model_size (model_cfg.tensor_model_parallel_size=8 * "
        "model_cfg.pipeline_model_parallel_size=1 * model_cfg.context_parallel_size=1)"
    )
    assert item.fix == "model.tensor_model_parallel_size=4"
    assert not by_id(run(["tp=8"], arch=LLAMA3_70B, gpus=16), "dense-mesh")


def test_expert_mesh_reproduces_reported_error():
    item = one(run(["pp=2", "ep=8", "etp=1"], arch=QWEN3_30B_A3B, gpus=8, gbs=32), "expert-mesh")
    assert item.upstream_error == (
        "world_size (8) is not divisible by expert_tensor_model_pipeline_parallel size (16)"
    )
    assert item.fix == "model.expert_model_parallel_size=4"
    assert not by_id(run(["pp=1", "ep=8", "etp=1"], arch=QWEN3_30B_A3B, gpus=8), "expert-mesh")


@pytest.mark.parametrize("version", ["0.3.1", "0.5.1"])
def test_unset_etp_means_tp_before_060(version):
    assert by_id(run(["tp=4", "ep=4"], arch=QWEN3_30B_A3B, gpus=8, version=version), "expert-mesh")
    assert not by_id(
        run(["tp=4", "ep=4", "etp=1"], arch=QWEN3_30B_A3B, gpus=8, version=version), "expert-mesh"
    )


@pytest.mark.parametrize("version", ["0.6.0", "main"])
def test_unset_etp_means_one_with_ep_from_060(version):
    assert not by_id(run(["tp=4", "ep=4"], arch=QWEN3_30B_A3B, gpus=8, version=version), "expert-mesh")
    assert by_id(run(["tp=4", "ep=4", "etp=4"], arch=QWEN3_30B_A3B, gpus=8, version=version), "expert-mesh")


def test_experts_divisible_by_ep():
    item = one(run(["ep=3"], arch=QWEN3_30B_A3B, gpus=3), "experts-ep")
    assert item.upstream_error == "assert self.config.num_moe_experts % ep_size == 0"
    assert item.fix == "model.expert_model_parallel_size=2"
    assert not by_id(run(["ep=8"], arch=QWEN3_30B_A3B), "experts-ep")
    dense = one(run(["ep=2"]), "ep-dense-model")
    assert dense.upstream_error == "num_moe_experts must be non None to use expert-parallel."


def test_global_batch_divisibility():
    item = one(run([], gpus=6, cp=2), "batch-divisible")
    assert item.upstream_error == (
        "global batch size (512) is not divisible by micro batch size (1) times data parallel size (3)"
    )
    assert item.fix == "train.global_batch_size=513"
    assert not by_id(run([], gpus=8, cp=2), "batch-divisible")


def test_packed_sequences_need_mbs_one():
    overrides = ["dataset.packed_sequence_specs.packed_sequence_size=4096", "mbs=4", "gbs=128"]
    item = one(run(overrides, mode="sft"), "packed-mbs")
    assert item.upstream_error.startswith(
        "Micro batch size should be 1 when training with packed sequence, but your micro batch size is 4. \n"
    )
    assert "Set global batch size to 32 (currently 128) \n" in item.upstream_error
    assert "Set packed sequence length to 16384 (currently 4096) \n" in item.upstream_error
    assert not by_id(run(["dataset.packed_sequence_specs.packed_sequence_size=4096", "mbs=1"]), "packed-mbs")


# ---------------------------------------------------------------- runner, data, checkpoints


def test_mode_dataset_060_rejects_mock_for_sft():
    found = run([], mode="sft", name="llama3_8b_sft_config", dataset="mock", launcher=HAND_LAUNCHERS["0.6.0"])
    item = one(found, "mode-dataset")
    assert (
        item.severity == "error" and item.upstream_error == "Mode 'sft' is incompatible with dataset 'mock'."
    )
    assert item.fix == "--dataset squad"
    ok = run([], mode="sft", dataset="squad", launcher=HAND_LAUNCHERS["0.6.0"])
    assert not by_id(ok, "mode-dataset")


def test_mode_dataset_060_peft_uses_lora_name():
    found = run(
        ["checkpoint.pretrained_checkpoint=/ckpt"],
        mode="peft",
        dataset="mock",
        launcher=HAND_LAUNCHERS["0.6.0"],
    )
    assert one(found, "mode-dataset").upstream_error == "Mode 'lora' is incompatible with dataset 'mock'."


def test_mode_dataset_051_dataset_decides_the_loop():
    found = run(
        [], version="0.5.1", mode="sft", dataset="llm-pretrain-mock", launcher=HAND_LAUNCHERS["0.5.1"]
    )
    assert one(found, "mode-dataset").severity == "warning"
    ok = run([], version="0.5.1", mode="sft", dataset="llm-finetune", launcher=HAND_LAUNCHERS["0.5.1"])
    assert not by_id(ok, "mode-dataset")


def test_dataset_flag_absent_in_031_and_unknown_preset():
    assert one(run([], version="0.3.1", dataset="mock", launcher=HAND_LAUNCHERS["0.3.1"]), "dataset-flag")
    item = one(run([], version="0.5.1", dataset="mock", launcher=HAND_LAUNCHERS["0.5.1"]), "dataset-unknown")
    assert item.upstream_error.startswith(
        "argument --dataset: invalid choice: 'mock' (choose from 'llm-pretrain'"
    )


def test_peft_checkpoint_rules():
    missing = one(run([], mode="peft", peft="lora"), "peft-checkpoint")
    assert missing.upstream_error == "PEFT requires a pretrained checkpoint path"
    hub = one(
        run(["checkpoint.pretrained_checkpoint=meta-llama/Meta-Llama-3-8B"], mode="peft"), "peft-checkpoint"
    )
    assert hub.upstream_error == "Invalid pretrained checkpoint directory found: meta-llama/Meta-Llama-3-8B"
    assert not by_id(run(["checkpoint.pretrained_checkpoint=/ckpt/llama3"], mode="peft"), "peft-checkpoint")
    assert not by_id(run([], mode="sft"), "peft-checkpoint")


@pytest.mark.parametrize(
    ("path", "hub"),
    [
        ("meta-llama/Llama-3.1-8B", True),
        ("/data/ckpt", False),
        ("./ckpt", False),
        ("~/ckpt", False),
        ("${PRETRAINED_CHECKPOINT}", False),
        ("ckpt", False),
        ("hf://meta-llama/x", True),
    ],
)
def test_hub_id_detection(path, hub):
    assert looks_like_hub_id(path) is hub


def test_model_seq_length_alone():
    synced = one(run(["model.seq_length=16384", "cp=2"], version="0.6.0"), "seq-length-sync")
    assert synced.severity == "warning"
    old = one(run(["model.seq_length=16384", "cp=2"], version="0.3.1"), "seq-length-sync")
    assert old.upstream_error == (
        "Please ensure sequence length configuration in model config and dataset config match.\n"
        "Sequence length in model config: 16384, Sequence length in dataset config: 8192"
    )
    assert not by_id(run(["seq_length=16384", "cp=2"], version="0.3.1"), "seq-length-sync")


# ---------------------------------------------------------------- CUDA graphs


GRAPHS = [
    "model.cuda_graph_impl=transformer_engine",
    "model.use_te_rng_tracker=true",
    "rng.te_rng_tracker=true",
]


def test_graphs_need_te_rng_tracker():
    item = one(run(["model.cuda_graph_impl=transformer_engine"]), "cuda-graph-rng")
    assert item.upstream_error == (
        "Transformer engine's RNG tracker is required for cudagraphs, "
        "it can be enabled with use_te_rng_tracker=True'."
    )
    assert not by_id(run(GRAPHS), "cuda-graph-rng")
    assert not by_id(
        run(["model.cuda_graph_impl=transformer_engine", "rng.te_rng_tracker=true"]), "cuda-graph-rng"
    )
    assert not by_id(run([]), "cuda-graph-rng")


def test_graphs_with_full_recompute_is_version_aware():
    new = one(run([*GRAPHS, "model.recompute_granularity=full"]), "cuda-graph-full-recompute")
    assert new.upstream_error == "full recompute is only supported with full iteration CUDA graph."
    assert new.fix.startswith("model.cuda_graph_impl=full_iteration")
    old = one(
        run([*GRAPHS, "model.recompute_granularity=full"], version="0.3.1"), "cuda-graph-full-recompute"
    )
    assert "model.cuda_graph_impl=local model.cuda_graph_scope=[full_iteration]" in old.fix
    full = [
        "model.cuda_graph_impl=full_iteration",
        "model.use_te_rng_tracker=true",
        "rerun_state_machine.check_for_nan_in_loss=false",
        "model.recompute_granularity=full",
    ]
    assert not has_errors(run(full))
    assert not by_id(run([*GRAPHS, "model.recompute_granularity=selective"]), "cuda-graph-full-recompute")


def test_full_iteration_graph_needs_nan_check_off():
    item = one(
        run(["model.cuda_graph_impl=full_iteration", "model.use_te_rng_tracker=true"]), "cuda-graph-nan-check"
    )
    assert item.upstream_error == (
        "check_for_nan_in_loss must be disabled when using full_iteration CUDA graph. "
        "Set rerun_state_machine.check_for_nan_in_loss=False."
    )
    local_old = [
        "model.cuda_graph_impl=local",
        "model.cuda_graph_scope=[full_iteration]",
        "model.use_te_rng_tracker=true",
    ]
    assert one(run(local_old, version="0.3.1"), "cuda-graph-nan-check")


PACKED = ["dataset.packed_sequence_specs.packed_sequence_size=8192"]


def test_graphs_with_packing_older_versions():
    item = one(run([*GRAPHS, *PACKED], version="0.5.1", mode="sft"), "cuda-graph-packed")
    assert item.upstream_error == (
        "CUDA graph accepts only Tensor inputs. inference_context and packed_seq_params are excluded "
        "from input "
        "list. For inference cuda graph, please use cuda_graph_impl=local instead."
    )
    scoped = [*GRAPHS, *PACKED, "model.cuda_graph_scope=[moe_router]"]
    assert not by_id(run(scoped, version="0.5.1", mode="sft"), "cuda-graph-packed")
    assert not by_id(run(GRAPHS, version="0.5.1", mode="sft"), "cuda-graph-packed")


def test_graphs_with_packing_060():
    first = one(run([*GRAPHS, *PACKED], mode="sft"), "cuda-graph-packed")
    assert first.upstream_error == "Offline packing with CUDA graphs requires dataset pad_to_max_length=True."
    second = one(run([*GRAPHS, *PACKED, "dataset.pad_to_max_length=true"], mode="sft"), "cuda-graph-packed")
    assert second.upstream_error.startswith(
        "Packed attention CUDA graphs require offline_packing_specs.pad_cu_seqlens"
    )
    padded = [
        *GRAPHS,
        *PACKED,
        "dataset.pad_to_max_length=true",
        "dataset.offline_packing_specs.pad_cu_seqlens=true",
    ]
    assert not by_id(run(padded, mode="sft"), "cuda-graph-packed")


# ---------------------------------------------------------------- skill pitfalls


def test_fsdp_with_tp_on_hopper():
    assert one(run(["tp=2", "ddp.use_megatron_fsdp=true"]), "fsdp-tp-hopper").severity == "warning"
    assert not by_id(run(["tp=2", "ddp.use_megatron_fsdp=true"], gpu="b200"), "fsdp-tp-hopper")
    assert not by_id(run(["tp=1", "ddp.use_megatron_fsdp=true"]), "fsdp-tp-hopper")


def test_moe_overlap_grad_reduce_on_h100():
    item = one(
        run(["ep=8", "ddp.overlap_grad_reduce=true"], arch=QWEN3_30B_A3B), "moe-overlap-grad-reduce-h100"
    )
    assert item.fix == "ddp.overlap_grad_reduce=false"
    assert not by_id(
        run(["ep=8", "ddp.overlap_grad_reduce=false"], arch=QWEN3_30B_A3B), "moe-overlap-grad-reduce-h100"
    )
    assert not by_id(
        run(["ep=8", "ddp.overlap_grad_reduce=true"], arch=QWEN3_30B_A3B, gpu="b200"),
        "moe-overlap-grad-reduce-h100",
    )
    assert not by_id(run(["ddp.overlap_grad_reduce=true"]), "moe-overlap-grad-reduce-h100")


def test_ep_too_low_for_large_moe():
    item = one(run(["ep=1", "pp=1"], arch=DEEPSEEK_LIKE, gpus=256, gbs=1024), "ep-too-low")
    assert item.fix == "model.expert_model_parallel_size=256"
    assert not by_id(run(["ep=64", "pp=4"], arch=DEEPSEEK_LIKE, gpus=256, gbs=1024), "ep-too-low")
    assert "Raise EP" in item.message


def test_ep_too_low_when_no_larger_ep_fits_asks_for_gpus_not_ep():
    """EP already spans every GPU (EP=8 on 8): "raise EP" is impossible, and no fix is offered for it."""
    item = one(run(["ep=8", "pp=1"], arch=DEEPSEEK_LIKE, gpus=8, gbs=1024), "ep-too-low")
    assert "Raise EP" not in item.message and "No larger EP fits 8 GPUs" in item.message
    assert "8 张 GPU 放不下更大的 EP" in item.message_zh and item.fix is None


def test_vlm_finetune_without_images():
    vlm = QWEN35_VL_MOE
    found = run([], arch=vlm, mode="sft", dataset="squad", launcher=HAND_LAUNCHERS["0.6.0"])
    assert one(found, "vlm-no-images").severity == "warning"
    assert not by_id(
        run([], arch=vlm, mode="sft", dataset="cord-v2", launcher=HAND_LAUNCHERS["0.6.0"]), "vlm-no-images"
    )
    assert not by_id(run([], mode="sft", dataset="squad", launcher=HAND_LAUNCHERS["0.6.0"]), "vlm-no-images")


def test_qwen35_vl_moe_fsdp_only_validated_on_blackwell():
    kwargs = {
        "arch": QWEN35_VL_MOE,
        "family": "qwen35_vl",
        "mode": "sft",
        "hf_model_id": "Qwen/Qwen3.5-VL-35B-A3B",
    }
    assert one(run(["ddp.use_megatron_fsdp=true"], **kwargs), "qwen35-vl-moe-fsdp")
    assert not by_id(
        run(["ddp.use_megatron_fsdp=true"], gpu="gb200", per_node=4, **kwargs), "qwen35-vl-moe-fsdp"
    )
    assert not by_id(run([], **kwargs), "qwen35-vl-moe-fsdp")


def test_single_gpu_full_training_warns():
    assert one(run([], gpus=1, cp=1), "single-gpu-full-training")
    assert not by_id(
        run(["checkpoint.pretrained_checkpoint=/c"], gpus=1, cp=1, mode="peft"), "single-gpu-full-training"
    )


def test_training_section_name():
    item = one(run(["training.global_batch_size=64"]), "override-section")
    assert item.fix == "train.global_batch_size=64"
    assert not by_id(run(["train.global_batch_size=64"]), "override-section")


def test_unknown_architecture_skips_arch_rules():
    found = run(["tp=3"], arch=None, gpus=3)
    assert not by_id(found, "tp-heads") and not by_id(found, "pp-layers")


def test_errors_sort_first():
    found = run(["tp=3", "pp=2"], gpus=6)
    severities = [item.severity for item in found]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_benchmark_recipes_leave_graph_bookkeeping_to_the_performance_launcher():
    graphs = ["model.cuda_graph_impl=transformer_engine"]
    bench = one(
        run([], kind="benchmark", fields={"model.cuda_graph_impl": "transformer_engine"}), "cuda-graph-rng"
    )
    assert bench.severity == "info"
    assert one(run(graphs, kind="benchmark"), "cuda-graph-rng").severity == "error"
    assert one(run(graphs), "cuda-graph-rng").severity == "error"


def test_hybrid_stacks_get_a_warning_not_an_error_for_layer_splits():
    hybrid = LLAMA3_8B.model_copy(update={"num_layers": 30, "is_hybrid": True})
    assert one(run(["pp=4"], arch=hybrid, gpus=4), "pp-layers").severity == "warning"
    assert one(
        run(["pp=4"], arch=LLAMA3_8B.model_copy(update={"num_layers": 30}), gpus=4), "pp-layers"
    ).severity == ("error")


def test_pad_to_max_length_inside_dataset_kwargs_counts():
    fields = {
        "dataset.enable_offline_packing": True,
        "dataset.dataset_kwargs": {"pad_to_max_length": True},
        "dataset.offline_packing_specs.pad_cu_seqlens": True,
        "dataset.offline_packing_specs.packed_sequence_size": 4096,
    }
    assert not by_id(run(GRAPHS, mode="sft", fields=fields), "cuda-graph-packed")


def test_finetune_cp_check_follows_the_dataset_class():
    diffusion = {"dataset._target_": "WanDatasetConfig"}
    assert not by_id(run(["cp=2"], version="0.5.1", mode="sft", fields=diffusion), "finetune-cp-loss")
    sft = {"dataset._target_": "HFDatasetConfig"}
    assert one(run(["cp=2"], version="0.5.1", mode="sft", fields=sft), "finetune-cp-loss").severity == "error"


# ---------------------------------------------------------------- CPU activation offloading

OFFLOAD = ["model.cpu_offloading=true", "model.cpu_offloading_num_layers=20"]


def test_offloading_with_pipeline_parallelism_is_an_error():
    item = one(run(["pp=4", *OFFLOAD], arch=LLAMA3_70B, gpus=64), "offload-pp")
    assert item.severity == "error"
    assert item.upstream_error == "Currently there is no support for Pipeline parallelism with CPU offloading"
    assert item.fix == "model.cpu_offloading=false"
    assert not by_id(run(["pp=1", *OFFLOAD], arch=LLAMA3_70B, gpus=64), "offload-pp")


def test_offloading_and_recompute_exclude_each_other():
    item = one(
        run(["pp=1", "model.recompute_granularity=full", *OFFLOAD], arch=LLAMA3_70B), "offload-recompute"
    )
    assert item.upstream_error == "CPU offloading does not work when activation recomputation is enabled"
    assert item.fix == "model.recompute_granularity=null"


def test_offloading_layer_count_must_stay_below_the_model():
    item = one(
        run(["pp=1", "model.cpu_offloading=true", "model.cpu_offloading_num_layers=32"]), "offload-layers"
    )
    assert item.upstream_error == "CPU offloading can be done only for layers less than 32"
    assert not by_id(
        run(["pp=1", "model.cpu_offloading=true", "model.cpu_offloading_num_layers=31"]), "offload-layers"
    )


def test_offloading_allows_only_full_iteration_cuda_graphs():
    per_layer = [
        "pp=1",
        "model.cuda_graph_impl=transformer_engine",
        "model.use_te_rng_tracker=true",
        *OFFLOAD,
    ]
    assert (
        one(run(per_layer), "offload-cuda-graphs").upstream_error
        == "CUDA graphs not supported with CPU offloading."
    )
    assert not by_id(run(["pp=1", "model.cuda_graph_impl=full_iteration", *OFFLOAD]), "offload-cuda-graphs")
    assert not by_id(run(["pp=1", "model.cuda_graph_impl=transformer_engine"]), "offload-cuda-graphs")


def test_a_precision_needs_the_tensor_cores_for_it():
    fp8 = ["mixed_precision=bf16_with_fp8_current_scaling_mixed"]
    on_a100 = one(run(fp8, gpu="a100"), "precision-gpu")
    assert on_a100.severity == "error"
    # Transformer Engine's check_fp8_support (pytorch/fp8.py) on compute capability 8.0.
    assert on_a100.upstream_error == "Device compute capability 8.9 or higher required for FP8 execution."
    assert on_a100.fix == "mixed_precision=bf16_mixed"
    assert not by_id(run(fp8, gpu="h100"), "precision-gpu")
    mx_on_h100 = one(run(["mixed_precision=bf16_with_mxfp8_mixed"], gpu="h100"), "precision-gpu")
    assert mx_on_h100.fix == "mixed_precision=bf16_with_fp8_current_scaling_mixed"  # H100 does have FP8
    assert not by_id(run(["mixed_precision=bf16_with_mxfp8_mixed"], gpu="b200"), "precision-gpu")
    assert not by_id(run(gpu="a100"), "precision-gpu")  # the recipe's own BF16
    assert one(run(gpu="a100", precision="fp8cs"), "precision-gpu")  # an FP8 recipe on A100


def test_a_mixed_precision_preset_must_exist_in_the_release():
    from assistant.records import LauncherSpec

    launcher = LauncherSpec(
        script="scripts/training/run_recipe.py",
        mixed_precision_presets=[
            "bf16_mixed",
            "bf16_with_mxfp8_mixed",
            "bf16_with_fp8_current_scaling_mixed",
        ],
    )
    typo = one(run(["mixed_precision=bf16_with_fp8_mixed"], launcher=launcher), "precision-unknown")
    assert typo.severity == "error" and typo.fix == "mixed_precision=bf16_with_mxfp8_mixed"
    assert typo.upstream_error.startswith("Unknown mixed-precision recipe 'bf16_with_fp8_mixed'. Available")
    assert "bf16-mixed, bf16-with-fp8-current-scaling-mixed" in typo.upstream_error  # hyphenated too
    assert not by_id(
        run(["mixed_precision=bf16-with-mxfp8-mixed"], launcher=launcher, gpu="b200"), "precision-unknown"
    )
    assert not by_id(run(["mixed_precision=bf16_with_fp8_mixed"]), "precision-unknown")  # no table: unchecked


def test_a_mixed_precision_that_is_not_a_name_is_caught():
    from assistant.records import LauncherSpec

    launcher = LauncherSpec(script="scripts/training/run_recipe.py", mixed_precision_presets=["bf16_mixed"])
    assert one(run(["mixed_precision=[1,2]"], launcher=launcher), "precision-unknown").severity == "error"


def test_a_recipe_that_freezes_parts_of_a_vlm_says_what_trains():
    """Qwen3-VL's mock pretraining recipes freeze the language model and the vision encoder; the finding
    says so in both languages, offers the overrides that unfreeze, and goes away once they are given."""
    frozen = {"model.freeze_language_model": True, "model.freeze_vision_model": True}
    item = one(run([], arch=QWEN35_VL_MOE, fields=frozen), "vlm-frozen")
    assert item.severity == "info"
    assert "language model and vision encoder" in item.message and "vision projection" in item.message
    assert "语言模型和视觉编码器" in item.message_zh
    assert item.fix == "model.freeze_language_model=false model.freeze_vision_model=false"
    unfrozen = run(item.fix.split(), arch=QWEN35_VL_MOE, fields=frozen)
    assert not by_id(unfrozen, "vlm-frozen")
    assert not by_id(run([], arch=QWEN35_VL_MOE, fields=frozen, mode="peft", peft="lora"), "vlm-frozen")
