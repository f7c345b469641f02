"""Property: applying a finding's suggested fix removes that finding (for fixes that are KEY=VALUE)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.kb import knowledge_base
from assistant.records import Cluster
from assistant.rules.config import build_config
from assistant.rules.validate import validate
from tests.test_rules_fixtures import DEEPSEEK_LIKE, LLAMA3_8B, LLAMA3_70B, QWEN3_30B_A3B, make_record

ARCHS = [LLAMA3_8B, LLAMA3_70B, QWEN3_30B_A3B, DEEPSEEK_LIKE]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    arch=st.sampled_from(ARCHS),
    version=st.sampled_from(["0.3.1", "0.5.1", "0.6.0", "main"]),
    mode=st.sampled_from(["pretrain", "sft"]),
    tp=st.sampled_from([1, 2, 3, 4, 6, 8, 16]),
    pp=st.sampled_from([1, 2, 3, 4, 5, 8]),
    vp=st.sampled_from([None, 2, 3, 4, 5]),
    cp=st.sampled_from([1, 2, 4, 8]),
    ep=st.sampled_from([1, 2, 3, 4, 8, 16, 64]),
    gpus=st.sampled_from([8, 12, 16, 24, 32, 64, 128, 256]),
    seq=st.sampled_from([4096, 8190, 8192, 32768]),
    gbs=st.sampled_from([96, 128, 500, 512]),
    mbs=st.sampled_from([1, 2]),
)
def test_each_fix_clears_its_own_finding(arch, version, mode, tp, pp, vp, cp, ep, gpus, seq, gbs, mbs):
    record = make_record(version=version, mode=mode)
    overrides = [f"tp={tp}", f"pp={pp}", f"cp={cp}", f"seq_length={seq}", f"gbs={gbs}", f"mbs={mbs}"]
    overrides += [f"vp={vp}"] if vp else []
    overrides += [f"ep={ep}"] if arch.num_moe_experts else []
    cluster = Cluster(num_gpus=gpus)
    before = validate(
        build_config(record, overrides, version=version),
        arch,
        cluster,
        version,
        gpu=knowledge_base().gpu_spec(cluster.gpu_type),
    )
    for item in before:
        if item.severity != "error" or not item.fix or item.fix.startswith("-") or "/path/" in item.fix:
            continue
        fixed = build_config(record, [*overrides, *item.fix.split()], version=version)
        after = validate(fixed, arch, cluster, version, gpu=knowledge_base().gpu_spec(cluster.gpu_type))
        assert not [f for f in after if f.id == item.id and f.severity == "error"], (item.id, item.fix)
