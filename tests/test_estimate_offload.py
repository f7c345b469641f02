"""CPU activation offloading: memory it frees, host memory it needs, time it costs per host link, the
Megatron-Core limits it obeys, and how the search proposes it (with Megatron-FSDP, like Bridge's perf
recipes)."""

from __future__ import annotations

import json

import pytest

from assistant.errors import UserError
from assistant.estimate.features import RunFeatures
from assistant.estimate.hardware import GIB, load_hardware
from assistant.estimate.memory import HOST_MEMORY_SHARE, estimate_memory, layer_activation_bytes
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.kb import knowledge_base
from assistant.planning.search import layout_config, layout_findings, search_layouts
from assistant.records import Cluster, Plan
from assistant.rules import upstream
from assistant.settings import KNOWLEDGE_BASE
from tests.archs import LLAMA3_70B

HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))
FSDP_RUN = {"seq_length": 8192, "precision": "fp8_cs", "fsdp": True, "grad_reduce_in_fp32": False}


def fsdp_plan(mbs: int = 1, gpus: int = 64, gbs: int = 256) -> Plan:
    return Plan.sized(num_gpus=gpus, tp=1, pp=1, cp=1, mbs=mbs, gbs=gbs, vp=None, ep=1, etp=None, sp=False)


def test_offloaded_layers_leave_the_gpu_and_wait_in_host_memory() -> None:
    plan, gb200 = fsdp_plan(), HW["gb200"]
    per_layer = layer_activation_bytes(LLAMA3_70B, plan, seq_length=8192, precision="fp8_cs")
    base = estimate_memory(LLAMA3_70B, plan, gb200, RunSettings(**FSDP_RUN))
    offloaded = estimate_memory(LLAMA3_70B, plan, gb200, RunSettings(offload_layers=40, **FSDP_RUN))
    freed = base.breakdown.activations - offloaded.breakdown.activations
    assert freed == pytest.approx(39 * per_layer, rel=0.01)  # one layer's buffer stays
    assert offloaded.offloaded_bytes == pytest.approx(40 * per_layer, rel=0.01)
    assert base.offloaded_bytes == 0
    assert any("CPU activation offloading of 40 layers" in a for a in offloaded.assumptions)


def test_host_memory_bounds_what_can_be_offloaded() -> None:
    plan, gb200 = fsdp_plan(mbs=8, gbs=512), HW["gb200"]
    estimate = estimate_memory(LLAMA3_70B, plan, gb200, RunSettings(offload_layers=79, **FSDP_RUN))
    assert estimate.peak_bytes <= estimate.usable_bytes  # the GPU side would fit ...
    assert estimate.offloaded_bytes > HOST_MEMORY_SHARE * gb200.host_memory_bytes
    assert not estimate.fits  # ... but the host cannot hold the activations
    assert any("too much" in a for a in estimate.assumptions)


@pytest.mark.parametrize(
    ("overrides", "text"),
    [
        ({"offload_layers": 80}, upstream.offload_layers(80)),
        ({"offload_layers": 10, "recompute": "selective"}, upstream.OFFLOAD_RECOMPUTE),
    ],
)
def test_megatron_limits_are_user_errors_with_the_upstream_text(overrides: dict, text: str) -> None:
    with pytest.raises(UserError, match=text):
        estimate_memory(LLAMA3_70B, fsdp_plan(), HW["gb200"], RunSettings(**FSDP_RUN | overrides))
    with pytest.raises(UserError, match=text):
        estimate_throughput(LLAMA3_70B, fsdp_plan(), HW["gb200"], RunSettings(**FSDP_RUN | overrides))


def test_offloading_needs_pipeline_parallelism_off() -> None:
    plan = Plan.sized(num_gpus=64, tp=1, pp=4, cp=1, mbs=1, gbs=256, vp=None, ep=1, etp=None, sp=False)
    with pytest.raises(UserError, match=upstream.OFFLOAD_PP):
        estimate_memory(LLAMA3_70B, plan, HW["gb200"], RunSettings(seq_length=8192, offload_layers=10))


def test_nvlink_c2c_hides_the_transfers_that_pcie_exposes() -> None:
    """The same offload costs next to nothing over Grace's NVLink-C2C and real time over a shared PCIe
    uplink: the transfer of a layer's activations is compared with the compute it overlaps."""
    cal = knowledge_base().calibration

    def exposed_share(gpu: str) -> float:
        speed = estimate_throughput(
            LLAMA3_70B, fsdp_plan(mbs=2), HW[gpu], RunSettings(offload_layers=40, **FSDP_RUN), calibration=cal
        )
        return speed.offload_s / speed.step_time_s

    assert exposed_share("gb200") < 0.03  # about 2% of the step with the fitted GEMM speed
    assert exposed_share("h100") > 10 * max(exposed_share("gb200"), 0.002)  # about 40%
    speed = estimate_throughput(
        LLAMA3_70B, fsdp_plan(), HW["gb200"], RunSettings(offload_layers=40, **FSDP_RUN)
    )
    assert any("CPU offloading of 40 layers" in a for a in speed.assumptions)


def test_fsdp_keeps_only_its_shard_of_the_fp8_weight_copies() -> None:
    """Megatron-FSDP casts the parameter shard it holds, so FP8 adds a shard, not a full model copy."""
    plan, gb200 = fsdp_plan(), HW["gb200"]
    fp8 = estimate_memory(LLAMA3_70B, plan, gb200, RunSettings(**FSDP_RUN)).breakdown.params
    bf16 = estimate_memory(
        LLAMA3_70B, plan, gb200, RunSettings(**FSDP_RUN | {"precision": "bf16"})
    ).breakdown.params
    assert fp8 - bf16 < 2 * GIB  # 70B / 64 ranks of one-byte copies is about 1 GiB


def test_search_offers_fsdp_with_offloading_on_grace_blackwell() -> None:
    """Llama 3 70B FP8 on 64 GB200s: Bridge's perf recipe runs Megatron-FSDP at TP1 with 40 layers offloaded
    (scripts/performance llama3 GB200 FP8-CS presets); the search proposes that family of layout."""
    cluster = Cluster(num_gpus=64, gpu_type="gb200")
    ranked = search_layouts(
        LLAMA3_70B, cluster, seq_length=8192, global_batch_size=256, precision="fp8_cs", top_k=50,
        grad_reduce_in_fp32=False, kb=knowledge_base(),
    )  # fmt: skip
    offloading = [r for r in ranked if r.offload_layers]
    assert offloading, [(r.plan.tp, r.plan.pp, r.fsdp, r.recompute) for r in ranked]
    for r in offloading:
        assert r.fsdp and r.plan.pp == 1 and r.recompute is None
        assert 0 < r.offload_layers < LLAMA3_70B.num_layers
        assert r.overrides["model.cpu_offloading"] is True
        assert r.overrides["model.cpu_offloading_num_layers"] == r.offload_layers
        assert r.memory.fits and r.memory.offloaded_bytes > 0
        assert any("CPU offloading" in reason for reason in r.reasons)
        config = layout_config(r.plan, 8192, mode="pretrain", precision="fp8_cs", values=r.overrides)
        assert not [
            f
            for f in layout_findings(
                config, LLAMA3_70B, cluster, gpu=knowledge_base().gpu_spec(cluster.gpu_type)
            )
            if f.severity == "error"
        ]
    top_fsdp = next(r for r in ranked if r.fsdp and r.plan.tp == 1 and r.plan.cp == 1)
    assert top_fsdp.offload_layers, "TP1 FSDP without recompute needs offloading at seq 8192"


def test_search_does_not_offload_under_per_layer_cuda_graphs() -> None:
    """Megatron-Core rejects offloading with per-layer graphs ("CUDA graphs not supported with CPU
    offloading."), so a run with them gets recompute instead."""
    ranked = search_layouts(
        LLAMA3_70B, Cluster(num_gpus=64, gpu_type="gb200"), seq_length=8192, global_batch_size=256,
        precision="fp8_cs", top_k=50, features=RunFeatures(cuda_graph="partial"), kb=knowledge_base(),
    )  # fmt: skip
    assert ranked and not [r for r in ranked if r.offload_layers]
