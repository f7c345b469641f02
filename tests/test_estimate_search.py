"""Parallelism search: only valid layouts, batch arithmetic holds, ranked by speed, quantified misses."""

from __future__ import annotations

import pytest

from assistant.kb import knowledge_base
from assistant.planning.search import (
    ROOM_CANDIDATES,
    fsdp_only_as_last_resort,
    gpu_counts_to_try,
    has_room,
    is_valid_layout,
    layer_split,
    nearest_fit,
    rank_with_ties,
    roomiest_first,
    search_layouts,
    without_idle_splits,
)
from assistant.records import Cluster, ModelArch
from assistant.rules.config import EffectiveConfig
from assistant.rules.validate import FLEXIBLE_LAYOUT_KEYS, validate
from tests.archs import LLAMA3_8B, LLAMA3_70B, QWEN3_30B


@pytest.mark.parametrize(
    ("arch", "gpus", "gbs", "seq"),
    [(LLAMA3_70B, 64, 256, 8192), (QWEN3_30B, 16, 512, 4096)],
)
def test_search_returns_valid_fitting_layouts_in_order(
    arch: ModelArch, gpus: int, gbs: int, seq: int
) -> None:
    cluster = Cluster(num_gpus=gpus, gpu_type="h100")
    ranked = search_layouts(
        arch, cluster, seq_length=seq, global_batch_size=gbs, precision="fp8_cs", kb=knowledge_base()
    )
    assert 1 <= len(ranked) <= 5
    band = knowledge_base().calibration.median_error
    top = max(r.throughput.tokens_per_sec_per_gpu for r in ranked)
    for above, below in zip(ranked, ranked[1:], strict=False):
        faster_below = below.throughput.tokens_per_sec_per_gpu > above.throughput.tokens_per_sec_per_gpu
        # Only a tie (within the estimator's median error of the top) may put a slower layout first,
        # and then for its lower TP.
        if faster_below:
            assert above.throughput.tokens_per_sec_per_gpu >= top * (1 - band)
            assert above.plan.tp < below.plan.tp
    assert len({(r.plan.tp, r.plan.pp, r.plan.cp, r.plan.ep) for r in ranked}) == len(ranked)
    for r in ranked:
        p = r.plan
        assert p.gbs == gbs == p.mbs * p.dp * p.ga
        assert p.tp * p.pp * p.cp * p.dp == gpus
        assert r.memory.fits
        assert is_valid_layout(
            p, arch, cluster, seq, precision="fp8_cs", gpu=knowledge_base().gpu_spec(cluster.gpu_type)
        )
        config = EffectiveConfig(
            recipe="x", version="0.6.0", mode="pretrain", tp=p.tp, pp=p.pp, vp=p.vp, cp=p.cp, ep=p.ep,
            etp=p.etp, sp=p.sp, seq_length=seq, global_batch_size=gbs, micro_batch_size=p.mbs,
            values={k: v for k, v in r.overrides.items() if k in FLEXIBLE_LAYOUT_KEYS},
        )  # fmt: skip
        assert not [
            f
            for f in validate(config, arch, cluster, gpu=knowledge_base().gpu_spec(cluster.gpu_type))
            if f.severity == "error"
        ]
        assert any("bubble" in reason for reason in r.reasons)
        assert any("exposed communication" in reason for reason in r.reasons)
        assert any("recompute" in reason for reason in r.reasons)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))


def test_invalid_layouts_are_rejected() -> None:
    cluster = Cluster(num_gpus=8, gpu_type="h100")
    base = search_layouts(LLAMA3_8B, cluster, seq_length=4096, global_batch_size=64, kb=knowledge_base())[
        0
    ].plan
    # TP=3 does not divide the 32 heads; EP on a dense model; GBS identity broken.
    assert not is_valid_layout(
        base.model_copy(update={"tp": 3}),
        LLAMA3_8B,
        cluster,
        4096,
        gpu=knowledge_base().gpu_spec(cluster.gpu_type),
    )
    assert not is_valid_layout(
        base.model_copy(update={"ep": 2}),
        LLAMA3_8B,
        cluster,
        4096,
        gpu=knowledge_base().gpu_spec(cluster.gpu_type),
    )
    assert not is_valid_layout(
        base.model_copy(update={"ga": base.ga + 1}),
        LLAMA3_8B,
        cluster,
        4096,
        gpu=knowledge_base().gpu_spec(cluster.gpu_type),
    )


def test_seventy_b_on_eight_h100_is_a_quantified_no() -> None:
    cluster = Cluster(num_gpus=8, gpu_type="h100")
    assert (
        search_layouts(LLAMA3_70B, cluster, seq_length=8192, global_batch_size=128, kb=knowledge_base()) == []
    )
    near = nearest_fit(LLAMA3_70B, cluster, seq_length=8192, global_batch_size=128, kb=knowledge_base())
    assert not near.fits
    assert (
        near.leanest is not None and near.leanest.memory.peak_bytes > 1.5 * near.leanest.memory.usable_bytes
    )
    assert near.min_gpus is not None and near.min_gpus >= 16
    assert near.min_gpus_layout is not None and near.min_gpus_layout.memory.fits


def test_uneven_pipeline_split_names_the_flags_it_needs() -> None:
    # 126 layers split into 16 stages only by counting embedding and loss as stages.
    arch = LLAMA3_70B.model_copy(update={"num_layers": 126})
    cluster = Cluster(num_gpus=128, gpu_type="h100")
    ranked = search_layouts(
        arch, cluster, seq_length=8192, global_batch_size=512, top_k=20, kb=knowledge_base()
    )
    uneven = [r for r in ranked if arch.num_layers % (r.plan.pp * (r.plan.vp or 1))]
    assert uneven, "expected at least one uneven split among the top layouts"
    for r in uneven:
        assert any(k in r.overrides for k in FLEXIBLE_LAYOUT_KEYS), r.overrides
        if (arch.num_layers + 2) % (r.plan.pp * (r.plan.vp or 1)) == 0:
            assert r.overrides["model.account_for_embedding_in_pipeline_split"] is True
            assert r.overrides["model.account_for_loss_in_pipeline_split"] is True


def test_selective_recompute_follows_the_architecture() -> None:
    from assistant.planning.search import recompute_options

    dense = [modules for _, modules in recompute_options(LLAMA3_8B)]
    moe = [modules for _, modules in recompute_options(QWEN3_30B)]
    assert dense == [None, ["layernorm"], ["layernorm", "mlp"], None]
    assert moe == [None, ["layernorm", "moe_act"], ["layernorm", "moe_act", "moe"], None]


def test_fsdp_layouts_carry_their_flags() -> None:
    cluster = Cluster(num_gpus=8, gpu_type="h100")
    ranked = search_layouts(
        LLAMA3_8B, cluster, seq_length=8192, global_batch_size=128, top_k=20, kb=knowledge_base()
    )
    fsdp = [r for r in ranked if r.fsdp]
    assert fsdp, "expected Megatron-FSDP among the layouts of a dense model on 8 GPUs"
    for r in fsdp:
        assert r.plan.pp == 1
        assert r.overrides["ddp.use_megatron_fsdp"] is True
        assert any("Megatron-FSDP" in reason for reason in r.reasons)
    assert not [
        r
        for r in search_layouts(
            QWEN3_30B, cluster, seq_length=4096, global_batch_size=512, kb=knowledge_base()
        )
        if r.fsdp
    ]


def test_split_overrides_name_how_megatron_splits_the_layers() -> None:
    import re

    from assistant.planning.search import pipeline_layout, split_overrides

    assert split_overrides(80, 8, 5) == {}
    assert split_overrides(126, 16, 8) == {
        "model.account_for_embedding_in_pipeline_split": True,
        "model.account_for_loss_in_pipeline_split": True,
    }
    first_last = split_overrides(61, 16, None)  # DeepSeek-V3's 61 layers on 16 stages
    first, last = first_last.values()
    assert (61 - first - last) % 14 == 0
    assert split_overrides(8, 4, 4) is None  # more chunks than layers + embedding + loss
    layout = pipeline_layout(61, 16)
    chunks = layout.split("|")
    assert len(chunks) == 16 and chunks[0].startswith("E") and chunks[-1].endswith("L")
    counts = [int(m.group(1) or 1) for c in chunks for m in [re.search(r"t(?:\*(\d+))?", c)] if m]
    assert sum(counts) == 61


def test_ties_within_the_estimators_error_prefer_fewer_gpus_per_layer() -> None:
    everything = search_layouts(
        LLAMA3_70B, Cluster(num_gpus=64, gpu_type="h100"), seq_length=8192, global_batch_size=256,
        precision="fp8_cs", top_k=10_000, kb=knowledge_base(),
    )  # fmt: skip
    speed = [r.throughput.tokens_per_sec_per_gpu for r in rank_with_ties(everything, 0.0)]
    assert speed == sorted(speed, reverse=True)  # no band: pure speed order
    ranked = rank_with_ties(everything, 0.2)
    top = max(speed)
    ties = [r for r in ranked if r.throughput.tokens_per_sec_per_gpu >= 0.8 * top]
    assert ranked[: len(ties)] == ties  # the tie group leads
    assert [layer_split(r.plan) for r in ties] == sorted(layer_split(r.plan) for r in ties)
    assert len({layer_split(r.plan) for r in ties}) > 1  # a real reordering, not a no-op
    assert any(r.plan.cp > 1 for r in ties)  # CP counts with TP: both split every layer
    rest = [r.throughput.tokens_per_sec_per_gpu for r in ranked[len(ties) :]]
    assert rest == sorted(rest, reverse=True)


@pytest.mark.integration  # a layout search at every doubling of the GPU count
@pytest.mark.parametrize(
    ("arch", "gpus", "gpu", "seq", "gbs"),
    [
        (LLAMA3_70B, 8, "h100", 8192, 128),
        (QWEN3_30B, 4, "h100", 4096, 256),
        (LLAMA3_70B, 8, "a100", 4096, 64),
    ],
)
def test_fewest_gpus_agree_with_a_search_at_every_doubling(arch, gpus, gpu, seq, gbs) -> None:
    """nearest_fit skips the ranked search where even full recompute does not fit; the answer must be the
    one a ranked search at every GPU count gives."""

    def ranked(count: int) -> list:
        cluster = Cluster(num_gpus=count, gpu_type=gpu)
        return search_layouts(
            arch, cluster, seq_length=seq, global_batch_size=gbs, top_k=ROOM_CANDIDATES, kb=knowledge_base()
        )

    near = nearest_fit(
        arch, Cluster(num_gpus=gpus, gpu_type=gpu), seq_length=seq, global_batch_size=gbs, kb=knowledge_base()
    )
    counts = iter(gpu_counts_to_try(gpus, 8, 4096))
    count = next(counts)
    while not ranked(count):
        count = next(counts)
    assert not near.fits and near.min_gpus == count
    assert near.min_gpus_layout.plan == roomiest_first(ranked(count)).plan


def test_the_fewest_gpus_may_be_fewer_than_asked_and_a_tight_fit_comes_with_a_roomy_one() -> None:
    """Llama 3 8B full SFT (bf16 gradients, as its recipe) has no valid layout on 3 GPUs, fits 2 at TP 2
    within the estimator's error, and 4 with room: the answer gives the true minimum and the roomy count."""
    near = nearest_fit(LLAMA3_8B, Cluster(num_gpus=3, gpu_type="h100"), seq_length=4096, global_batch_size=8,
                       mode="sft", grad_reduce_in_fp32=False, kb=knowledge_base())  # fmt: skip
    assert not near.fits and near.min_gpus == 2
    assert near.min_gpus_layout.memory.tight
    assert near.room_gpus == 4 and not near.room_layout.memory.tight
    assert has_room(near.room_layout.memory)


def test_gpu_counts_to_try_start_below_the_count_asked() -> None:
    assert gpu_counts_to_try(3, 8, 64) == [1, 2, 4, 8, 16, 32, 64]
    assert gpu_counts_to_try(24, 8, 64) == [1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64]  # 16 < 24 < 32


def test_context_parallel_that_buys_nothing_is_not_proposed() -> None:
    """A CP>1 layout whose half-CP twin fits and is as fast (within the estimator's error) is dropped; the
    unfiltered candidates show such twins exist, so the filter is not a no-op."""
    cluster = Cluster(num_gpus=64, gpu_type="h100")
    common = {"seq_length": 8192, "global_batch_size": 256, "precision": "fp8_cs", "top_k": 10_000}
    common["kb"] = knowledge_base()
    band = knowledge_base().calibration.median_error

    def twins(layouts: list) -> list:
        speed = {(r.plan.tp, r.plan.pp, r.plan.cp, r.plan.ep, r.fsdp): r.throughput.tokens_per_sec_per_gpu
                 for r in layouts}  # fmt: skip
        return [
            r for r in layouts if r.plan.cp > 1
            and speed.get((r.plan.tp, r.plan.pp, r.plan.cp // 2, r.plan.ep, r.fsdp), 0)
            >= r.throughput.tokens_per_sec_per_gpu * (1 - band)
        ]  # fmt: skip

    ranked = search_layouts(LLAMA3_70B, cluster, **common)
    assert not twins(ranked)
    kept = without_idle_splits(ranked, band)
    assert kept == ranked  # idempotent on the search's own output
    # Built by hand: a CP2 layout faster than its CP1 twin by more than the band stays.
    base = next(r for r in ranked if r.plan.cp == 1)
    faster = base.model_copy(
        update={
            "plan": base.plan.model_copy(update={"cp": 2}),
            "throughput": base.throughput.model_copy(
                update={"tokens_per_sec_per_gpu": base.throughput.tokens_per_sec_per_gpu * (1 + 2 * band)}
            ),
        }
    )
    same = faster.model_copy(update={"throughput": base.throughput})
    assert faster in without_idle_splits([base, faster], band)
    assert without_idle_splits([base, same], band) == [base]


def test_tensor_parallel_under_megatron_fsdp_that_buys_nothing_is_not_proposed() -> None:
    """Under Megatron-FSDP a TP>1 layout whose half-TP twin fits and is as fast is dropped: on 64 H100s
    (Llama 3 70B, FP8-CS, as Bridge's perf table runs it) the FSDP TP2/TP4 twins used to push the published
    TP4 PP8 out of the top 5. Without FSDP a larger TP is kept: it also shards the weights."""
    cluster = Cluster(num_gpus=64, gpu_type="h100")
    kb = knowledge_base()
    band = kb.calibration.median_error
    ranked = search_layouts(LLAMA3_70B, cluster, seq_length=8192, global_batch_size=256, precision="fp8_cs",
                            top_k=10_000, grad_reduce_in_fp32=False, kb=kb)  # fmt: skip
    layouts = [(r.plan.tp, r.plan.pp, r.plan.cp, r.plan.ep, r.fsdp) for r in ranked]
    fsdp_tps = sorted(r.plan.tp for r in ranked if r.fsdp and r.plan.pp == 1 and r.plan.cp == 1)
    assert fsdp_tps and fsdp_tps[0] == 1 and 2 not in fsdp_tps  # TP2 FSDP was a twin of TP1 FSDP
    assert (4, 8, 1, 1, False) in layouts[:5]
    base = next(r for r in ranked if r.fsdp and r.plan.tp == 1)
    doubled = base.model_copy(update={"plan": base.plan.model_copy(update={"tp": 2})})
    assert without_idle_splits([base, doubled], band) == [base]
    faster = doubled.model_copy(
        update={"throughput": base.throughput.model_copy(
            update={"tokens_per_sec_per_gpu": base.throughput.tokens_per_sec_per_gpu * (1 + 2 * band)})}
    )  # fmt: skip
    assert faster in without_idle_splits([base, faster], band)
    plain, plain_tp2 = (x.model_copy(update={"fsdp": False}) for x in (base, doubled))
    assert without_idle_splits([plain, plain_tp2], band) == [plain, plain_tp2]


def test_block_scaled_precisions_use_megatron_fsdp_only_when_nothing_else_fits() -> None:
    """Bridge's Llama 3 70B perf recipes on 64 GB200s use Megatron-FSDP in FP8 current scaling and a
    pipeline layout in MXFP8; the search follows, and still offers FSDP when nothing else fits."""
    cluster = Cluster(num_gpus=64, gpu_type="gb200")
    common = {"seq_length": 8192, "global_batch_size": 256, "top_k": 10_000, "grad_reduce_in_fp32": False}
    common["kb"] = knowledge_base()
    fp8 = search_layouts(LLAMA3_70B, cluster, precision="fp8_cs", **common)
    mxfp8 = search_layouts(LLAMA3_70B, cluster, precision="mxfp8", **common)
    assert any(r.fsdp for r in fp8)
    assert mxfp8 and not any(r.fsdp for r in mxfp8)
    assert any("Megatron-FSDP is not proposed in MXFP8" in reason for reason in mxfp8[0].reasons)
    assert not any("Megatron-FSDP is not proposed" in reason for reason in fp8[0].reasons)
    only_fsdp = [r for r in fp8 if r.fsdp]
    assert fsdp_only_as_last_resort(only_fsdp, "mxfp8") == only_fsdp
    assert fsdp_only_as_last_resort(fp8, "bf16") == fp8
    assert not any(r.fsdp for r in fsdp_only_as_last_resort(fp8, "nvfp4"))


def test_a_mamba_hybrid_is_searched_with_the_splits_its_pattern_allows() -> None:
    """Nemotron 3 Nano: TP must divide its 8 Mamba groups, and a pipeline split needs none of the transformer
    split settings (account_for_*, an explicit layout), which do not describe a hybrid pattern."""
    from tests.archs import NEMOTRON_3_NANO

    found = search_layouts(
        NEMOTRON_3_NANO, Cluster(num_gpus=16, gpu_type="gb200"), seq_length=8192, global_batch_size=512,
        precision="mxfp8", top_k=50, kb=knowledge_base(),
    )  # fmt: skip
    assert found and found[0].memory.fits
    assert all(x.plan.tp <= 8 and 8 % x.plan.tp == 0 for x in found)
    assert all(52 % (x.plan.pp * (x.plan.vp or 1)) == 0 for x in found)
    assert not any(key in x.overrides for x in found for key in FLEXIBLE_LAYOUT_KEYS)
