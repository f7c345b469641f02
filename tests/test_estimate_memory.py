"""Memory estimator: the breakdown moves the right way, verdicts are quantified, measured peaks are met."""

from __future__ import annotations

import itertools
import json

import pytest

from assistant.errors import UserError
from assistant.estimate.features import RunFeatures
from assistant.estimate.hardware import GIB, load_hardware, resolve_gpu
from assistant.estimate.memory import estimate_memory, memory_floor
from assistant.estimate.run import RunSettings
from assistant.kb import knowledge_base
from assistant.records import Plan
from assistant.settings import KNOWLEDGE_BASE
from tests.archs import DEEPSEEK_V3, LLAMA3_8B, LLAMA3_70B, NEMOTRON_3_NANO, QWEN3_30B

HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))
H100 = HW["h100"]


def plan(gpus: int, tp: int = 1, pp: int = 1, vp: int | None = None, cp: int = 1, ep: int = 1, mbs: int = 1,
         gbs: int = 64) -> Plan:  # fmt: skip
    dp = gpus // (tp * pp * cp)
    return Plan(tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, etp=1 if ep > 1 else None, sp=tp > 1, dp=dp, mbs=mbs,
                gbs=gbs, ga=gbs // (mbs * dp), num_gpus=gpus)  # fmt: skip


def test_more_tp_means_fewer_params_per_gpu() -> None:
    sizes = [
        estimate_memory(LLAMA3_70B, plan(8, tp=t), H100, RunSettings(seq_length=4096)).breakdown.params
        for t in (1, 2, 4, 8)
    ]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] / sizes[-1] == pytest.approx(8, rel=0.05)


def test_recompute_cuts_activations() -> None:
    def activations(recompute: str | None) -> float:
        est = estimate_memory(
            LLAMA3_8B, plan(8, tp=2), H100, RunSettings(seq_length=8192, recompute=recompute)
        )
        return est.breakdown.activations

    none, selective, full = activations(None), activations("selective"), activations("full")
    assert full < selective <= none
    assert full < none / 5


def test_peft_freezes_the_base() -> None:
    full = estimate_memory(LLAMA3_8B, plan(1, gbs=8), H100, RunSettings(seq_length=4096, mode="pretrain"))
    lora = estimate_memory(LLAMA3_8B, plan(1, gbs=8), H100, RunSettings(seq_length=4096, mode="peft"))
    assert lora.breakdown.optimizer < 0.02 * full.breakdown.optimizer
    assert lora.breakdown.grads < 0.02 * full.breakdown.grads
    assert lora.breakdown.params >= full.breakdown.params  # the frozen base is still there, plus adapters


def test_distributed_optimizer_shards_over_dp() -> None:
    small = estimate_memory(LLAMA3_8B, plan(8, tp=8, gbs=8), H100, RunSettings(seq_length=4096))
    large = estimate_memory(LLAMA3_8B, plan(64, tp=8, gbs=64), H100, RunSettings(seq_length=4096))
    assert large.breakdown.optimizer == pytest.approx(small.breakdown.optimizer / 8, rel=0.01)
    plain = estimate_memory(
        LLAMA3_8B, plan(64, tp=8, gbs=64), H100, RunSettings(seq_length=4096, distributed_optimizer=False)
    )
    assert plain.breakdown.optimizer > 7 * large.breakdown.optimizer


def test_bf16_gradients_halve_the_gradient_buffer() -> None:
    fp32 = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096))
    bf16 = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096, grad_reduce_in_fp32=False))
    assert bf16.breakdown.grads == pytest.approx(fp32.breakdown.grads / 2)


def test_fp8_saves_gemm_inputs_in_one_byte() -> None:
    bf16 = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096, precision="bf16"))
    fp8 = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096, precision="fp8_cs"))
    assert fp8.breakdown.activations < bf16.breakdown.activations


def test_context_parallel_splits_activations() -> None:
    one = estimate_memory(LLAMA3_8B, plan(8, cp=1), H100, RunSettings(seq_length=8192))
    two = estimate_memory(LLAMA3_8B, plan(8, cp=2), H100, RunSettings(seq_length=8192))
    assert two.breakdown.activations == pytest.approx(one.breakdown.activations / 2, rel=0.02)


def test_expert_parallel_shards_experts() -> None:
    sizes = [
        estimate_memory(QWEN3_30B, plan(8, ep=e, gbs=64), H100, RunSettings(seq_length=4096)).breakdown.params
        for e in (1, 2, 8)
    ]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] > 4 * sizes[-1]


def test_llama3_70b_pretrain_on_8_h100_does_not_fit() -> None:
    """Even TP=8 with full recompute needs roughly twice an H100: a quantified no."""
    est = estimate_memory(
        LLAMA3_70B,
        plan(8, tp=8, gbs=128),
        H100,
        RunSettings(seq_length=8192, recompute="full"),
        overheads=knowledge_base().memory_overheads,
    )
    assert not est.fits
    assert est.margin_bytes < -60 * GIB
    assert est.margin_bytes == pytest.approx(est.usable_bytes - est.peak_bytes)


def test_lora_llama3_8b_on_one_h100_fits() -> None:
    est = estimate_memory(
        LLAMA3_8B,
        plan(1, gbs=8),
        H100,
        RunSettings(seq_length=4096, mode="peft"),
        overheads=knowledge_base().memory_overheads,
    )
    assert est.fits
    assert est.margin_bytes > 10 * GIB
    assert est.usable_bytes == pytest.approx(79.1 * GIB)


def test_peaks_follow_the_documented_measurements() -> None:
    """Bridge's Llama3-70B SFT on 32 H100 (TP4 PP4 VPP5, FP8-CS, bf16 grads, mlp recompute): 55.6 GB
    measured (skills/nemo-mbridge-perf-activation-recompute/card.yaml); Megatron-LM's gpt3_7b_tp4_pp1
    memory_speed test: 54.2 GiB on A100."""
    ov = knowledge_base().memory_overheads
    sft = estimate_memory(
        LLAMA3_70B,
        plan(32, tp=4, pp=4, vp=5, gbs=32),
        H100,
        RunSettings(
            seq_length=4096,
            mode="sft",
            precision="fp8_cs",
            recompute="selective",
            recompute_modules=["mlp"],
            grad_reduce_in_fp32=False,
        ),
        overheads=ov,
        stage="first",
    )
    assert sft.allocated_bytes == pytest.approx(55.6e9, rel=0.15)
    gpt7b = LLAMA3_8B.model_copy(
        update={"vocab_size": 131073, "gated_linear_unit": False, "ffn_hidden_size": None}
    )
    test_plan = plan(8, tp=4, mbs=2, gbs=8).model_copy(update={"sp": False})
    megatron = estimate_memory(
        gpt7b, test_plan, HW["a100"], RunSettings(seq_length=8192), overheads=ov, stage="last"
    )
    assert megatron.allocated_bytes / GIB == pytest.approx(54.2, rel=0.15)


def test_bad_layouts_are_user_errors() -> None:
    with pytest.raises(UserError, match="not a multiple"):
        estimate_memory(
            LLAMA3_8B, plan(8, tp=8).model_copy(update={"tp": 3}), H100, RunSettings(seq_length=4096)
        )
    with pytest.raises(UserError, match="not divisible"):
        estimate_memory(LLAMA3_8B, plan(8).model_copy(update={"gbs": 12}), H100, RunSettings(seq_length=4096))
    with pytest.raises(UserError, match="unknown precision"):
        estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096, precision="int3"))


def test_gpu_aliases_and_capacities() -> None:
    assert resolve_gpu(HW, "DGX-GB200").key == "gb200"
    assert resolve_gpu(HW, "a100-40g").usable_bytes < resolve_gpu(HW, "a100").usable_bytes
    assert HW["gb200"].nvlink_domain == 72 and HW["h100"].nvlink_domain == 8
    with pytest.raises(UserError, match="unknown GPU type"):
        resolve_gpu(HW, "tpu-v5")
    with pytest.raises(UserError, match="FP8"):
        HW["a100"].peak_flops("fp8")


def test_hybrid_models_are_refused_not_guessed() -> None:
    hybrid = LLAMA3_8B.model_copy(update={"is_hybrid": True})
    with pytest.raises(UserError, match="Mamba"):
        estimate_memory(hybrid, plan(8), H100, RunSettings(seq_length=4096))


def test_tight_margins_are_flagged() -> None:
    roomy = estimate_memory(LLAMA3_8B, plan(1, gbs=8), H100, RunSettings(seq_length=4096, mode="peft"))
    assert not roomy.tight
    for seq in range(2048, 65536, 1024):  # walk up to the edge: somewhere the margin becomes tight
        est = estimate_memory(LLAMA3_8B, plan(1, gbs=8), H100, RunSettings(seq_length=seq, mode="peft"))
        if est.tight:
            assert abs(est.margin_bytes) < 0.1 * est.usable_bytes
            break
    else:
        pytest.fail("no sequence length gave a tight margin")


def test_a_mamba_hybrid_is_estimated_layer_by_layer() -> None:
    """Nemotron 3 Nano with EP8: the 128 experts of 23 MoE layers dominate. On 8 GPUs the expert-parallel
    group is the whole world, so nothing shards the experts' optimizer state; 16 GPUs halve it (the recipe's
    own note says its 16-GPU workload keeps the optimizer sharded)."""
    from tests.archs import NEMOTRON_3_NANO

    def peak(gpus: int, tp: int = 1) -> object:
        layout = Plan.sized(
            num_gpus=gpus, tp=tp, pp=1, cp=1, mbs=1, gbs=1024, vp=None, ep=8, etp=1, sp=tp > 1
        )
        return estimate_memory(
            NEMOTRON_3_NANO,
            layout,
            H100,
            RunSettings(
                seq_length=8192,
                grad_reduce_in_fp32=False,
                recompute="selective",
                recompute_modules=["moe", "layernorm"],
            ),
        )

    eight, sixteen = peak(8), peak(16)
    assert eight.breakdown.optimizer == pytest.approx(2 * sixteen.breakdown.optimizer, rel=0.1)
    assert not eight.fits and sixteen.fits
    # Tensor parallelism splits the Mamba mixers, attention and activations, not the experts.
    assert peak(16, tp=2).breakdown.activations < 0.6 * sixteen.breakdown.activations


def test_the_precision_aware_optimizer_keeps_the_dtypes_the_recipe_names() -> None:
    """Nemotron 3 Super's H100 recipe keeps fp16 master weights and bf16 moments: 6 bytes per parameter,
    half of the fp32 Adam state."""
    from assistant.rules.fit import optimizer_state_bytes

    named = {
        "optimizer.use_precision_aware_optimizer": True,
        "optimizer.main_params_dtype": "torch.float16",
        "optimizer.exp_avg_dtype": "torch.bfloat16",
        "optimizer.exp_avg_sq_dtype": "torch.bfloat16",
    }
    assert optimizer_state_bytes(named) == 6.0
    assert optimizer_state_bytes({"optimizer.use_precision_aware_optimizer": True}) == 12.0  # fp32 defaults
    assert optimizer_state_bytes({}) is None
    six = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096, optimizer_bytes=6.0))
    twelve = estimate_memory(LLAMA3_8B, plan(8), H100, RunSettings(seq_length=4096))
    assert six.breakdown.optimizer == pytest.approx(twelve.breakdown.optimizer / 2)


def test_te_cross_entropy_keeps_the_logits_in_bf16() -> None:
    """Transformer Engine's fused cross-entropy works in place in the bf16 logits (2 bytes an element);
    Megatron-Core's own paths cast them to fp32 first, which the fitted constant covers."""

    def logits(te: bool) -> float:
        est = estimate_memory(
            LLAMA3_8B, plan(8), H100, RunSettings(seq_length=8192, features=RunFeatures(te_cross_entropy=te))
        )
        return est.breakdown.logits

    padded_vocab = 128_256  # Llama 3's vocabulary is already a multiple of 128
    assert logits(True) == pytest.approx(8192 * padded_vocab * 2)
    assert logits(False) > 2.5 * logits(True)


def test_rubin_memory_is_estimated_and_its_speed_is_not() -> None:
    """No dense Rubin peak is public: the estimate says so instead of inventing a speed."""
    from ui.commands.estimate import parse_args, run_estimate

    args = parse_args(
        ["--recipe", "llama3_8b_pretrain_8gpu_vr200_bf16_config", "--gpus", "8", "--gpu-type", "vr200"]
    )
    result = run_estimate(args)
    assert result["memory"]["usable_bytes"] == 270 * GIB
    assert result["throughput"] is None and "not estimated" in result["throughput_error"]


def test_lora_saves_only_what_a_frozen_base_needs() -> None:
    """A frozen linear keeps no input (Transformer Engine saves it only for a weight gradient); the adapters
    keep the inputs of the layers they wrap (in bf16). With adapters on all four linear layers a bf16 run
    saves what full SFT saves; with fewer targets, less."""

    def activations(mode: str, targets: list[str] | None = None) -> float:
        est = estimate_memory(
            LLAMA3_8B,
            plan(8),
            H100,
            RunSettings(seq_length=4096, mode=mode, features=RunFeatures(lora_targets=targets)),
        )
        return est.breakdown.activations

    qkv_only = activations("peft", ["linear_qkv"])
    all_four = activations("peft")
    assert qkv_only < 0.8 * all_four
    assert all_four == pytest.approx(activations("sft"))


def test_lora_rank_and_targets_set_the_adapter_state() -> None:
    def adapter_state(rank: int, targets: list[str] | None) -> float:
        est = estimate_memory(
            LLAMA3_8B,
            plan(8),
            H100,
            RunSettings(
                seq_length=4096, mode="peft", lora_rank=rank, features=RunFeatures(lora_targets=targets)
            ),
        )
        return est.breakdown.grads + est.breakdown.optimizer

    assert adapter_state(32, None) == pytest.approx(2 * adapter_state(16, None))
    assert adapter_state(16, ["linear_qkv"]) < adapter_state(16, None) / 3


def test_uniform_full_recompute_keeps_one_input_per_group() -> None:
    """Megatron's uniform method checkpoints groups of recompute_num_layers layers; block recomputes the
    first recompute_num_layers layers of each chunk and keeps the others whole."""

    def activations(method: str, layers: int) -> float:
        est = estimate_memory(
            LLAMA3_8B,
            plan(8, pp=2, gbs=64),
            H100,
            RunSettings(
                seq_length=4096, recompute="full", recompute_method=method, recompute_num_layers=layers
            ),
        )
        return est.breakdown.activations

    block = [activations("block", n) for n in (4, 2, 1)]
    assert activations("uniform", 1) < block[0] < block[1] < block[2]


def test_fp8_presets_store_the_weights_in_fp8() -> None:
    """Bridge's FP8 and MXFP8 presets set fp8_param_gather (one byte per weight, no cached copy); NVFP4 and
    BF16 keep bf16 weights."""
    assert knowledge_base().preset_stores_fp8_weights("0.6.0", "bf16_with_fp8_current_scaling_mixed")
    assert knowledge_base().preset_stores_fp8_weights("0.6.0", "bf16_with_mxfp8_mixed")
    assert not knowledge_base().preset_stores_fp8_weights("0.6.0", "bf16_with_nvfp4_mixed")
    assert not knowledge_base().preset_stores_fp8_weights("0.6.0", "bf16_mixed")


def test_nvfp4_presets_store_the_weights_in_nvfp4() -> None:
    """Bridge's NVFP4 presets set fp4_param_gather from 0.5.1 on (0.3.1's did not)."""
    assert knowledge_base().preset_stores_fp4_weights("0.6.0", "bf16_with_nvfp4_mixed")
    assert knowledge_base().preset_stores_fp4_weights("main", "nemotron_3_super_bf16_with_nvfp4_mixed")
    assert not knowledge_base().preset_stores_fp4_weights("0.3.1", "bf16_with_nvfp4_mixed")
    assert not knowledge_base().preset_stores_fp4_weights("0.6.0", "bf16_with_mxfp8_mixed")


def test_nvfp4_weights_and_saved_inputs_take_their_block_scaled_sizes() -> None:
    """An NVFP4 weight holds 4-bit values and an E4M3 scale per 16, in both orientations (1.125 bytes); a
    saved GEMM input keeps one orientation (0.5625 bytes), so NVFP4 saves less than FP8 (1 byte)."""
    b200 = HW["b200"]
    layout = plan(8, tp=8, mbs=1, gbs=8)

    def estimate(precision: str, **settings: bool):
        return estimate_memory(LLAMA3_70B, layout, b200, RunSettings(seq_length=8192, precision=precision,
                                                                     **settings))  # fmt: skip

    bf16, fp8, fp4 = estimate("bf16"), estimate("fp8_cs"), estimate("nvfp4")
    fp4_held = estimate("nvfp4", fp4_param=True)
    weights = bf16.breakdown.params / 2  # weights per GPU (norms, which are not quantized, are < 0.1%)
    assert fp4.breakdown.params == pytest.approx(
        weights * (2 + 1.125), rel=1e-3
    )  # bf16 weights + cached NVFP4 copy
    assert fp8.breakdown.params == pytest.approx(weights * (2 + 1.0), rel=1e-3)
    assert fp4_held.breakdown.params == pytest.approx(weights * 1.125)
    assert fp4_held.breakdown.grads == bf16.breakdown.grads  # gradients stay in the main-grad dtype
    assert bf16.breakdown.activations > fp8.breakdown.activations > fp4.breakdown.activations


def test_gated_deltanet_hybrids_are_estimated_with_their_own_mixers() -> None:
    """Qwen3-Next and Qwen3.5 put a Gated DeltaNet mixer in three of every four layers (Megatron's
    linear_attention_freq); the parameter count from those mixers matches the checkpoint's."""
    from assistant.estimate.shapes import dims_of, layer_kinds, total_params
    from assistant.models import load_model_arch

    arch = load_model_arch("Qwen/Qwen3-Next-80B-A3B-Instruct", kb=knowledge_base())
    assert layer_kinds(arch)[:4] == "YYYX" and layer_kinds(arch).count("X") == 12
    assert total_params(dims_of(arch)) == pytest.approx(arch.total_params, rel=1e-6)
    est = estimate_memory(arch, plan(16, tp=2, ep=8, gbs=64), HW["gb200"], RunSettings(seq_length=4096))
    assert est.breakdown.activations > 0 and est.peak_bytes > est.breakdown.params


def test_muon_keeps_one_momentum_and_its_layer_wise_optimizer_shards_it() -> None:
    """Kimi K2's perf recipes run dist_muon with Megatron's distributed optimizer off: the layer-wise
    optimizer still splits the state over the data-parallel ranks, and Muon keeps one moment, not two."""
    from assistant.rules.fit import optimizer_state_bytes, shards_optimizer_state

    values = {"optimizer.optimizer": "dist_muon", "ddp.use_distributed_optimizer": False}
    assert optimizer_state_bytes(values) == 8.0 and shards_optimizer_state(values)
    assert optimizer_state_bytes({"optimizer.optimizer": "adam"}) is None
    assert not shards_optimizer_state({"ddp.use_distributed_optimizer": False})


def test_a_moe_layer_saves_the_expert_inputs_not_the_combine_input() -> None:
    """Megatron-Core applies the router probabilities inside the expert activation (permuted_probs in
    experts.py) and unpermutes without them, so the expert outputs are not saved. Qwen3-30B-A3B layer, per
    token, bf16, TP 1: attention (norm input + qkv input, q/k/v, attention output, softmax statistics) and
    MoE (norm input + router input, fp32 router logits and probabilities, top-8 permuted inputs, fc1 outputs
    and activation outputs), each element 2 bytes."""
    from assistant.estimate.memory import layer_activation_bytes

    h, q, kv, k, ffn, experts = 2048, 32 * 128, 4 * 128, 8, 768, 128
    attention = 2 * ((h + q + 2 * kv + 2 * 32) + (h + q))
    moe = 2 * ((h + 2 * experts + k * 2 * ffn) + (h + k * h + k * ffn))
    per_token = layer_activation_bytes(QWEN3_30B, plan(8, ep=8), seq_length=4096) / 4096
    assert per_token == pytest.approx(attention + moe)


def test_the_recipe_pipeline_split_sets_the_stage_layers() -> None:
    """num_layers_in_first/last_pipeline_stage and an explicit pipeline_model_parallel_layout fix the layers
    of each model chunk (Megatron's get_num_layers_to_build, PipelineParallelLayerLayout: chunk vp·pp + rank);
    the first stage then holds what the recipe gives it."""
    from assistant.estimate.memory import pipeline_chunks, stage_layers
    from assistant.estimate.run import PipelineSplit

    assert pipeline_chunks(94, 8, first=10, last=12) == (10, 12, 12, 12, 12, 12, 12, 12)
    assert pipeline_chunks(48, 4, 2, first=6) == (3, 7, 7, 7, 3, 7, 7, 7)
    layout = [["embedding", "decoder", "decoder"], ["decoder"], ["decoder", "decoder"], ["decoder", "loss"]]
    assert pipeline_chunks(6, 2, 2, layout=layout) == (2, 1, 2, 1)
    assert stage_layers("D" * 6, 2, 2, 0, (2, 1, 2, 1)).layers == 4
    assert pipeline_chunks(94, 8, first=10, last=13) is None  # 71 layers do not split over 6 stages

    run = RunSettings(seq_length=4096)
    even = estimate_memory(QWEN3_30B, plan(8, pp=8, ep=1, gbs=64), H100, run, stage="first")
    split = PipelineSplit(8, 1, pipeline_chunks(48, 8, first=3, last=9))
    fewer = estimate_memory(QWEN3_30B, plan(8, pp=8, ep=1, gbs=64), H100, run.but(pipeline_split=split),
                            stage="first")  # fmt: skip
    assert fewer.breakdown.activations == pytest.approx(even.breakdown.activations * 3 / 6, rel=0.02)


def test_a_repeated_mtp_block_keeps_one_set_of_weights() -> None:
    """mtp_use_repeated_layer builds one MTP layer and runs it mtp_num_layers times (gpt_layer_specs.py):
    the weights of one block, the activations of every pass."""
    from assistant.models import load_model_arch

    arch = load_model_arch("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", kb=knowledge_base())
    run = RunSettings(seq_length=8192, features=RunFeatures(mtp_layers=2))
    layout = plan(16, ep=8, gbs=512)
    separate = estimate_memory(arch, layout, H100, run)
    reused = RunFeatures(mtp_layers=2, mtp_repeated=True)
    repeated = estimate_memory(arch, layout, H100, run.but(features=reused))
    assert repeated.breakdown.activations == pytest.approx(separate.breakdown.activations)
    once = estimate_memory(arch, layout, H100, run.but(features=RunFeatures(mtp_layers=1)))
    assert repeated.breakdown.params == pytest.approx(once.breakdown.params)
    assert repeated.breakdown.params < separate.breakdown.params


@pytest.mark.parametrize("arch", [LLAMA3_8B, LLAMA3_70B, QWEN3_30B, DEEPSEEK_V3, NEMOTRON_3_NANO],
                         ids=lambda a: a.hf_model_id)  # fmt: skip
def test_the_pruning_floor_never_exceeds_the_estimate(arch) -> None:
    """Resize prunes candidate layouts with memory_floor: it must stay under the full estimate's peak on
    every layout, or resize would discard a layout the estimator accepts."""
    experts = arch.num_moe_experts or 1
    ratios: list[float] = []
    for gpus, tp, pp, ep, mbs, recompute, mode in itertools.product(
        (8, 64), (1, 2, 8), (1, 2, 4), (1, 8), (1, 4), (None, "selective", "full"), ("pretrain", "peft")
    ):
        if ep > experts or gpus % (tp * pp) or gpus % (pp * ep) or arch.num_layers % pp:
            continue
        layout = plan(gpus, tp=tp, pp=pp, ep=ep, mbs=mbs, gbs=mbs * gpus // (tp * pp) * 4)
        for run in (
            RunSettings(seq_length=4096, recompute=recompute, mode=mode, grad_reduce_in_fp32=False),
            RunSettings(seq_length=4096, recompute=recompute, mode=mode, distributed_optimizer=False),
        ):
            peak = estimate_memory(arch, layout, H100, run).peak_bytes
            floor = memory_floor(arch, tp=tp, pp=pp, cp=1, ep=ep, etp=layout.etp or tp, world=gpus,
                                 micro_batch_size=mbs, microbatches=layout.ga, run=run)  # fmt: skip
            assert floor <= peak, (gpus, tp, pp, ep, mbs, recompute, mode, run.distributed_optimizer)
            ratios.append(floor / peak)
    assert len(ratios) > 20
    assert sorted(ratios)[len(ratios) // 2] > 0.5  # and it prunes: the median floor is half the peak or more


def test_lora_activations_follow_the_selective_recompute_modules() -> None:
    """A frozen base keeps fewer tensors than full training, and selective recompute drops from it what it
    drops in full training: the norm outputs, a checkpointed MoE's inner tensors, the expert activation."""

    def activations(modules: list[str] | None) -> float:
        run = RunSettings(seq_length=4096, mode="peft", recompute="selective" if modules else None,
                          recompute_modules=modules)  # fmt: skip
        return estimate_memory(QWEN3_30B, plan(8, ep=8), H100, run).breakdown.activations

    kept = [activations(m) for m in (None, ["moe_act"], ["moe_act", "layernorm"], ["moe", "layernorm"])]
    assert kept == sorted(kept, reverse=True) and len(set(kept)) == 4
