"""`autorecipe check` / `autorecipe plan` end to end through the installed console script."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_rules_fixtures import CATALOG_DIR, VERSIONS, catalog_launcher, parser_from_flags

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("autorecipe")
pytestmark = [
    pytest.mark.integration,  # the CLI end to end
    pytest.mark.skipif(not (CATALOG_DIR / "0.6.0.json").exists(), reason="recipe catalogs not built yet"),
]


def cli(*args: str) -> subprocess.CompletedProcess:
    command = [str(SCRIPT)] if SCRIPT.exists() else [shutil.which("autorecipe") or "autorecipe"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )


def as_json(*args: str) -> dict:
    result = cli(*args, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_check_valid_recipe_json_shape():
    data = as_json("check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8")
    assert set(data) == {"config", "findings", "valid", "recipe_resolution", "fit"}
    assert data["valid"] is True
    config = data["config"]
    assert (config["tp"], config["cp"], config["dp"], config["num_gpus"]) == (1, 2, 4, 8)
    for item in data["findings"]:
        assert {"id", "severity", "message", "upstream_error", "fix"} <= set(item)


def test_check_reports_the_upstream_error_and_exits_nonzero():
    result = cli("check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "tp=3", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["valid"] is False
    heads = next(item for item in data["findings"] if item["id"] == "tp-heads")
    assert (
        heads["upstream_error"]
        == "num_attention_heads (32) must be a multiple of tensor_model_parallel_size (3)."
    )
    assert heads["fix"] == "model.tensor_model_parallel_size=2"


def test_check_version_and_dataset_rules():
    data = as_json(
        "check", "--recipe", "llama3_8b_sft_config", "--version", "0.6.0", "--gpus", "8", "--dataset", "mock"
    )
    mode = next(item for item in data["findings"] if item["id"] == "mode-dataset")
    assert mode["upstream_error"] == "Mode 'sft' is incompatible with dataset 'mock'."
    older = as_json(
        "check", "--recipe", "llama3_8b_pretrain_config", "--version", "0.3.1", "--gpus", "8", "tp=16"
    )
    groups = next(item for item in older["findings"] if item["id"] == "tp-query-groups")
    assert (
        groups["upstream_error"]
        == "num_query_groups (8) must be a multiple of tensor_model_parallel_size (16)."
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_plan_json_shape_and_commands_parse_for_every_version(version):
    if not (CATALOG_DIR / f"{version}.json").exists():
        pytest.skip(f"catalog {version} not built")
    data = as_json("plan", "--recipe", "llama3_8b_pretrain_config", "--version", version, "--gpus", "16")
    assert {"plan", "overrides", "findings", "commands"} <= set(data)
    assert set(data["plan"]) == {
        "tp",
        "pp",
        "vp",
        "cp",
        "ep",
        "etp",
        "sp",
        "dp",
        "mbs",
        "gbs",
        "ga",
        "num_gpus",
    }
    plan = data["plan"]
    assert plan["tp"] * plan["pp"] * plan["cp"] * plan["dp"] == 16
    assert plan["gbs"] == plan["mbs"] * plan["dp"] * plan["ga"]
    for item in data["overrides"]:
        assert {"key", "value", "reason", "class"} <= set(item)
        assert item["class"] in ("convergence", "execution", "benchmark-only")
    commands = data["commands"]
    assert {"torchrun", "multinode", "slurm"} <= set(commands)
    assert commands["torchrun"] is None  # 16 GPUs need two nodes
    spec = catalog_launcher(version)
    tokens = shlex.split(commands["multinode"].replace("$NODE_RANK", "0").replace("$MASTER_ADDR", "h"))
    start = tokens.index(spec.script)
    parsed, unknown = parser_from_flags(spec.flags).parse_known_args(tokens[start + 1 :])
    assert parsed.recipe == "llama3_8b_pretrain_config"
    assert all("=" in item for item in unknown)
    assert "#SBATCH --nodes=2" in commands["slurm"]


def test_plan_single_node_torchrun_and_text_output():
    result = cli("plan", "--recipe", "llama3_8b_sft_config", "--gpus", "8")
    assert result.returncode == 0, result.stderr
    assert "Plan" in result.stdout and "torch.distributed.run --nproc_per_node=8" in result.stdout
    assert "--dataset squad" in result.stdout


def test_plan_that_cannot_fit_says_how_many_gpus():
    result = cli("plan", "--recipe", "qwen3_30b_a3b_sft_config", "--gpus", "4", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["plan"] is None and data["findings"][0]["id"] == "does-not-fit"
    assert data["findings"][0]["fix"].startswith("--gpus ")


def test_plan_search_option():
    data = as_json("plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--search")
    search = data["search"]
    assert search["available"] is True and search["layouts"]
    assert all(layout["plan"]["num_gpus"] == 8 for layout in search["layouts"])
    assert [layout["rank"] for layout in search["layouts"]] == list(range(1, len(search["layouts"]) + 1))
    # The search runs in the precision the overrides set, not the recipe's.
    fp8 = as_json(
        "plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--search",
        "mixed_precision=bf16_with_fp8_current_scaling_mixed",
    )["search"]["layouts"]  # fmt: skip
    speed = "tokens_per_sec_per_gpu"
    assert fp8[0]["throughput"][speed] > search["layouts"][0]["throughput"][speed]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--recipe", "no_such_recipe_config", "--gpus", "8"], "no recipe named"),
        (["plan", "--recipe", "no_such_recipe_config", "--gpus", "8"], "no recipe named"),
        (["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "tp2"], "malformed override"),
        (["plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "=4"], "malformed override"),
        (["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "0"], "positive"),
        (["plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "-4"], "positive"),
        (
            ["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--gpu-type", "tpu"],
            "unknown GPU type",
        ),
        (["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--version", "banana"], "version"),
        (["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "tp=two"], "integer"),
    ],
)
def test_bad_input_gets_a_message_not_a_traceback(args, message):
    result = cli(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert message in result.stderr
