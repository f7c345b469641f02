"""Performance features: read from real extracted recipes (old and new field names), matched to the published
perf rows of their release, and each one moves the throughput estimate the way the hardware says."""

from __future__ import annotations

import json

import pytest

from assistant.catalog import load_catalog
from assistant.estimate.features import RunFeatures, cuda_graph_kind, features_from_fields
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import Calibration, estimate_throughput
from assistant.kb import knowledge_base
from assistant.settings import KNOWLEDGE_BASE
from ingest.calibration_fit import plan_of_row
from ingest.perf_features import BRIDGE_TAG_OF_RELEASE, match_recipe, run_settings
from tests.archs import QWEN3_30B

ROWS = json.loads((KNOWLEDGE_BASE / "calibration" / "perf_rows.json").read_text())["rows"]
ALL_ON = RunFeatures(
    cuda_graph="full_iteration",
    moe_a2a_overlap=True,
    fp8_attention=True,
    fused_grouped_mlp=True,
    flex_dispatcher=True,
)


def _recipe(version: str, name: str):
    return next(r for r in load_catalog(version).recipes if r.name == name)


def test_old_workload_config_fields_give_the_features() -> None:
    """0.5.1 kept benchmark settings in scripts/performance WorkloadBaseConfig constants."""
    record = _recipe("0.5.1", "qwen3_30b_a3b_pretrain_config_gb200_fp8_mx_v1")
    assert features_from_fields(record.fields) == ALL_ON
    bf16 = _recipe("0.5.1", "qwen3_30b_a3b_pretrain_config_gb200_bf16_v1")
    assert not features_from_fields(bf16.fields).fp8_attention


def test_config_container_fields_give_the_same_features() -> None:
    """0.6.0 moved them into perf_recipes functions that write ConfigContainer paths."""
    record = _recipe("0.6.0", "qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config")
    # The recipe also fuses the cross-entropy in Transformer Engine (a memory term, not a speed feature).
    assert features_from_fields(record.fields) == ALL_ON.model_copy(update={"te_cross_entropy": True})


def test_multi_token_prediction_is_read_from_the_recipe_and_costs_time() -> None:
    """Nemotron 3 Super's recipes set model.mtp_num_layers=2; each pass runs one attention and one MoE layer
    and another output layer, so the same layout is slower with them."""
    from assistant.models import load_model_arch
    from assistant.records import Plan

    record = _recipe("0.6.0", "nemotron_3_super_pretrain_64gpu_gb300_fp8mx_config")
    features = features_from_fields(record.fields)
    assert features.mtp_layers == 2 and "2 multi-token-prediction blocks" in features.describe()
    arch = load_model_arch("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", kb=knowledge_base())
    plan = Plan.sized(num_gpus=64, tp=1, pp=1, cp=1, mbs=1, gbs=512, vp=None, ep=64, etp=1, sp=False)

    def speed(mtp: int) -> float:
        run = features.model_copy(update={"mtp_layers": mtp})
        return estimate_throughput(
            arch,
            plan,
            knowledge_base().gpu_spec("gb300"),
            RunSettings(seq_length=8192, precision="mxfp8", features=run),
        ).tokens_per_sec_per_gpu

    assert speed(2) < 0.95 * speed(0)


def test_cuda_graph_spellings() -> None:
    assert cuda_graph_kind(None, "full_iteration") == "full_iteration"  # <= 0.4: a scope name
    assert cuda_graph_kind("full_iteration", []) == "full_iteration"
    assert cuda_graph_kind("transformer_engine", ["attn", "moe_router"]) == "partial"
    assert cuda_graph_kind("none", []) is None
    assert cuda_graph_kind("none", "full") is None  # library recipes: impl off, scope at its default
    assert cuda_graph_kind("local", ["attn"]) == "partial"
    assert cuda_graph_kind(None, None) is None


def test_perf_rows_match_their_release_recipe() -> None:
    """Each 26.06.01 row is matched again, from the committed 0.5.1 catalog, to the recipe recorded."""
    recipes = [r for r in load_catalog("0.5.1").recipes if r.kind == "benchmark"]
    rows = [r for r in ROWS if r["release"] == "26.06.01" and r.get("features_source")]
    assert len(rows) >= 10
    for row in rows:
        recipe = match_recipe(row, recipes)
        assert recipe is not None and recipe.name == row["features_source"]["recipe"]
        assert features_from_fields(recipe.fields).to_json() == row["features"]
        assert row["features_source"]["tag"] == BRIDGE_TAG_OF_RELEASE["26.06.01"] == "v0.5.1"


def test_25_11_rows_carry_the_features_of_the_v0_2_0_presets() -> None:
    """25.11 shipped v0.2.0, whose presets use the first naming (<MODEL>_<GPU>_<PREC>_BASE_CONFIG); the rows
    whose layout one of them gives carry its features, e.g. Qwen3 30B-A3B on GB200 with HybridEP and partial
    CUDA graphs."""
    rows = [r for r in ROWS if r["release"] == "25.11" and r.get("features_source")]
    assert len(rows) >= 10
    assert {r["features_source"]["tag"] for r in rows} == {"v0.2.0"}
    assert all(r["features_source"]["recipe"].endswith("_base_config") for r in rows)
    qwen = next(r for r in rows if r["model"] == "qwen3_30b_a3b" and r["gpu"] == "gb200")
    assert qwen["features"]["flex_dispatcher"] and qwen["features"]["cuda_graph"] == "partial"


def test_perf_rows_carry_the_recompute_and_offloading_their_recipe_ran() -> None:
    """The fit estimates each row as it ran: the 0.5.1 GPT-OSS GB200 BF16 recipe recomputes the norms and
    the expert activation; its MXFP8 successor clears the list (nothing recomputed); the Llama 3 70B
    GB200 FP8 Megatron-FSDP recipe offloads 40 layers."""
    bf16 = _recipe("0.5.1", "gpt_oss_120b_pretrain_config_gb200_bf16_v2")
    assert run_settings(bf16) == {
        "recompute": "selective", "recompute_modules": ["layernorm", "moe_act"], "offload_layers": 0,
    }  # fmt: skip
    mxfp8 = _recipe("0.5.1", "gpt_oss_120b_pretrain_config_gb200_fp8_mx_v2")
    assert run_settings(mxfp8)["recompute"] is None
    fsdp = _recipe("0.5.1", "llama3_70b_pretrain_config_gb200_fp8_cs_v2")
    assert run_settings(fsdp)["offload_layers"] == 40
    assert run_settings(None) == {"recompute": None, "recompute_modules": None, "offload_layers": 0}
    for row in (r for r in ROWS if r.get("features_source")):
        assert {"recompute", "recompute_modules", "offload_layers"} <= row.keys()
    assert sum(1 for r in ROWS if r.get("recompute")) >= 40
    assert any(r["offload_layers"] for r in ROWS if r["fsdp"])


def test_a_layout_that_differs_from_the_recipe_is_not_matched() -> None:
    recipes = [r for r in load_catalog("0.5.1").recipes if r.kind == "benchmark"]
    row = next(r for r in ROWS if r["release"] == "26.06.01" and r.get("features_source"))
    assert match_recipe({**row, "gbs": row["gbs"] * 3}, recipes) is None


def _qwen(features: RunFeatures | None, precision: str = "mxfp8", cal: Calibration | None = None):
    row = next(
        r for r in ROWS if r["model"] == "qwen3_30b_a3b" and r["gpu"] == "gb200" and r["release"] == "26.06"
    )
    return estimate_throughput(
        QWEN3_30B,
        plan_of_row(row),
        knowledge_base().gpu_spec("gb200"),
        RunSettings(seq_length=row["seq_length"], precision=precision, features=features or RunFeatures()),
        calibration=cal or knowledge_base().calibration,
    )


def test_fp8_attention_is_faster_only_in_low_precision() -> None:
    fp8 = RunFeatures(fp8_attention=True)
    assert _qwen(fp8).step_time_s < _qwen(None).step_time_s
    assert _qwen(fp8, "bf16").step_time_s == pytest.approx(_qwen(None, "bf16").step_time_s)


def test_cuda_graphs_remove_launch_time_in_order() -> None:
    cal = knowledge_base().calibration
    assert cal.layer_host_s > 0
    steps = [_qwen(RunFeatures(cuda_graph=kind)).step_time_s for kind in (None, "partial", "full_iteration")]
    assert steps[0] > steps[1] > steps[2]


def test_all_to_all_overlap_hides_expert_parallel_time() -> None:
    plain, overlapped = _qwen(None), _qwen(RunFeatures(moe_a2a_overlap=True))
    assert plain.exposed_comm_s.ep > 0
    assert overlapped.exposed_comm_s.ep == pytest.approx(
        plain.exposed_comm_s.ep * knowledge_base().calibration.ep_overlap_exposed
    )


def test_fused_expert_mlp_saves_memory_traffic() -> None:
    assert _qwen(RunFeatures(fused_grouped_mlp=True)).step_time_s < _qwen(None).step_time_s
    assert "fused grouped expert MLP" in " ".join(_qwen(ALL_ON).assumptions)


def test_flex_dispatch_sends_a_token_once_per_remote_node() -> None:
    """On H100 (8-GPU NVLink domain) EP16 spans two nodes: DeepEP/HybridEP cut the network bytes; inside one
    domain (EP8 on GB200's NVL72) there is no network traffic to cut."""
    row = next(r for r in ROWS if r["model"] == "qwen3_30b_a3b" and r["gpu"] == "h100" and r["ep"] == 16)
    layout, h100 = plan_of_row(row), knowledge_base().gpu_spec("h100")

    def ep_time(features: RunFeatures) -> float:
        est = estimate_throughput(
            QWEN3_30B,
            layout,
            h100,
            RunSettings(seq_length=4096, precision="fp8_cs", features=features),
            calibration=knowledge_base().calibration,
        )
        return est.exposed_comm_s.ep

    assert ep_time(RunFeatures(flex_dispatcher=True)) < 0.6 * ep_time(RunFeatures())
    inside = _qwen(RunFeatures(flex_dispatcher=True)).exposed_comm_s.ep
    assert inside == pytest.approx(_qwen(None).exposed_comm_s.ep)
