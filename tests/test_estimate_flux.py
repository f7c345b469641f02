"""FLUX.1-dev: a record that counts the published parameters, and a memory estimate term by term."""

from __future__ import annotations

import pytest

from assistant.catalog import load_catalog
from assistant.errors import UserError
from assistant.estimate.dit import dit_total_params, micro_batch_tokens
from assistant.estimate.memory_dit import estimate_dit_memory
from assistant.estimate.run import RunSettings
from assistant.kb import knowledge_base
from assistant.models import load_model_arch, recipe_arch
from assistant.planning.fit import estimate_fit
from assistant.records import Cluster, Plan

FLUX = "black-forest-labs/FLUX.1-dev"
RECIPE = "flux_12b_pretrain_2gpu_h100_bf16_config"


def _arch():
    return load_model_arch(FLUX, kb=knowledge_base())


def _record(name: str = RECIPE, version: str = "0.6.0"):
    return next(r for r in load_catalog(version).recipes if r.name == name)


def _plan(gpus: int, tp: int = 2, pp: int = 1, cp: int = 1, sp: bool = False) -> Plan:
    return Plan.sized(num_gpus=gpus, tp=tp, pp=pp, cp=cp, mbs=1, gbs=16, vp=None, ep=1, etp=None, sp=sp)


def _memory(gpus: int, **layout):
    run = RunSettings(seq_length=4_608, precision_aware_optimizer=False, grad_reduce_in_fp32=False)
    hw = knowledge_base().gpu_spec("h100")
    return estimate_dit_memory(
        _arch(), _plan(gpus, **layout), hw, run, overheads=knowledge_base().memory_overheads
    )


def test_the_record_counts_the_published_parameters():
    """Every weight and bias of Bridge's Flux (19 double, 38 single blocks, the embedders and the head)
    against the released FLUX.1-dev transformer, 11,901,408,320."""
    arch = _arch()
    assert arch.diffusion is not None and arch.diffusion.kind == "flux"
    assert dit_total_params(arch) == 11_901_408_320 == arch.total_params


def test_the_guidance_embedder_is_counted():
    """FLUX.1-dev has guidance_embeds: an MLPEmbedder of 256 → 3,072 → 3,072 with biases."""
    arch = _arch()
    assert arch.diffusion is not None
    without = arch.model_copy(
        update={"diffusion": arch.diffusion.model_copy(update={"guidance_embed": False})}
    )
    assert dit_total_params(arch) - dit_total_params(without) == 256 * 3072 + 3072 + 3072 * 3072 + 3072


def test_both_recipes_of_each_version_resolve_to_the_record():
    for version in ("0.6.0", "main"):
        for name in (RECIPE, "flux_12b_sft_2gpu_h100_bf16_config"):
            arch = recipe_arch(_record(name, version), knowledge_base())
            assert arch is not None and arch.hf_model_id == FLUX


def test_a_sample_is_image_patches_and_text_tokens():
    dd = _arch().diffusion
    assert dd is not None
    # 1024 × 1024 pixels / 8 = 128 × 128 latents, in 2 × 2 patches: 4,096 tokens, and 512 T5 tokens.
    assert micro_batch_tokens(dd, 1024, dict(_record().fields))[0] == 4_608
    assert micro_batch_tokens(dd, 1024, {"dataset.image_H": 512, "dataset.image_W": 512})[0] == 1_024 + 512
    assert micro_batch_tokens(dd, 1024, {"dataset.prompt_seq_len": 256})[0] == 4_096 + 256
    with pytest.raises(UserError, match="no 2×2 latent patches"):
        micro_batch_tokens(dd, 1024, {"dataset.image_H": 8})


def test_weights_split_over_tensor_parallel_as_the_linears_do():
    """At TP 2 a rank holds half of every column-parallel weight and bias and of every row-parallel weight,
    and all of the rest: the row-parallel biases and q/k RMSNorms (19 × (4 × 3,072 + 4 × 128) + 38 ×
    (3,072 + 2 × 128)) and the replicated embedders and head (64,124,992)."""
    replicated = 19 * (4 * 3072 + 4 * 128) + 38 * (3072 + 2 * 128) + 64_124_992
    per_rank = (11_901_408_320 - replicated) / 2 + replicated
    memory = _memory(2)
    assert memory.breakdown.params == pytest.approx(2 * per_rank, rel=1e-12)
    assert memory.breakdown.grads == pytest.approx(2 * per_rank, rel=1e-12)  # bf16 gradients
    assert memory.breakdown.optimizer == pytest.approx(12 * per_rank, rel=1e-12)  # DP 1: nothing to shard
    assert _memory(8).breakdown.optimizer == pytest.approx(12 * per_rank / 4, rel=1e-12)  # DP 4


def test_every_saved_activation_is_counted():
    """Elements per joint token and block at TP 2 (h 3,072, FFN 12,288, 24 heads of 128):
    double block 6h + (6h + 2 FFN + 4 × 24) / 2 + 4 × 128, single block 3h + the same; then the inputs of
    img_embed (64 per image token) and txt_embed (4,096 per text token), norm_out's input (h per token) and
    the modulated image tokens and proj_out's input (2h per image token), all in bf16."""
    h, f, heads, kv = 3072, 12288, 24, 128
    per_head = (6 * h + 2 * f + 4 * heads) / 2
    per_token = 19 * (6 * h + per_head + 4 * kv) + 38 * (3 * h + per_head + 4 * kv)
    ends = 4096 * 64 + 512 * 4096 + 4608 * h + 4096 * 2 * h
    scale = knowledge_base().memory_overheads.activation_scale
    assert _memory(2).breakdown.activations == pytest.approx((4608 * per_token + ends) * 2 * scale, rel=1e-12)


def test_layouts_bridge_does_not_build_are_refused():
    """Flux builds every block on every rank and scatters no sequence: PP, CP and SP are not estimated."""
    for layout, reason in (({"pp": 2}, "PP and CP"), ({"cp": 2}, "PP and CP"), ({"sp": True}, "SP")):
        with pytest.raises(UserError, match=reason):
            _memory(4, **layout)


def test_the_recipe_does_not_fit_its_two_gpus_but_fits_eight():
    """At TP 2 and DP 1 the weights, bf16 gradients and unsharded fp32 Adam state alone are 16 bytes × 5.98 B
    = 95.7 GB per H100; on 8 GPUs (DP 4, the README's launch) the optimizer state is sharded four ways."""
    kb = knowledge_base()
    record = _record()
    arch = recipe_arch(record, kb)
    two = estimate_fit(record, arch, _plan(2), Cluster(num_gpus=2, gpu_type="h100"), kb=kb)
    eight = estimate_fit(record, arch, _plan(8), Cluster(num_gpus=8, gpu_type="h100"), kb=kb)
    assert two.status == "does-not-fit" and eight.status == "fits"
    assert two.peak_bytes > 95e9 > eight.peak_bytes


def test_no_sequence_parallel_advice_for_flux():
    """Bridge's Flux forward never scatters the sequence, so "turn on SP" would be wrong advice."""
    from assistant.rules.config import build_config
    from assistant.rules.validate import validate

    kb, record, cluster = knowledge_base(), _record(), Cluster(num_gpus=8, gpu_type="h100")
    config = build_config(record)
    assert config.tp == 2 and not config.sp

    def ids(arch) -> set[str]:
        return {f.id for f in validate(config, arch, cluster, gpu=kb.gpu_spec("h100"))}

    assert "sp-off" not in ids(recipe_arch(record, kb))
    assert "sp-off" in ids(
        load_model_arch("Wan-AI/Wan2.1-T2V-14B-Diffusers", kb=kb)
    )  # Wan's layers do scatter


@pytest.mark.parametrize("gpus", [2, 16])
def test_a_flux_plan_keeps_pp_cp_1_without_sp_and_never_advises_recompute(gpus):
    """The planner keeps the layouts Bridge's Flux builds (PP 1, CP 1, no SP); when the plan does not fit,
    the advice is GPUs, not model.recompute_granularity=full (Flux.forward runs its blocks itself)."""
    from assistant.planning.resize import resize

    kb, record = knowledge_base(), _record()
    result = resize(record, recipe_arch(record, kb), Cluster(num_gpus=gpus, gpu_type="h100"), kb=kb)
    assert result.plan is not None
    assert (result.plan.pp, result.plan.cp, result.plan.sp) == (1, 1, False)
    assert result.fit is not None and result.fit.status == ("does-not-fit" if gpus == 2 else "fits")
    oom = [f for f in result.findings if f.id == "fit-oom"]
    assert len(oom) == (gpus == 2)
    assert all("recompute_granularity=full" not in (f.fix or "") for f in oom)
    assert all("has no effect" in f.message and "不起作用" in f.message_zh for f in oom)
