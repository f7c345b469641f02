"""Recipes as called: GPU-dependent values from upstream's helpers, per-goal calls, unreachable names and
names shared by a library and a benchmark recipe, on the bundled catalogs and through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.catalog import for_goal, on_gpu, resolution_note, resolve_recipe
from assistant.errors import UserError
from assistant.rules.commands import run_recipe_args

pytestmark = pytest.mark.integration  # the CLI end to end

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ui.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def test_flex_dispatcher_depends_on_the_gpu() -> None:
    record = resolve_recipe("qwen3_30b_a3b_peft_config", version="main")
    dispatcher = record.gpu_dependent["model.moe_token_dispatcher_type"]
    assert dispatcher.by_gpu["h100"] == dispatcher.by_gpu["b200"] == "flex"
    assert dispatcher.by_gpu["gb200"] == dispatcher.by_gpu["gb300"] == "alltoall"  # DeepEP falls back there
    assert dispatcher.environments["no_cuda"] == "flex"
    assert (
        dispatcher.source.path.endswith("training/flex_dispatcher_backend.py") and dispatcher.source.line > 0
    )
    assert record.fields["model.moe_token_dispatcher_type"] == "flex"  # the H100 the recipe is written for
    assert on_gpu(record, "gb200").fields["model.moe_token_dispatcher_type"] == "alltoall"
    assert on_gpu(record, "gb200").fields["model.moe_flex_dispatcher_backend"] is None


def test_before_0_6_the_helper_raises_without_cuda_and_keeps_alltoall_on_unsupported_gpus() -> None:
    record = resolve_recipe("qwen3_30b_a3b_pretrain_config", version="0.5.1")
    if "model.moe_token_dispatcher_type" not in record.gpu_dependent:
        pytest.skip("this release's recipe does not ask for a flex backend")
    dispatcher = record.gpu_dependent["model.moe_token_dispatcher_type"]
    assert "no_cuda" in dispatcher.raises
    assert dispatcher.by_gpu["gb200"] != "flex"


def test_cleared_cuda_graph_modules() -> None:
    record = resolve_recipe("llama3_70b_pretrain_64gpu_gb200_nvfp4_config", version="main", kind="benchmark")
    assert record.fields["model.cuda_graph_scope"] is None
    assert record.fields["model.cuda_graph_modules"] == []


def test_full_sft_call_of_a_0_3_1_finetune_recipe() -> None:
    record = resolve_recipe("ministral3_8b_finetune_config", version="0.3.1")
    assert (record.mode, record.parallelism.tp) == ("peft", 1)  # the function's own default: LoRA
    sft = for_goal(record, "sft")
    assert sft is not None and sft.parallelism.tp == 2 and sft.peft is None and sft.min_gpus == 2
    from assistant.catalog import load_catalog

    launcher = load_catalog("0.3.1").launcher
    assert "--peft_scheme" not in run_recipe_args(launcher, sft, None, None, mode="sft")
    lora = run_recipe_args(launcher, record, None, None, mode="peft")
    assert lora[lora.index("--peft_scheme") + 1] == "lora"


def test_a_name_both_kinds_share_is_resolved_explicitly() -> None:
    name = "deepseek_v3_pretrain_1024gpu_h100_bf16_config"
    library = resolve_recipe(name, version="0.6.0")
    benchmark = resolve_recipe(f"benchmark:{name}", version="0.6.0")
    assert (library.kind, benchmark.kind) == ("library", "benchmark")
    assert library.parallelism.pp == 16 and benchmark.parallelism.pp == 8
    assert resolution_note(name, library)["ambiguous"] is True
    assert resolution_note(f"benchmark:{name}", benchmark)["ambiguous"] is False
    with pytest.raises(UserError):
        resolve_recipe(f"benchmark:{name}", version="0.6.0", kind="library")


def test_cli_plan_says_which_kind_it_used() -> None:
    name = "deepseek_v3_pretrain_1024gpu_h100_bf16_config"
    result = cli(
        "plan", "--recipe", name, "--gpus", "1024", "--version", "0.6.0", "--kind", "benchmark", "--json"
    )
    data = json.loads(result.stdout)
    assert data["recipe_resolution"]["kind"] == "benchmark" and data["plan"]["gbs"] == 16384
    plain = cli("plan", "--recipe", name, "--gpus", "1024", "--version", "0.6.0", "--json")
    assert "both a library and a benchmark recipe" in plain.stderr
    assert json.loads(plain.stdout)["recipe_resolution"]["ambiguous"] is True


def test_cli_shows_an_unexported_recipe_and_why() -> None:
    result = cli("recipes", "show", "gpt3_175b_pretrain_config", "--version", "main", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["reachable"] is False and "not exported" in data["unreachable_reason"]
    assert data["resolution"]["kind"] == "library"


def test_answer_lines_say_what_the_launcher_can_reach_and_the_value_on_the_users_gpu() -> None:
    from assistant.compose_recipe import recipe_call_lines

    alias = resolve_recipe("gpt3_175b_pretrain_config", version="main")
    [line] = recipe_call_lines(alias, "h100", "en")
    assert "cannot be launched" in line and "`gpt3_175b_pretrain_32gpu_h100_bf16_config`" in line
    [line] = recipe_call_lines(resolve_recipe("gpt3_175b_pretrain_config", version="0.5.1"), "h100", "zh")
    assert "无法启动" in line and "自己的脚本" in line
    moe = on_gpu(resolve_recipe("qwen3_30b_a3b_peft_config", version="main"), "gb200")
    lines = recipe_call_lines(moe, "gb200", "en")
    assert any('`model.moe_token_dispatcher_type` is "alltoall"' in line and "H100" in line for line in lines)
