"""Throughput estimator: bubble, recompute and FLOPs bookkeeping, and agreement with a published row."""

from __future__ import annotations

import json

import pytest

from assistant.estimate.hardware import load_hardware
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import dims_of, flops_per_token
from assistant.estimate.throughput import Calibration, ThroughputEstimate, estimate_throughput, precision_key
from assistant.kb import knowledge_base
from assistant.records import ModelArch, Plan
from assistant.settings import KNOWLEDGE_BASE

# Public Hugging Face config.json values of meta-llama/Meta-Llama-3-70B.
LLAMA3_70B = ModelArch(
    hf_model_id="meta-llama/Meta-Llama-3-70B", family="llama", num_layers=80, hidden_size=8192,
    ffn_hidden_size=28672, num_attention_heads=64, num_query_groups=8, kv_channels=128, vocab_size=128256,
    source="huggingface.co/meta-llama/Meta-Llama-3-70B config.json",
)  # fmt: skip
HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))


def plan(gpus: int, tp: int, pp: int, vp: int | None, gbs: int, mbs: int = 1) -> Plan:
    dp = gpus // (tp * pp)
    return Plan(tp=tp, pp=pp, vp=vp, cp=1, ep=1, etp=None, sp=tp > 1, dp=dp, mbs=mbs, gbs=gbs,
                ga=gbs // (mbs * dp), num_gpus=gpus)  # fmt: skip


def run(p: Plan, calibration: Calibration | None = None, **settings) -> ThroughputEstimate:
    run_settings = RunSettings(seq_length=8192, precision="fp8_cs", **settings)
    return estimate_throughput(LLAMA3_70B, p, HW["h100"], run_settings, calibration=calibration)


def test_bubble_is_p_minus_1_over_m_v() -> None:
    est = run(plan(64, 4, 8, 5, 256))  # DP 2 -> 128 micro-batches
    assert est.bubble_fraction == pytest.approx(7 / (128 * 5))
    no_vp = run(plan(64, 4, 8, None, 256))
    assert no_vp.bubble_fraction == pytest.approx(7 / 128)
    assert no_vp.bubble_s > 4 * est.bubble_s


def test_more_micro_batches_shrink_the_bubble() -> None:
    speeds = [run(plan(64, 4, 8, None, gbs)).tokens_per_sec_per_gpu for gbs in (16, 64, 256)]
    assert speeds == sorted(speeds)


def test_full_recompute_costs_time() -> None:
    p = plan(64, 4, 8, 5, 256)
    assert run(p, recompute="full").step_time_s > run(p).step_time_s * 1.2


def test_model_tflops_is_flops_per_token_times_tokens() -> None:
    est = run(plan(64, 4, 8, 5, 256))
    f_tok = flops_per_token(dims_of(LLAMA3_70B), 8192, 4).total
    assert est.model_tflops_per_gpu == pytest.approx(f_tok * est.tokens_per_sec_per_gpu / 1e12)
    assert est.mfu == pytest.approx(est.model_tflops_per_gpu / 1979)
    assert est.step_time_s == pytest.approx(256 * 8192 / (est.tokens_per_sec_per_gpu * 64))
    assert est.time_to_train(1e12) == pytest.approx(1e12 / (est.tokens_per_sec_per_gpu * 64))


def test_faster_gpu_is_faster() -> None:
    p = plan(64, 4, 8, 5, 256)
    h100 = estimate_throughput(LLAMA3_70B, p, HW["h100"], RunSettings(seq_length=8192, precision="bf16"))
    b200 = estimate_throughput(LLAMA3_70B, p, HW["b200"], RunSettings(seq_length=8192, precision="bf16"))
    assert b200.tokens_per_sec_per_gpu > 1.5 * h100.tokens_per_sec_per_gpu


def test_calibrated_estimate_matches_a_published_row() -> None:
    """26.04.01 DGX-H100, Llama3 70B FP8, 64 GPUs, TP4 PP8 VP5, GBS 256: 1664 tokens/s/GPU published."""
    est = run(plan(64, 4, 8, 5, 256), calibration=knowledge_base().calibration, grad_reduce_in_fp32=False)
    assert est.tokens_per_sec_per_gpu == pytest.approx(1664, rel=0.15)


def test_lora_model_flops_follow_bridges_lora_accounting() -> None:
    """Bridge counts a LoRA run's frozen GEMMs at 2/3 (no weight gradient): the 26.06 Llama3 70B LoRA rows
    publish 735 TFLOP/s at 2,643 tokens/s/GPU on H100, 2.78e11 FLOPs per token, against 4.33e11 for SFT.
    (Bridge's attention term uses the packed sequences' real lengths, so ours, at the full 4,096, is a few
    percent higher.)"""
    lora = run(plan(8, 4, 1, None, 32), mode="peft").flops_per_token
    sft = run(plan(8, 4, 1, None, 32), mode="sft").flops_per_token
    assert lora < 0.7 * sft
    four_k = estimate_throughput(
        LLAMA3_70B, plan(8, 4, 1, None, 32), HW["h100"], RunSettings(seq_length=4096, mode="peft")
    )
    assert four_k.flops_per_token == pytest.approx(735e12 / 2643, rel=0.06)
    assert four_k.model_tflops_per_gpu == pytest.approx(
        four_k.flops_per_token * four_k.tokens_per_sec_per_gpu / 1e12
    )


def test_precision_keys() -> None:
    assert [precision_key(p) for p in ("bf16", "fp8_cs", "fp8mx", "mxfp8", "nvfp4", "fp8_blockwise")] == [
        "bf16", "fp8", "mxfp8", "mxfp8", "nvfp4", "fp8",
    ]  # fmt: skip
    cal = Calibration(gemm_efficiency={"h100:fp8": 0.5})
    assert cal.gemm_eff("h100", "fp8_cs") == 0.5
    assert cal.gemm_eff("h100", "mxfp8") == 0.5  # falls back to the other FP8 flavour
    assert cal.gemm_eff("b200", "bf16") == cal.default_gemm_efficiency


def test_overlap_hides_at_most_the_compute_it_runs_under() -> None:
    """Even a perfectly overlapped gradient reduce-scatter and parameter all-gather (dp_exposed = 0) only
    hide under the one micro-batch they run with: the same tokens in eight small micro-batches leave
    less compute to hide under, and the rest of the transfer shows."""
    cal = Calibration(dp_exposed=0.0)
    one_big = run(plan(64, 8, 1, None, 64, mbs=8), calibration=cal)  # DP 8, GA 1, 8 sequences each
    eight_small = run(plan(64, 8, 1, None, 64, mbs=1), calibration=cal)  # the same tokens, GA 8
    assert one_big.exposed_comm_s.dp == 0.0
    assert eight_small.exposed_comm_s.dp > 0.0


def test_megatron_fsdp_reduces_gradients_after_every_micro_batch() -> None:
    """Megatron-FSDP (optim_grads_params) gathers the weights for every micro-batch's forward and backward
    and reduce-scatters the gradients after every backward: four micro-batches move four times the bytes of
    one. (Counting the reduce-scatter once per step gives about three.)"""
    cal = Calibration(dp_exposed=1.0)  # every byte exposed: compare the transfer times themselves

    def fsdp_dp_time(mbs: int) -> float:
        return run(plan(64, 8, 1, None, 64, mbs=mbs), fsdp=True, calibration=cal).exposed_comm_s.dp

    assert fsdp_dp_time(1) / fsdp_dp_time(4) == pytest.approx(4, rel=1e-6)


def test_every_micro_batch_accumulates_the_weight_gradients() -> None:
    """The same tokens in more micro-batches cost one more pass over the local weights' main gradients each
    (gradient-accumulation fusion reads and writes the buffer); LoRA's frozen weights have none."""
    cal = Calibration(layer_host_s=0.0, microbatch_overhead_s=0.0)

    def compute(mbs: int, mode: str) -> float:
        return run(plan(64, 8, 1, None, 64, mbs=mbs), calibration=cal, mode=mode).compute_s

    one, two, eight = compute(8, "pretrain"), compute(4, "pretrain"), compute(1, "pretrain")  # GA 1, 2, 8
    assert eight - one == pytest.approx(7 * (two - one), rel=1e-6)
    per_pass = 70.6e9 / 8 * 2 * 4 / HW["h100"].hbm_bw  # TP8 shard of the weights, fp32 read + write
    assert two - one == pytest.approx(per_pass, rel=0.05)
    assert compute(1, "peft") == pytest.approx(compute(8, "peft"), rel=1e-9)


def test_data_parallel_collectives_use_every_nic_of_the_group() -> None:
    """The same gradient bytes per GPU (70B over 8 model-parallel ranks), reduced over 8 DP ranks: inside a
    node over NVLink (TP1 PP8), across nodes with four DP ranks per node and so four NICs (TP2 PP4), and
    across nodes with one DP rank, one NIC, per node (TP8 PP1)."""
    cal = Calibration(dp_exposed=1.0)  # every byte exposed: compare the transfer times themselves

    def dp_time(tp: int, pp: int) -> float:
        return run(plan(64, tp, pp, None, 64), calibration=cal).exposed_comm_s.dp

    nvlink, four_nics, one_nic = dp_time(1, 8), dp_time(2, 4), dp_time(8, 1)
    assert nvlink < four_nics < one_nic
    assert one_nic / four_nics == pytest.approx(4, rel=0.05)


def test_the_output_layer_makes_the_last_pipeline_stage_the_slowest() -> None:
    # 80 layers on 8 stages split evenly, so the last stage also runs the output layer (128K vocab, about
    # 1.2 layers' worth of GEMMs for this model): every stage waits for it. Counting the loss as a layer
    # in the split (78 + embedding + loss over 8 stages of 10) leaves it no busier than the others.
    flat = run(plan(64, 4, 1, None, 256))  # the same GPUs, no pipeline: the mean per-GPU compute
    piped = run(plan(64, 4, 8, None, 256))
    balance = piped.compute_s / flat.compute_s
    assert 1.08 < balance < 1.2
    shorter = LLAMA3_70B.model_copy(update={"num_layers": 78})
    evened = estimate_throughput(
        shorter, plan(64, 4, 8, None, 256), HW["h100"], RunSettings(seq_length=8192, precision="fp8_cs")
    )
    evened_flat = estimate_throughput(
        shorter, plan(64, 4, 1, None, 256), HW["h100"], RunSettings(seq_length=8192, precision="fp8_cs")
    )
    assert evened.compute_s / evened_flat.compute_s < 1.02


def test_pipeline_sends_are_exposed_without_interleaving() -> None:
    # Megatron overlaps point-to-point sends with compute only in the interleaved schedule.
    hidden = Calibration(pp_exposed=0.0)
    assert run(plan(64, 4, 8, 5, 256), calibration=hidden).exposed_comm_s.pp == 0.0
    assert run(plan(64, 4, 8, None, 256), calibration=hidden).exposed_comm_s.pp > 0.0


def test_export_variants_borrow_the_fit_and_keep_their_own_links() -> None:
    # H800: the H100's chip and memory with NVLink cut to 400 GB/s; the fit has no H800 row, so it uses
    # the H100's efficiencies and only the TP traffic over the slower NVLink costs time.
    cal = knowledge_base().calibration
    assert HW["h800"].calibration_key == "h100" and HW["h100"].calibration_key == "h100"
    tensor_parallel = plan(64, 8, 2, None, 256)
    h100 = estimate_throughput(
        LLAMA3_70B, tensor_parallel, HW["h100"], RunSettings(seq_length=8192), calibration=cal
    )
    h800 = estimate_throughput(
        LLAMA3_70B, tensor_parallel, HW["h800"], RunSettings(seq_length=8192), calibration=cal
    )
    assert h800.exposed_comm_s.tp > h100.exposed_comm_s.tp
    assert h800.compute_s == pytest.approx(h100.compute_s)
