"""Fields of `estimate --spec` that change the memory estimate: dropout, the transformer implementation,
the optimizer's state dtypes, FP8 parameter gathering, and the per-stage bytes a measurement compares to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assistant.errors import UserError
from assistant.kb import knowledge_base
from ui.cli import app

runner = CliRunner()
# A small dense GPT (Megatron-LM's functional-test size) on 2 pipeline stages of 8 A100s.
SPEC = {
    "model": {
        "num_layers": 12, "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 50257,
        "seq_length": 1024, "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
        "attention_dropout": 0.0, "hidden_dropout": 0.0,
    },
    "train": {"micro_batch_size": 4, "global_batch_size": 32},
    "ddp": {"use_distributed_optimizer": False},
    "mixed_precision": "bf16",
    "cluster": {"gpus": 8, "gpu_type": "a100"},
}  # fmt: skip
MIB = 1024**2
SCALE = knowledge_base().memory_overheads.activation_scale  # fit.json's factor on counted activations


def estimate(tmp_path: Path, model: dict | None = None, **top: dict) -> dict:
    return run(tmp_path, model, **top)["memory"]


def run(tmp_path: Path, model: dict | None = None, **top: dict) -> dict:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, **top, "model": {**SPEC["model"], **(model or {})}}))
    result = runner.invoke(app, ["estimate", "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert not any("not used by the estimator" in a for a in out["assumptions"]), out["assumptions"]
    return out


def test_attention_dropout_keeps_mask_and_output_of_unfused_scores(tmp_path: Path) -> None:
    """Unfused scores: 2 bytes each (softmax output) without dropout, 5 with (plus the bool mask and the
    dropout output); the first stage holds 6 layers × 2 micro-batches of 4 × 8 heads × 1024²."""
    plain = estimate(tmp_path, {"attention_backend": "unfused"})["stage_allocated_bytes"]["first"]
    dropped = estimate(tmp_path, {"attention_backend": "unfused", "attention_dropout": 0.1})
    scores = 6 * 2 * 4 * 8 * 1024 * 1024
    extra = dropped["stage_allocated_bytes"]["first"] - plain
    assert extra / SCALE == pytest.approx(3 * scores, rel=0.01)


def test_the_answer_says_what_dropout_keeps(tmp_path: Path) -> None:
    said = run(tmp_path, {"attention_backend": "unfused", "attention_dropout": 0.1, "hidden_dropout": 0.1})
    assert any("softmax output, dropout mask and output" in a for a in said["assumptions"])
    assert any("hidden dropout" in a for a in said["assumptions"])
    assert not any("dropout" in a for a in run(tmp_path)["assumptions"])


def test_flash_attention_ignores_attention_dropout(tmp_path: Path) -> None:
    assert (
        estimate(tmp_path, {"attention_dropout": 0.1})["allocated_bytes"]
        == estimate(tmp_path)["allocated_bytes"]
    )


def test_hidden_dropout_keeps_a_byte_per_sublayer_output(tmp_path: Path) -> None:
    base = estimate(tmp_path)["stage_allocated_bytes"]["first"]
    dropped = estimate(tmp_path, {"hidden_dropout": 0.1})["stage_allocated_bytes"]["first"]
    masks = 6 * 2 * 2 * 4 * 1024 * 512  # layers × micro-batches × sublayers × tokens × hidden, 1 byte
    assert (dropped - base) / SCALE == pytest.approx(masks, rel=0.01)


def test_unset_dropout_is_transformer_configs_default(tmp_path: Path) -> None:
    model = {k: v for k, v in SPEC["model"].items() if not k.endswith("dropout")}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "model": model}))
    out = json.loads(runner.invoke(app, ["estimate", "--spec", str(spec), "--json"]).output)
    assert (
        out["memory"]["allocated_bytes"]
        == estimate(tmp_path, {"hidden_dropout": 0.1, "attention_dropout": 0.1})["allocated_bytes"]
    )


def test_local_transformer_impl_materialises_the_scores(tmp_path: Path) -> None:
    local = estimate(tmp_path, {"transformer_impl": "local"})
    assert local == estimate(tmp_path, {"attention_backend": "unfused"})
    assert (
        local["allocated_bytes"]
        > estimate(tmp_path, {"transformer_impl": "transformer_engine"})["allocated_bytes"]
    )


def test_precision_aware_optimizer_dtypes_shrink_the_state(tmp_path: Path) -> None:
    adam = estimate(tmp_path)["breakdown"]["optimizer"]
    optimizer = {"use_precision_aware_optimizer": True, "main_params_dtype": "fp16",
                 "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16"}  # fmt: skip
    assert estimate(tmp_path, optimizer=optimizer)["breakdown"]["optimizer"] == pytest.approx(adam / 2)


def test_fp8_param_gather_stores_one_byte_weights(tmp_path: Path) -> None:
    h100 = {"gpus": 8, "gpu_type": "h100"}
    bf16 = estimate(tmp_path, mixed_precision="fp8", cluster=h100)["breakdown"]["params"]
    fp8 = estimate(tmp_path, {"fp8_param_gather": True}, mixed_precision="fp8", cluster=h100)["breakdown"][
        "params"
    ]
    assert fp8 < bf16


def test_every_checked_stage_reports_its_bytes(tmp_path: Path) -> None:
    memory = estimate(tmp_path)
    stages = memory["stage_allocated_bytes"]
    assert set(stages) == {"first", "last"}
    assert memory["allocated_bytes"] == max(stages.values())
    assert stages[memory["stage"]] == memory["allocated_bytes"]


@pytest.mark.parametrize("value", ["lots", 1.5, -0.1])
def test_bad_dropout_is_a_user_error(tmp_path: Path, value: object) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "model": {**SPEC["model"], "hidden_dropout": value}}))
    result = runner.invoke(app, ["estimate", "--spec", str(spec)])
    assert isinstance(result.exception, UserError)  # the CLI prints it as a message, not a traceback
    assert "hidden_dropout must be a number between 0 and 1" in str(result.exception)


def test_a_spec_can_describe_a_vision_tower_and_frozen_parts(tmp_path: Path) -> None:
    """A VLM in a spec: the tower's weights land on the first stage; the freeze_* flags leave the frozen
    parts without gradients or optimizer state."""
    tower = {
        "depth": 2, "hidden_size": 256, "ffn_hidden_size": 1024, "num_heads": 4, "patch_size": 16,
        "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 512, "tensor_parallel": True,
    }  # fmt: skip
    bare = estimate(tmp_path)
    with_tower = estimate(tmp_path, {"vision": tower})
    first = with_tower["stage_allocated_bytes"]["first"] - bare["stage_allocated_bytes"]["first"]
    last = with_tower["stage_allocated_bytes"]["last"] - bare["stage_allocated_bytes"]["last"]
    assert first > 0 and last == 0
    frozen = run(tmp_path, {"vision": tower, "freeze_language_model": True, "freeze_vision_model": True})
    assert frozen["memory"]["breakdown"]["grads"] < 0.05 * with_tower["breakdown"]["grads"]
    assert any("frozen: language model, vision model" in a for a in frozen["assumptions"])
