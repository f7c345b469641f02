"""Property tests: over random architectures, clusters and sequence lengths every plan is self-consistent.

For any plan resize() returns: it passes validate(), TP·PP·CP·DP equals the world size, the expert
mesh PP·EP·ETP divides it, and GBS = MBS·DP·GA exactly. When no plan is returned there is an error
finding that says why.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.kb import knowledge_base
from assistant.planning.resize import resize
from assistant.records import Cluster, ModelArch
from assistant.rules.validate import has_errors, validate
from tests.test_rules_fixtures import make_record

POW2 = [1, 2, 4, 8, 16]


@st.composite
def architectures(draw) -> ModelArch:
    heads = draw(st.sampled_from([8, 12, 16, 24, 32, 40, 48, 64, 96, 128]))
    groups = draw(st.sampled_from([g for g in (1, 2, 4, 8, 16, 32, heads) if heads % g == 0]))
    head_dim = draw(st.sampled_from([64, 128]))
    hidden = heads * head_dim
    moe = draw(st.booleans())
    experts = draw(st.sampled_from([8, 16, 32, 60, 64, 128, 256])) if moe else None
    return ModelArch(
        hf_model_id="test/random",
        family="random",
        num_layers=draw(st.integers(min_value=2, max_value=96)),
        hidden_size=hidden,
        ffn_hidden_size=draw(st.integers(min_value=2, max_value=4)) * hidden,
        num_attention_heads=heads,
        num_query_groups=groups,
        vocab_size=draw(st.sampled_from([32_000, 128_256, 151_936])),
        num_moe_experts=experts,
        moe_router_topk=2 if moe else None,
        moe_ffn_hidden_size=hidden // 2 if moe else None,
        source="hypothesis",
    )


@st.composite
def recipes(draw, arch: ModelArch):
    mode = draw(st.sampled_from(["pretrain", "sft", "peft"]))
    return make_record(
        name=f"random_{mode}_config",
        version=draw(st.sampled_from(["0.3.1", "0.5.1", "0.6.0", "main"])),
        mode=mode,
        peft="lora" if mode == "peft" else None,
        tp=draw(st.sampled_from(POW2)),
        pp=draw(st.sampled_from(POW2)),
        cp=draw(st.sampled_from([1, 2, 4])),
        ep=draw(st.sampled_from(POW2)) if arch.num_moe_experts else None,
        seq=draw(st.sampled_from([2048, 4096, 8192])),
        gbs=draw(st.sampled_from([8, 32, 96, 128, 512, 1000, 2048])),
        mbs=draw(st.sampled_from([1, 2, 4])),
        encoded_gpus=draw(st.sampled_from([None, 8, 64])),
        packed_sequence=draw(st.booleans()) if mode != "pretrain" else None,
    )


@pytest.mark.integration  # hundreds of generated plans through resize and validate
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_plan_is_valid_and_consistent(data):
    arch = data.draw(architectures())
    record = data.draw(recipes(arch))
    gpu_type = data.draw(st.sampled_from(sorted(knowledge_base().hardware)))
    per_node = 4 if gpu_type in ("gb200", "gb300") else 8
    gpus = data.draw(
        st.one_of(st.integers(min_value=1, max_value=2048), st.sampled_from([1, 8, 64, 256, 2048]))
    )
    seq = data.draw(st.sampled_from([None, 1000, 4096, 16384, 32768, 131072]))
    cluster = Cluster(num_gpus=gpus, gpu_type=gpu_type, gpus_per_node=per_node)
    result = resize(record, arch, cluster, None, seq, kb=knowledge_base())
    if result.plan is None:
        assert has_errors(result.findings)
        return
    plan = result.plan
    assert plan.num_gpus == gpus
    assert plan.tp * plan.pp * plan.cp * plan.dp == gpus
    assert plan.gbs == plan.mbs * plan.dp * plan.ga
    if arch.num_moe_experts:
        assert gpus % (plan.pp * plan.ep * (plan.etp or plan.tp)) == 0
        assert arch.num_moe_experts % plan.ep == 0
    assert plan.sp == (plan.tp > 1)
    assert arch.num_attention_heads % plan.tp == 0
    # Resize keeps whole KV heads per rank, except the recipe's own TP where Megatron replicates them.
    groups = arch.num_query_groups or arch.num_attention_heads
    assert groups % plan.tp == 0 or plan.tp == record.parallelism.tp
    if plan.vp is not None:
        assert plan.pp > 1 and (arch.num_layers // plan.pp) % plan.vp == 0
    findings = validate(
        result.config, arch, cluster, result.config.version, gpu=knowledge_base().gpu_spec(cluster.gpu_type)
    )
    assert not has_errors(findings), [item.id for item in findings if item.severity == "error"]
    changed_gbs = [item for item in result.overrides if item.key == "train.global_batch_size"]
    assert all(item.change_class == "convergence" for item in changed_gbs)
