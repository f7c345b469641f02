"""Wan diffusion transformers: records that count the published parameters, and a memory estimate."""

from __future__ import annotations

import pytest

from assistant.catalog import load_catalog
from assistant.errors import UserError
from assistant.estimate.dit import dit_total_params, micro_batch_tokens
from assistant.estimate.shapes import dims_of
from assistant.kb import knowledge_base
from assistant.models import load_model_arch, recipe_arch
from benchmarks.bench_fit_oracle import estimate_record

WAN_14B = "Wan-AI/Wan2.1-T2V-14B-Diffusers"
WAN_1_3B = "Wan-AI/Wan2.1-T2V-1.3B-Diffusers"


@pytest.mark.parametrize(("model", "published"), [(WAN_14B, 14_288_491_584), (WAN_1_3B, 1_418_996_800)])
def test_wan_records_count_the_published_parameters(model, published):
    """Every weight and bias the Wan layer spec and WanModel build, against the released DiT checkpoints."""
    arch = load_model_arch(model, kb=knowledge_base())
    assert arch.diffusion is not None
    assert dit_total_params(arch) == published == arch.total_params


def _record(name: str, version: str = "main"):
    return next(r for r in load_catalog(version).recipes if r.name == name)


def test_a_wan_recipe_resolves_to_its_diffusion_record_only():
    arch = recipe_arch(_record("wan_14b_pretrain_16gpu_gb200_bf16_config"), knowledge_base())
    assert arch is not None and arch.hf_model_id == WAN_14B
    assert recipe_arch(_record("wan_1_3b_sft_config"), knowledge_base()).hf_model_id == WAN_1_3B
    with pytest.raises(UserError, match="diffusion transformer"):
        dims_of(arch)  # the language-model formulas refuse it with the reason


def test_a_micro_batch_packs_whole_samples():
    dd = load_model_arch(WAN_14B, kb=knowledge_base()).diffusion
    # The recipes keep dataset.path None: mock data builds one packed batch of number_packed_samples (1)
    # samples whatever seq_length says; a default sample is 24 x 52 x 30 patches.
    assert micro_batch_tokens(dd, 1024, {})[0] == 37_440
    assert micro_batch_tokens(dd, 4096, {"dataset.F_latents": 1})[0] == 1_560  # text-to-image, one frame
    assert micro_batch_tokens(dd, 1024, {"dataset.number_packed_samples": 2})[0] == 74_880
    # Real data packs whole samples within seq_length: two 1,560-patch images in 4,096 tokens.
    real = {"dataset.F_latents": 1, "dataset.path": "/data/wds"}
    assert micro_batch_tokens(dd, 4096, real)[0] == 3_120
    assert micro_batch_tokens(dd, 1024, {"dataset.path": "/data/wds"})[0] == 37_440  # a long sample, whole


def test_wan_benchmark_recipe_is_estimated_on_its_own_gpus():
    outcome = estimate_record(_record("wan_14b_pretrain_16gpu_gb200_bf16_config"), "main")
    assert outcome["status"] == "fits"
    arch = load_model_arch(WAN_14B, kb=knowledge_base())
    # TP 1, PP 1: the GPU holds every bf16 weight and its gradient, in bf16: the recipe sets
    # ddp.grad_reduce_in_fp32=True but its precision config False, and Bridge copies the latter onto the DDP.
    assert outcome["breakdown"]["params"] == pytest.approx(2 * arch.total_params)
    assert outcome["breakdown"]["grads"] == pytest.approx(2 * arch.total_params)
    assert outcome["breakdown"]["logits"] == 0.0


@pytest.mark.parametrize(
    ("values", "fp32"),
    [
        ({"ddp.grad_reduce_in_fp32": True, "mixed_precision.grad_reduce_in_fp32": False}, False),
        ({"ddp.grad_reduce_in_fp32": False, "mixed_precision.grad_reduce_in_fp32": True}, True),
        # A preset by name: bf16_mixed keeps the dataclass default True, fp16_mixed sets False.
        ({"ddp.grad_reduce_in_fp32": False, "mixed_precision": "bf16_mixed"}, True),
        ({"ddp.grad_reduce_in_fp32": False, "mixed_precision._target_": "bf16_mixed"}, True),
        ({"ddp.grad_reduce_in_fp32": True, "mixed_precision": "fp16_mixed"}, False),
        ({"ddp.grad_reduce_in_fp32": False}, False),  # no precision config: the DDP's own
        ({}, True),
    ],
)
def test_the_precision_config_decides_the_gradient_dtype(values, fp32):
    """runtime_config_update copies MixedPrecisionConfig fields onto the DDP config (training/config.py;
    Megatron-Bridge issue 5365: a ddp.grad_reduce_in_fp32=False override has no effect under bf16_mixed)."""
    from assistant.kb import knowledge_base
    from assistant.planning.fit import reduces_grads_in_fp32

    assert reduces_grads_in_fp32(values, "0.6.0", knowledge_base()) is fp32


def test_qk_norm_inputs_are_whole_on_every_tensor_parallel_rank():
    """layernorm_across_heads gathers q and k over all heads before their RMSNorms: at TP 2 with SP a layer
    keeps half of its other activations but all of those three hidden-wide tensors."""
    from assistant.estimate.hardware import GIB
    from assistant.estimate.memory_dit import estimate_dit_memory
    from assistant.estimate.run import RunSettings
    from assistant.kb import knowledge_base
    from assistant.records import Plan

    arch = load_model_arch(WAN_14B, kb=knowledge_base())
    hw, tokens = knowledge_base().gpu_spec("h100"), 8_192

    def activations(tp: int) -> float:
        plan = Plan.sized(num_gpus=tp, tp=tp, pp=1, cp=1, mbs=1, gbs=1, vp=None, ep=1, etp=None, sp=tp > 1)
        return estimate_dit_memory(arch, plan, hw, RunSettings(seq_length=tokens)).breakdown.activations

    # Without recompute every layer keeps its tensors; TP 2 with SP halves all but the three gathered ones.
    whole = (
        arch.num_layers
        * tokens
        * 3
        * arch.hidden_size
        * 2.0
        * knowledge_base().memory_overheads.activation_scale
    )
    assert activations(2) - activations(1) / 2 == pytest.approx(whole / 2, rel=1e-6)
    assert activations(2) > 10 * GIB


def test_an_answer_judges_a_wan_plan_with_the_dit_estimate():
    """The fit verdict of an answer uses the DiT memory estimate, not "unknown"."""
    from assistant.kb import knowledge_base
    from assistant.planning.fit import estimate_fit
    from assistant.records import Cluster, Plan

    record = _record("wan_1_3b_pretrain_8gpu_h100_bf16_config")
    arch = recipe_arch(record, knowledge_base())
    plan = Plan.sized(num_gpus=8, tp=1, pp=1, cp=8, mbs=1, gbs=2, vp=None, ep=1, etp=None, sp=False)
    verdict = estimate_fit(record, arch, plan, Cluster(num_gpus=8, gpu_type="h100"), kb=knowledge_base())
    assert verdict.status == "fits" and verdict.peak_bytes
