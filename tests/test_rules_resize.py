"""resize(): plans follow the skill's rules and always pass validate()."""

from __future__ import annotations

from assistant.kb import knowledge_base
from assistant.planning.resize import choose_vp, resize, target_cp, weak_scaling
from assistant.records import Cluster
from assistant.rules.validate import has_errors, validate
from tests.test_rules_fixtures import DEEPSEEK_LIKE, LLAMA3_8B, LLAMA3_70B, QWEN3_30B_A3B, make_record


def plan_for(record, arch, gpus, gpu="h100", per_node=8, seq=None, **kwargs):
    return resize(
        record, arch, Cluster(num_gpus=gpus, gpu_type=gpu, gpus_per_node=per_node), None, seq,
        kb=knowledge_base(), **kwargs,
    )


def keys(result):
    return {item.key: item for item in result.overrides}


def assert_consistent(result, arch, gpus, gpu="h100", per_node=8):
    plan = result.plan
    assert plan is not None
    assert plan.tp * plan.pp * plan.cp * plan.dp == gpus
    assert plan.gbs == plan.mbs * plan.dp * plan.ga
    if arch.num_moe_experts:
        assert gpus % (plan.pp * plan.ep * (plan.etp or plan.tp)) == 0
    cluster = Cluster(num_gpus=gpus, gpu_type=gpu, gpus_per_node=per_node)
    assert not has_errors(
        validate(
            result.config,
            arch,
            cluster,
            result.config.version,
            gpu=knowledge_base().gpu_spec(cluster.gpu_type),
        )
    )


def test_recipe_layout_is_kept_on_its_own_gpu_count():
    record = make_record(cp=2, encoded_gpus=2)
    result = plan_for(record, LLAMA3_8B, 2)
    assert (result.plan.tp, result.plan.pp, result.plan.cp, result.plan.dp) == (1, 1, 2, 1)
    assert result.overrides == []
    assert result.fit.status in ("fits", "does-not-fit") and result.fit.peak_bytes > 0
    assert result.fit.usable_bytes > 70e9
    assert not any(item.id == "fit-unknown" for item in result.findings)


def test_more_gpus_raise_dp_and_move_ga_not_gbs():
    record = make_record(cp=2, encoded_gpus=2)
    result = plan_for(record, LLAMA3_8B, 16)
    assert (result.plan.dp, result.plan.gbs, result.plan.ga) == (8, 512, 64)
    assert "train.global_batch_size" not in keys(result)
    assert_consistent(result, LLAMA3_8B, 16)


def test_gbs_change_only_when_no_layout_divides_and_labelled_convergence():
    record = make_record(cp=2, encoded_gpus=2)
    result = plan_for(record, LLAMA3_8B, 6)
    gbs = keys(result)["train.global_batch_size"]
    assert gbs.change_class == "convergence" and gbs.value % 3 == 0
    assert "convergence" in gbs.reason
    assert_consistent(result, LLAMA3_8B, 6)


def test_one_gpu_is_peft_only():
    result = plan_for(make_record(), LLAMA3_8B, 1)
    assert result.plan is None and result.findings[0].id == "single-gpu-needs-peft"
    assert result.findings[0].severity == "error"
    peft = make_record(name="llama3_8b_peft_config", mode="peft", peft="lora", seq=4096, gbs=32, mbs=1, cp=1)
    result = plan_for(peft, LLAMA3_8B, 1)
    assert (result.plan.tp, result.plan.pp, result.plan.num_gpus) == (1, 1, 1)
    checkpoint = keys(result)["checkpoint.pretrained_checkpoint"]
    assert checkpoint.value == "${PRETRAINED_CHECKPOINT}" and checkpoint.change_class == "execution"


def test_pp_only_when_tp_cannot_fit_and_vp_follows():
    record = make_record(name="llama3_70b_pretrain_config", tp=4, pp=4, vp=5, cp=2, gbs=512, encoded_gpus=32)
    result = plan_for(record, LLAMA3_70B, 32, seq=4096)
    plan = result.plan
    assert (plan.tp, plan.pp) == (8, 2) and plan.sp
    assert plan.vp is not None and (80 // plan.pp) % plan.vp == 0
    assert keys(result)["model.pipeline_model_parallel_size"].change_class == "execution"
    assert_consistent(result, LLAMA3_70B, 32)
    small = plan_for(make_record(tp=4, pp=1, cp=1, encoded_gpus=8), LLAMA3_8B, 8)
    assert small.plan.pp == 1 and small.plan.vp is None


def test_70b_full_training_does_not_fit_on_16_h100():
    record = make_record(name="llama3_70b_pretrain_config", tp=4, pp=4, vp=5, cp=2, gbs=512, encoded_gpus=32)
    result = plan_for(record, LLAMA3_70B, 16)
    assert result.plan is None and result.findings[0].id == "does-not-fit"


def test_tp_divides_kv_heads_and_stays_in_node():
    record = make_record(name="llama3_70b_pretrain_config", tp=4, pp=4, vp=5, cp=2, gbs=512, encoded_gpus=32)
    for gpus in (32, 48, 64, 128):
        result = plan_for(record, LLAMA3_70B, gpus)
        assert result.plan is not None and 8 % result.plan.tp == 0 and result.plan.tp <= 8
        assert_consistent(result, LLAMA3_70B, gpus)


def test_long_sequence_adds_cp_and_labels_seq_change():
    record = make_record(cp=2, encoded_gpus=2)
    result = plan_for(record, LLAMA3_8B, 16, seq=131072)
    assert result.plan.cp >= 8
    assert 131072 % (2 * result.plan.cp) == 0
    seq = keys(result)["dataset.seq_length"]
    assert seq.value == 131072 and seq.change_class == "convergence"
    assert keys(result)["model.seq_length"].value == 131072
    assert_consistent(result, LLAMA3_8B, 16)


def test_target_cp():
    assert target_cp(8192, 2, 8192) == 2
    assert target_cp(8192, 1, 4096) == 1
    assert target_cp(8192, 1, 32768) == 4
    assert target_cp(131072, 8, 262144) == 16


def test_choose_vp():
    assert choose_vp(80, 4, 5, 4) == 5
    assert choose_vp(80, 8, 5, 4) == 2
    assert choose_vp(32, 1, None, 1) is None
    assert choose_vp(8, 8, None, 1) is None
    # Llama 3.1 405B's recipe counts the embedding and the loss as layers: 126 + 2 splits over PP8·VP2.
    assert choose_vp(126, 8, 2, 8) is None
    assert choose_vp(126, 8, 2, 8, split_extra=2) == 2


def test_the_405b_recipe_keeps_its_interleaving_on_more_gpus():
    """v0.6.0 llama31_405b_pretrain_256gpu_h100_bf16_config: TP8 PP8 VP2 CP4 with the account_for_* split
    flags. On 1,024 GPUs only DP grows; VP 2 stays (it was dropped as "it needs PP > 1" with PP 8)."""
    from assistant.catalog import load_catalog
    from assistant.models import load_model_arch

    record = next(
        r for r in load_catalog("0.6.0").recipes if r.name == "llama31_405b_pretrain_256gpu_h100_bf16_config"
    )
    arch = load_model_arch("meta-llama/Meta-Llama-3.1-405B", kb=knowledge_base())
    result = plan_for(record, arch, 1024)
    assert (result.plan.pp, result.plan.vp, result.plan.dp) == (8, 2, 4)
    assert "model.virtual_pipeline_model_parallel_size" not in keys(result)
    assert_consistent(result, arch, 1024)


def test_moe_raises_ep_before_tp():
    record = make_record(
        name="qwen3_30b_a3b_pretrain_config",
        family="qwen3_moe",
        hf_model_id="Qwen/Qwen3-30B-A3B",
        tp=1,
        pp=1,
        cp=1,
        ep=4,
        seq=8192,
        gbs=1024,
    )
    result = plan_for(record, QWEN3_30B_A3B, 16, seq=4096)
    assert result.plan.tp == 1 and result.plan.ep >= 8  # EP raised (as far as the memory estimate needs)
    assert keys(result)["model.expert_model_parallel_size"].change_class == "execution"
    assert_consistent(result, QWEN3_30B_A3B, 16)


def test_moe_peft_on_four_gpus_keeps_ep_within_the_world():
    record = make_record(
        name="qwen3_30b_a3b_peft_config",
        family="qwen3_moe",
        hf_model_id="Qwen/Qwen3-30B-A3B",
        mode="peft",
        peft="lora",
        tp=1,
        pp=1,
        cp=1,
        ep=8,
        seq=4096,
        gbs=32,
    )
    result = plan_for(record, QWEN3_30B_A3B, 4)
    assert result.plan.tp == 1 and result.plan.ep == 4
    assert_consistent(result, QWEN3_30B_A3B, 4)


def test_finetune_cp_on_older_versions_sets_loss_overrides():
    record = make_record(name="llama3_8b_sft_config", mode="sft", version="0.5.1", cp=1, seq=8192)
    result = plan_for(record, LLAMA3_8B, 8, seq=65536)
    assert result.plan.cp > 1
    found = keys(result)
    assert found["model.calculate_per_token_loss"].value is True
    assert found["ddp.average_in_collective"].value is False
    assert_consistent(result, LLAMA3_8B, 8)


def test_user_pinned_values_are_kept():
    record = make_record(cp=2, encoded_gpus=2)
    result = plan_for(record, LLAMA3_8B, 16, user_overrides={"model.tensor_model_parallel_size": 2})
    assert result.plan.tp == 2
    assert keys(result)["model.tensor_model_parallel_size"].reason == "Requested by the user."


def test_impossible_layout_returns_no_plan_and_says_why():
    record = make_record(
        name="deepseek_v3_pretrain_config",
        family="deepseek",
        tp=2,
        pp=16,
        ep=64,
        cp=1,
        seq=4096,
        gbs=8192,
        encoded_gpus=1024,
    )
    result = plan_for(record, DEEPSEEK_LIKE, 8)
    assert result.plan is None
    assert [item.id for item in result.findings] == ["does-not-fit"]
    assert result.findings[0].message_zh


def test_unknown_architecture_gives_no_plan():
    result = plan_for(make_record(), None, 8)
    assert result.plan is None and result.findings[0].id == "arch-unknown"


def test_packed_recipe_keeps_mbs_one():
    record = make_record(name="llama3_8b_sft_config", mode="sft", mbs=4, gbs=128, cp=1, packed_sequence=True)
    result = plan_for(record, LLAMA3_8B, 8)
    assert result.plan.mbs == 1
    assert keys(result)["train.micro_batch_size"].change_class == "execution"


def test_recipe_pipeline_layout_keeps_its_pp():
    record = make_record(
        name="deepseek_v3_pretrain_config",
        family="deepseek",
        hf_model_id="deepseek-ai/DeepSeek-V3",
        tp=2,
        pp=16,
        ep=64,
        etp=1,
        sp=True,
        cp=1,
        seq=4096,
        gbs=4096,
        encoded_gpus=1024,
        fields={"model.pipeline_model_parallel_layout": "Et|(tt|)*30mL"},
    )
    full = plan_for(record, DEEPSEEK_LIKE, 1024)
    assert (full.plan.tp, full.plan.pp, full.plan.ep) == (2, 16, 64) and full.overrides == []
    half = plan_for(record, DEEPSEEK_LIKE, 512)
    assert half.plan.pp == 16 and half.plan.ep == 32
    assert_consistent(half, DEEPSEEK_LIKE, 512)


def test_the_first_layout_the_memory_estimator_accepts_wins():
    """DeepSeek-V3's 1024-GPU H100 benchmark recipe moved to 256 H100s: the coarse heuristic ranks a TP2
    layout first that the estimator puts at ~110 GB; the resize takes the first valid layout that fits."""
    from assistant.catalog import load_catalog
    from assistant.models import load_model_arch

    record = next(
        r for r in load_catalog("0.6.0").recipes if r.name == "deepseek_v3_pretrain_1024gpu_h100_bf16_config"
    )
    arch = load_model_arch(record.hf_model_id, kb=knowledge_base())
    result = plan_for(record, arch, 256)
    assert_consistent(result, arch, 256)
    assert result.fit.status == "fits"
    assert not any(item.id == "fit-oom" for item in result.findings)


def test_unknown_architecture_runs_unchanged_on_the_gpus_it_is_written_for():
    record = make_record("wan_1_3b_pretrain_8gpu_h100_bf16_config", hf_model_id=None, family="wan", cp=8,
                         seq=1024, gbs=2, encoded_gpus=8, gpu_type="h100")  # fmt: skip
    result = plan_for(record, None, 8)
    plan = result.plan
    assert plan is not None and (plan.tp, plan.pp, plan.cp, plan.dp, plan.ga) == (1, 1, 8, 1, 2)
    assert [f.id for f in result.findings] == ["arch-unknown-validated"]
    assert result.findings[0].severity == "warning" and not result.overrides
    # Anything else would be unchecked: more GPUs, or a layout the user changes.
    more = plan_for(record, None, 16)
    assert more.plan is None and "runs unchanged on 8 GPUs" in more.findings[0].message
    changed = plan_for(record, None, 8, user_overrides={"model.context_parallel_size": 4})
    assert changed.plan is None and changed.findings[0].id == "arch-unknown"
    assert plan_for(record, None, 8, gpu="a100").plan is None  # named for H100


def test_a_benchmark_recipe_on_another_world_size_takes_the_launchers_weak_scaled_batch():
    """From v0.6.0, run_recipe.py keeps a flat benchmark recipe's samples per DP rank on another world
    size (GBS 128 at DP 16 becomes 32 at DP 4); v0.5.1 has no such scaling, and a GBS the user gives turns
    it off."""
    record = make_record("llama3_8b_pretrain_16gpu_h100_bf16_config", kind="benchmark", gbs=128,
                         encoded_gpus=16, gpu_type="h100", precision="bf16")  # fmt: skip
    scaled = plan_for(record, LLAMA3_8B, 8)
    assert scaled.plan.gbs == 128 * scaled.plan.dp // 16 and scaled.plan.ga == 8  # 8 samples per DP rank
    assert "train.global_batch_size" not in keys(scaled)  # the launcher sets it
    assert_consistent(scaled, LLAMA3_8B, 8)
    own = plan_for(record, LLAMA3_8B, 16)
    assert own.plan.gbs == 128 and own.overrides == []
    older = plan_for(record.model_copy(update={"version": "0.5.1"}), LLAMA3_8B, 8, version="0.5.1")
    assert older.plan.gbs == 128
    pinned = plan_for(record, LLAMA3_8B, 8, user_overrides={"train.global_batch_size": 128})
    assert pinned.plan.gbs == 128
    library = plan_for(record.model_copy(update={"kind": "library"}), LLAMA3_8B, 8)
    assert library.plan.gbs == 128


def test_a_weak_scaled_batch_that_is_not_whole_is_given_explicitly():
    """GBS 12 at DP 8 has no whole GBS at DP 3: the launcher would stop, so the plan passes the GBS."""
    record = make_record("llama3_8b_pretrain_8gpu_h100_bf16_config", kind="benchmark", tp=2, gbs=12,
                         encoded_gpus=16, gpu_type="h100", precision="bf16")  # fmt: skip
    weak = weak_scaling(record, "0.6.0", {})
    assert weak is not None and (weak.gbs, weak.dp, weak.at(4), weak.at(3)) == (12, 8, 6, None)
    result = plan_for(record, LLAMA3_8B, 6, user_overrides={"model.tensor_model_parallel_size": 2})
    assert result.plan.dp == 3
    gbs = keys(result)["train.global_batch_size"]
    assert gbs.value == result.plan.gbs and "weak scaling" in gbs.reason
    assert_consistent(result, LLAMA3_8B, 6)


def test_a_weak_scaled_batch_that_mbs_dp_does_not_divide_says_so():
    """A recipe whose own GBS leaves 1.5 samples per DP rank (12 over DP 8) keeps that ratio when
    weak-scaled: 6 at DP 4 is whole but not divisible by MBS·DP, so the plan gives a GBS and says why."""
    record = make_record("llama3_8b_pretrain_8gpu_h100_bf16_config", kind="benchmark", gbs=12, seq=1024,
                         encoded_gpus=8, gpu_type="h100", precision="bf16")  # fmt: skip
    pinned = {"model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1}
    result = plan_for(record, LLAMA3_8B, 4, user_overrides=pinned)
    assert result.plan.dp == 4 and result.plan.gbs % 4 == 0
    gbs = keys(result)["train.global_batch_size"]
    assert "weak-scale the recipe's GBS 12 to 6 at DP 4" in gbs.reason
    assert "在 DP 4 上弱扩展为 6" in gbs.reason_zh
    assert_consistent(result, LLAMA3_8B, 4)
