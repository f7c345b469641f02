"""The search's shortcuts change no answer: the static floor never exceeds an estimate, what recompute
cannot shrink is the same under every recompute option, and the memoised estimates equal fresh ones."""

from __future__ import annotations

import pytest

from assistant.estimate.memory import estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.kb import knowledge_base
from assistant.planning.search import (
    _candidates,
    fsdp_options,
    memory_of,
    recompute_options,
    speed_of,
    static_floor_bytes,
)
from assistant.records import Cluster, ModelArch
from tests.archs import LLAMA3_8B, LLAMA3_70B, QWEN3_30B

H100 = knowledge_base().gpu_spec("h100")
OVERHEADS = knowledge_base().memory_overheads


def plans(arch: ModelArch, gpus: int, seq: int, gbs: int, mode: str = "pretrain"):
    cluster = Cluster(num_gpus=gpus, gpu_type="h100")
    found = _candidates(arch, cluster, H100, seq_length=seq, global_batch_size=gbs, mode=mode,
                        precision="bf16", version=None, max_tp=8)  # fmt: skip
    return list(found)


@pytest.mark.parametrize(
    ("arch", "gpus", "mode", "extra"),
    [
        (LLAMA3_70B, 8, "pretrain", {}),
        (LLAMA3_70B, 16, "pretrain", {"grad_reduce_in_fp32": False}),
        (QWEN3_30B, 8, "pretrain", {}),
        (LLAMA3_8B, 4, "peft", {}),
        (LLAMA3_8B, 2, "sft", {"optimizer_bytes": 6.0}),
    ],
)
def test_static_floor_is_below_every_layouts_estimate(arch: ModelArch, gpus: int, mode: str, extra) -> None:
    run = RunSettings(seq_length=4096, mode=mode, **extra)
    floor = static_floor_bytes(arch, run, gpus, OVERHEADS)
    found = plans(arch, gpus, 4096, 64, mode)
    assert found
    for plan in found:
        for fsdp in fsdp_options(arch, plan):
            peak = estimate_memory(
                arch, plan, H100, run.but(recompute="full", fsdp=fsdp), overheads=OVERHEADS
            )
            assert floor <= peak.peak_bytes, (plan, fsdp)


@pytest.mark.parametrize("arch", [LLAMA3_70B, QWEN3_30B])
def test_no_recompute_option_goes_below_what_the_first_cannot_shrink(arch: ModelArch) -> None:
    """_try_recompute stops when the first option's peak less its activations exceeds the GPU: that stage's
    weights, state, logits and overheads stay whatever is recomputed, so no later option can fit."""
    run = RunSettings(seq_length=8192)
    frag = OVERHEADS.fragmentation
    for plan in plans(arch, 16, 8192, 64)[:40]:
        options = [run.but(recompute=r, recompute_modules=m) for r, m in recompute_options(arch)]
        first, *later = (estimate_memory(arch, plan, H100, o, overheads=OVERHEADS) for o in options)
        floor = first.peak_bytes - first.breakdown.activations * (1 + frag)
        assert all(m.peak_bytes >= floor * (1 - 1e-12) for m in later), plan


def test_memoised_estimates_equal_fresh_ones() -> None:
    run = RunSettings(seq_length=4096, recompute="selective")
    cal = knowledge_base().calibration
    for plan in plans(QWEN3_30B, 8, 4096, 64)[:10]:
        fresh = estimate_memory(QWEN3_30B, plan, H100, run, overheads=OVERHEADS)
        assert memory_of(QWEN3_30B, plan, H100, run, OVERHEADS) == fresh
        assert memory_of(QWEN3_30B, plan, H100, run, OVERHEADS) == fresh  # the memoised one
        speed = estimate_throughput(QWEN3_30B, plan, H100, run, calibration=cal)
        assert speed_of(QWEN3_30B, plan, H100, run, cal) == speed_of(QWEN3_30B, plan, H100, run, cal) == speed
    other = run.but(recompute="full")
    plan = plans(QWEN3_30B, 8, 4096, 64)[0]
    assert memory_of(QWEN3_30B, plan, H100, other, OVERHEADS) != memory_of(
        QWEN3_30B, plan, H100, run, OVERHEADS
    )


def test_memo_keys_tell_apart_settings_a_dump_would_hide() -> None:
    """RunFeatures leaves te_cross_entropy out of its JSON; the memo must not confuse the two runs."""
    from assistant.estimate.features import RunFeatures

    plan = plans(LLAMA3_8B, 8, 4096, 64)[0]
    plain = RunSettings(seq_length=4096, features=RunFeatures())
    fused = RunSettings(seq_length=4096, features=RunFeatures(te_cross_entropy=True))
    assert memory_of(LLAMA3_8B, plan, H100, plain, OVERHEADS).breakdown.logits > (
        memory_of(LLAMA3_8B, plan, H100, fused, OVERHEADS).breakdown.logits
    )
