"""Two attention shapes in one model (Step-3.5-Flash, Gemma 4 26B-A4B): parameters, FLOPs, saved activations
and TP checks per shape, checked against the counts Bridge and the model cards publish (docs/estimators.md
section "Two attention shapes")."""

from __future__ import annotations

import json

import pytest

from assistant.errors import UserError
from assistant.estimate.hardware import load_hardware
from assistant.estimate.memory import _mix_elements, estimate_memory, stage_layers
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import (
    attention_shapes,
    causal_window_keys,
    dims_of,
    flops_per_token,
    layer_kinds,
    mix_of,
    mix_params,
    total_params,
    whole_model,
)
from assistant.records import ModelArch, Plan
from assistant.rules.findings import tp_allowed
from assistant.settings import KNOWLEDGE_BASE

STEP = ModelArch(**json.loads((KNOWLEDGE_BASE / "models" / "stepfun-ai__Step-3.5-Flash.json").read_text()))
GEMMA = ModelArch(**json.loads((KNOWLEDGE_BASE / "models" / "google__gemma-4-26B-A4B-it.json").read_text()))
HW = load_hardware(json.loads((KNOWLEDGE_BASE / "hardware.json").read_text()))


def test_layer_kinds_mark_the_second_shape_per_layer() -> None:
    """Step-3.5: full attention where i % 4 == 0, dense layers 0-2; Gemma 4: every sixth layer global."""
    kinds = layer_kinds(STEP)
    assert kinds[:8] == "DddxXxxx" and len(kinds) == 45
    assert (kinds.count("D"), kinds.count("d"), kinds.count("X"), kinds.count("x")) == (1, 2, 11, 31)
    assert dims_of(STEP).mtp_block == "d"  # dense MTP layers (_MTPDenseLayerSpecsList); layer 45 sliding
    assert layer_kinds(GEMMA) == "XXXXXx" * 5


def test_step35_count_matches_the_megatron_model_bridge_built() -> None:
    """Megatron-Bridge main examples/model_verification_cards/step35-flash/card.yaml: the CPU import built
    199,997,706,240 parameters, 33,525,780,480 per rank at EP8. Ours, plus what the estimators leave out
    (the 3 dense MTP layers with their eh_proj and three norms, and the 48 layers' q/k norms of 128 each)."""
    d = dims_of(STEP)
    h = d.hidden
    block = mix_params(d, mix_of(d.mtp_block))
    mtp = 3 * (block.tp_sharded + block.replicated + 2 * h * h + 3 * h)
    built = total_params(d) + mtp + 48 * 2 * 128
    assert built == 199_997_706_240
    routed = mix_params(d, whole_model(d)).routed
    assert built - routed * 7 / 8 == 33_525_780_480


def test_step35_matches_its_card_in_the_hf_layout() -> None:
    """The card's 196B total / 11B active: the HF layout gates each head with one g_proj row (Megatron's
    pinned core expands it to a full-width gate) and the card leaves out the embedding and output layer."""
    d = dims_of(STEP)
    gate = sum(n * d.hidden * (s.q_width - s.heads) for s, n in attention_shapes(d, whole_model(d)))
    hf = total_params(d) - gate - 2 * d.hidden * d.vocab
    routed = mix_params(d, whole_model(d)).routed
    assert round(hf / 1e9) == 196
    assert round((hf - routed * (1 - d.topk / d.experts)) / 1e9) == 11
    assert STEP.total_params == total_params(d)


def test_gemma4_26b_matches_its_card() -> None:
    """25.2B total / 3.8B active (text model): Megatron keeps V rows in the k_eq_v global layers' linear_qkv,
    which the HF checkpoint does not have."""
    d = dims_of(GEMMA)
    assert d.other is not None and GEMMA.other_k_eq_v
    v_rows = 5 * d.hidden * d.other.groups * d.other.head_dim
    hf = total_params(d) - v_rows
    routed = mix_params(d, whole_model(d)).routed
    assert round(hf / 1e9, 1) == 25.2
    assert round((hf - routed * (1 - d.topk / d.experts)) / 1e9, 1) == 3.8
    assert GEMMA.total_params == total_params(d)


def test_a_sliding_window_bounds_the_attention_core() -> None:
    """Full layers attend to s/2 keys on average (causal), sliding ones to at most their window."""
    s = 4096
    core = flops_per_token(dims_of(STEP), s).attention_core
    full = 6 * 12 * 64 * 128 * s
    sliding = 12 * 33 * 96 * 128 * causal_window_keys(513, s)
    assert core == pytest.approx(full + sliding)
    gemma = flops_per_token(dims_of(GEMMA), s).attention_core
    assert gemma == pytest.approx(12 * 25 * 16 * 256 * causal_window_keys(1024, s) + 6 * 5 * 16 * 512 * s)


def test_saved_activations_follow_each_layers_shape() -> None:
    """A sliding layer of Step-3.5 saves 96 heads' queries, softmax statistics and attention output, where a
    full layer saves 64; keys and values are 8 groups of 128 in both."""
    d = dims_of(STEP)
    sliding, full = _mix_elements(d, mix_of("x"), set()), _mix_elements(d, mix_of("X"), set())
    assert sliding[0] - full[0] == 32 * 128 + 2 * 32  # queries (kept whole) and fp32 softmax statistics
    assert sliding[1] - full[1] == 32 * 128  # the attention output, the output projection's GEMM input
    kinds = layer_kinds(STEP)
    stages = [stage_layers(kinds, 5, 1, rank) for rank in range(5)]
    assert sum(st.other_attn for st in stages) == 33 and stages[0].other_attn == 6


def _plan(gpus: int, tp: int, pp: int, cp: int, ep: int, gbs: int) -> Plan:
    dp = gpus // (tp * pp * cp)
    return Plan(tp=tp, pp=pp, vp=None, cp=cp, ep=ep, etp=1, sp=tp > 1, dp=dp, mbs=1, gbs=gbs, ga=gbs // dp,
                num_gpus=gpus)  # fmt: skip


def test_the_second_shape_changes_the_memory_estimate() -> None:
    """Gemma 4 with its global layers' real shape saves and holds more than if they were sliding layers."""
    run = RunSettings(seq_length=4096)
    real = estimate_memory(GEMMA, _plan(8, tp=2, pp=1, cp=1, ep=4, gbs=32), HW["h100"], run)
    one_shape = GEMMA.model_copy(update={"other_attention_layers": None, "other_num_attention_heads": None})
    flat = estimate_memory(one_shape, _plan(8, tp=2, pp=1, cp=1, ep=4, gbs=32), HW["h100"], run)
    assert real.breakdown.activations > flat.breakdown.activations
    assert real.breakdown.params > flat.breakdown.params
    step = estimate_memory(STEP, _plan(320, tp=1, pp=5, cp=8, ep=8, gbs=64), HW["h100"],
                           RunSettings(seq_length=4096, recompute="full"))  # fmt: skip
    assert step.breakdown.activations > 0 and step.peak_bytes > step.breakdown.params


def test_tp_must_divide_the_heads_of_both_shapes() -> None:
    assert tp_allowed(STEP, 32, "main")
    assert not tp_allowed(STEP, 64, "main")  # 64 full-attention heads split, the 96 sliding ones do not


def test_an_incomplete_second_shape_is_not_estimated() -> None:
    half = STEP.model_copy(update={"other_num_query_groups": None})
    with pytest.raises(UserError, match="is a model and its second attention shape is not whole"):
        dims_of(half)


# The public config.json values the records cite (their `source`), as a user's config.json gives them.
STEP_CONFIG = {
    "architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
    "num_hidden_layers": 45, "vocab_size": 128896, "num_attention_heads": 64, "num_attention_groups": 8,
    "head_dim": 128, "intermediate_size": 11264, "moe_num_experts": 288, "moe_top_k": 8,
    "moe_intermediate_size": 1280, "share_expert_dim": 1280,
    "moe_layers_enum": ",".join(map(str, range(3, 45))),
    "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)],
    "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
                                "num_attention_groups": 8, "head_dim": 128},
    "sliding_window": 512, "use_head_wise_attn_gate": True, "num_nextn_predict_layers": 3,
    "tie_word_embeddings": False,
}  # fmt: skip
GEMMA_CONFIG = {
    "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "vision_config": {},
    "text_config": {
        "model_type": "gemma4_text", "hidden_size": 2816, "num_hidden_layers": 30, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": 2,
        "attention_k_eq_v": True, "sliding_window": 1024, "layer_types": (["sliding_attention"] * 5
        + ["full_attention"]) * 5, "enable_moe_block": True, "num_experts": 128, "top_k_experts": 8,
        "moe_intermediate_size": 704, "intermediate_size": 2112, "vocab_size": 262144,
        "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True,
        "hidden_size_per_layer_input": 0,
    },
}  # fmt: skip


@pytest.mark.parametrize(("config", "record"), [(STEP_CONFIG, STEP), (GEMMA_CONFIG, GEMMA)])
def test_a_config_json_maps_to_the_bundled_record(config: dict, record: ModelArch) -> None:
    """load_local_config's mapping gives a user's config.json of either model the record's two shapes."""
    from assistant.models import arch_from_hf_config

    arch = arch_from_hf_config(config, record.hf_model_id, "test")
    assert layer_kinds(arch) == layer_kinds(record)
    assert dims_of(arch) == dims_of(record)
    assert (arch.total_params, arch.active_params) == (record.total_params, record.active_params)


def test_pipeline_stages_are_weighed_by_their_attention_shapes() -> None:
    """The same five wide global layers slow the pipeline when they all sit on the first stage, not when
    every stage holds one: the FLOPs are equal, the busiest stage is not."""
    from assistant.estimate.throughput import estimate_throughput

    wide = {"other_num_attention_heads": 64, "other_num_query_groups": 8}
    spread = GEMMA.model_copy(update=wide)
    clustered = GEMMA.model_copy(update={**wide, "other_attention_layers": (0, 1, 2, 3, 4)})
    layout, run = _plan(40, tp=1, pp=5, cp=1, ep=8, gbs=64), RunSettings(seq_length=8192)
    even = estimate_throughput(spread, layout, HW["h100"], run)
    uneven = estimate_throughput(clustered, layout, HW["h100"], run)
    assert even.flops_per_token == uneven.flops_per_token
    assert uneven.step_time_s > even.step_time_s * 1.02
