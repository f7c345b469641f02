"""`autorecipe estimate`: JSON shape for --recipe, --spec and --batch, and clear errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assistant.errors import UserError
from ui.cli import app

pytestmark = pytest.mark.integration  # the estimate command end to end

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()

SPEC = {
    # Qwen/Qwen3-30B-A3B public config.json in Megatron TransformerConfig names.
    "model": {
        "num_layers": 48, "hidden_size": 2048, "ffn_hidden_size": 6144, "num_attention_heads": 32,
        "num_query_groups": 4, "kv_channels": 128, "vocab_size": 151936, "num_moe_experts": 128,
        "moe_router_topk": 8, "moe_ffn_hidden_size": 768, "gated_linear_unit": True,
        "untie_embeddings_and_output_weights": True, "seq_length": 4096, "tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": 1, "expert_model_parallel_size": 8, "expert_tensor_parallel_size": 1,
        "sequence_parallel": False, "recompute_granularity": None,
    },
    "train": {"micro_batch_size": 2, "global_batch_size": 512},
    "ddp": {"use_distributed_optimizer": True},
    "mixed_precision": "bf16",
    "cluster": {"gpus": 8, "gpu_type": "h100", "gpus_per_node": 8},
}  # fmt: skip


def invoke(*args: str) -> dict:
    result = runner.invoke(app, ["estimate", *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return json.loads(result.output)


def check_shape(out: dict) -> None:
    assert {"peak_bytes", "usable_bytes", "fits", "breakdown"} <= set(out["memory"])
    assert set(out["memory"]["breakdown"]) == {
        "params",
        "grads",
        "optimizer",
        "activations",
        "logits",
        "overheads",
    }
    assert {"tokens_per_sec_per_gpu", "model_tflops_per_gpu", "mfu", "step_time_s"} <= set(out["throughput"])
    assert isinstance(out["assumptions"], list) and out["assumptions"]


def test_recipe_json() -> None:
    out = invoke("--recipe", "llama3_8b_peft_config", "--gpus", "1", "--json")
    check_shape(out)
    assert out["mode"] == "peft" and out["memory"]["fits"] is True
    assert out["plan"]["num_gpus"] == 1


def test_recipe_with_overrides_and_search() -> None:
    out = invoke(
        "--recipe", "llama3_70b_pretrain_config", "--gpus", "8", "tp=8", "pp=1", "cp=1", "vp=null", "gbs=128",
        "--search", "--json",
    )  # fmt: skip
    check_shape(out)
    assert out["plan"]["tp"] == 8 and out["memory"]["fits"] is False
    assert out["search"] == []
    assert out["nearest_fit"]["min_gpus"] >= 16


def test_recipe_with_cpu_offloading() -> None:
    """Llama 3 70B as Bridge's GB200 BF16 perf preset runs it: Megatron-FSDP, TP1, 20 layers offloaded."""
    args = [
        "--recipe", "llama3_70b_pretrain_config", "--gpus", "64", "--gpu-type", "gb200", "tp=1", "pp=1",
        "cp=1", "vp=null", "gbs=256", "ddp.use_megatron_fsdp=true", "model.recompute_granularity=null",
    ]  # fmt: skip
    offloaded = invoke(*args, "model.cpu_offloading=true", "model.cpu_offloading_num_layers=20", "--json")
    plain = invoke(*args, "--json")
    check_shape(offloaded)
    assert offloaded["memory"]["offloaded_bytes"] > 0 and plain["memory"]["offloaded_bytes"] == 0
    assert offloaded["memory"]["peak_bytes"] < plain["memory"]["peak_bytes"]
    assert any("offloading of 20 layers" in a for a in offloaded["assumptions"])


def test_the_estimates_track_record_on_the_models_published_runs() -> None:
    """GPT-OSS 120B in MXFP8 is the combination the estimate is known to overshoot (fit.json track_records,
    from the published rows); a spec file names no published model, so it has none."""
    out = invoke(
        "--recipe", "gpt_oss_120b_pretrain_config", "--gpus", "64", "--gpu-type", "b200",
        "mixed_precision=bf16_with_mxfp8_mixed", "--json",
    )  # fmt: skip
    track = out["track_record"]
    assert (track["hf_model_id"], track["precision"]) == ("openai/gpt-oss-120b", "mxfp8")
    assert track["runs"] >= 2 and track["mean_signed_error"] > 0.2


def test_spec_json(tmp_path: Path) -> None:
    spec = tmp_path / "qwen.json"
    spec.write_text(json.dumps(SPEC))
    out = invoke("--spec", str(spec), "--json", "--tokens", "1e12")
    check_shape(out)
    assert out["plan"]["ep"] == 8 and out["plan"]["dp"] == 8
    assert out["time_to_train_s"] > 0
    assert "track_record" not in out


def test_batch_lines_keep_their_ids(tmp_path: Path) -> None:
    spec = tmp_path / "qwen.json"
    spec.write_text(json.dumps(SPEC))
    batch = tmp_path / "calls.jsonl"
    lines = [
        {"id": "a", "args": ["--spec", str(spec), "--json"]},
        {"id": "b", "args": ["--recipe", "llama3_8b_peft_config", "--gpus", "1", "--json"]},
        {"id": "c", "args": ["--recipe", "no_such_recipe", "--gpus", "1"]},
    ]
    batch.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = runner.invoke(app, ["estimate", "--batch", str(batch), "--json"])
    assert result.exit_code == 0, result.output
    out = [json.loads(x) for x in result.output.splitlines()]
    assert [o["id"] for o in out] == ["a", "b", "c"]
    check_shape(out[0])
    check_shape(out[1])
    assert "no_such_recipe" in out[2]["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--recipe", "no_such_recipe", "--gpus", "8"], "no recipe named"),
        (["--recipe", "llama3_8b_peft_config"], "--gpus"),
        (["--recipe", "llama3_70b_pretrain_config", "--gpus", "8"], "not divisible"),
        (["--recipe", "llama3_8b_peft_config", "--gpus", "1", "--gpu-type", "tpu"], "unknown GPU type"),
        (["--gpus", "8"], "--recipe"),
        (["--recipe", "x", "--spec", "y.json"], "not allowed with"),
        (
            [
                "--recipe",
                "step37_sft_64gpu_h100_bf16_flickr8k_config",
                "--gpus",
                "64",
            ],
            "not estimated: stepfun-ai/Step-3.7-Flash: its text model is Step-3.5-Flash's",
        ),
        (
            [
                "--recipe",
                "llama3_70b_pretrain_config",
                "--gpus",
                "64",
                "--gpu-type",
                "gb200",
                "model.cpu_offloading=true",
                "model.cpu_offloading_num_layers=20",
            ],
            "Pipeline parallelism with CPU offloading",
        ),
    ],
)
def test_bad_input_is_a_user_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["estimate", *args])
    assert isinstance(result.exception, UserError)
    assert message in str(result.exception)


def test_bad_spec_is_a_user_error(tmp_path: Path) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text('{"model": {"num_layers": 2}}')
    result = runner.invoke(app, ["estimate", "--spec", str(spec)])
    assert isinstance(result.exception, UserError)
    assert "missing" in str(result.exception)


def test_console_script_prints_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ui.cli", "estimate", "--recipe", "no_such_recipe", "--gpus", "8"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "no recipe named" in proc.stderr and "Traceback" not in proc.stderr


def test_spec_features_change_the_speed_and_are_stated(tmp_path: Path) -> None:
    plain, tuned = tmp_path / "plain.json", tmp_path / "tuned.json"
    plain.write_text(json.dumps(SPEC))
    model = {**SPEC["model"], "cuda_graph_impl": "transformer_engine", "cuda_graph_scope": ["moe_router"],
             "overlap_moe_expert_parallel_comm": True, "moe_token_dispatcher_type": "flex"}  # fmt: skip
    tuned.write_text(json.dumps({**SPEC, "model": model}))
    slow, fast = invoke("--spec", str(plain), "--json"), invoke("--spec", str(tuned), "--json")
    assert fast["throughput"]["step_time_s"] < slow["throughput"]["step_time_s"]
    stated = " ".join(fast["assumptions"])
    assert "partial CUDA graphs" in stated and "MoE all-to-all overlap" in stated
    assert "none (no CUDA graphs, no overlap)" in " ".join(slow["assumptions"])


def test_the_deepseek_v4_pro_benchmark_recipe_is_estimated_to_fit() -> None:
    """Pro's record (Megatron-LM dev deepseek_v4_pro/gb300 recipe) closes its gap: Bridge's 256-GPU GB300
    performance recipe (TP1 PP4 VP4 EP64, MXFP8, core_attn offloaded) gets a number and fits; the 32-GPU
    library recipe holds 1.57T parameters on 32 GPUs and does not."""
    out = invoke(
        "--recipe", "deepseek_v4_pro_pretrain_256gpu_gb300_fp8mx_config",
        "--gpus", "256", "--gpu-type", "gb300", "--json",
    )  # fmt: skip
    check_shape(out)
    assert out["model"] == "deepseek-ai/DeepSeek-V4-Pro" and out["memory"]["fits"] is True
    small = invoke(
        "--recipe", "deepseek_v4_pro_pretrain_32gpu_gb300_bf16_config",
        "--gpus", "32", "--gpu-type", "gb300", "--json",
    )  # fmt: skip
    assert small["memory"]["fits"] is False


def test_recipe_with_an_inline_model_is_estimated() -> None:
    out = invoke("--recipe", "gemma3_1b_pretrain_config", "--gpus", "8", "--json")
    check_shape(out)
    assert out["model"] == "gemma3_1b_pretrain_1gpu_h100_bf16_config"  # its own provider, no HF id
    assert out["throughput"]["tokens_per_sec_per_gpu"] > 0


def test_spec_memory_fields_are_estimated_not_ignored(tmp_path: Path) -> None:
    """The attention backend, the cross-entropy fusion, the recompute method and LoRA's targets change the
    estimate through --spec as they do for a recipe."""

    def activations_and_logits(model_extra: dict, top: dict | None = None) -> tuple[float, float]:
        spec = tmp_path / "s.json"
        spec.write_text(json.dumps({**SPEC, **(top or {}), "model": {**SPEC["model"], **model_extra}}))
        out = invoke("--spec", str(spec), "--json")
        assert not any("not used by the estimator" in a for a in out["assumptions"])
        return out["memory"]["breakdown"]["activations"], out["memory"]["breakdown"]["logits"]

    base = activations_and_logits({})
    assert activations_and_logits({"attention_backend": "unfused"})[0] > base[0]
    assert (
        activations_and_logits({"cross_entropy_loss_fusion": True, "cross_entropy_fusion_impl": "te"})[1]
        < base[1]
    )
    lora_all = activations_and_logits({}, {"mode": "peft"})[0]
    lora_qkv = activations_and_logits({}, {"mode": "peft", "peft": {"target_modules": ["linear_qkv"]}})[0]
    assert lora_qkv < lora_all


def test_a_version_between_bundled_releases_is_answered_from_the_earlier_with_a_note() -> None:
    from ui.commands.estimate import parse_args, run_estimate

    call = ["--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--version"]
    out = run_estimate(parse_args([*call, "0.4.1"]))
    assert out["version"] == "0.3.1"
    assert "0.4.1 is not bundled" in out["version_note"] and "0.3.1" in out["version_note"]
    plain = run_estimate(parse_args([*call, "0.6.0"]))
    assert "version_note" not in plain


def test_an_unknown_version_is_refused_with_the_bundled_list() -> None:
    from ui.commands.estimate import parse_args, run_estimate

    call = ["--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--version", "9.9"]
    with pytest.raises(UserError) as refused:
        run_estimate(parse_args(call))
    message = str(refused.value)
    assert "bundled: 0.3.1, 0.5.1, 0.6.0, main" in message and "recipes index" in message
