"""assistant.catalog (load, resolve, find, detect_version) and the `autorecipe recipes` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assistant.catalog import (
    available_versions,
    default_version,
    detect_version,
    find_recipes,
    load_catalog,
    resolve_recipe,
)
from assistant.errors import UserError
from ui.cli import app

TREES = Path(__file__).parent / "fixtures" / "recipe_trees"
RECORD_KEYS = {
    "name",
    "canonical",
    "aliases",
    "version",
    "kind",
    "family",
    "mode",
    "hf_model_id",
    "parallelism",
    "seq_length",
    "global_batch_size",
    "micro_batch_size",
    "min_gpus",
    "encoded_gpus",
    "gpu_type",
    "precision",
    "peft",
    "recompute",
    "cuda_graph",
    "fsdp",
    "packed_sequence",
    "source",
    "unknown",
}


def test_bundled_versions_and_default() -> None:
    assert available_versions() == ["0.3.1", "0.5.1", "0.6.0", "main"]
    assert default_version() == "0.6.0" and load_catalog().version == "0.6.0"
    assert load_catalog("v0.5.1").version == "0.5.1"


def test_unknown_version_lists_available() -> None:
    with pytest.raises(UserError, match=r"0\.3\.1, 0\.5\.1, 0\.6\.0, main"):
        load_catalog("0.1.0")


def test_resolve_alias_and_kind() -> None:
    record = resolve_recipe("llama3_8b_pretrain_config")
    assert record.canonical == "llama3_8b_pretrain_2gpu_h100_bf16_config"
    both = "llama3_70b_peft_8gpu_h100_bf16_config"
    assert resolve_recipe(both, version="main").kind == "library"
    assert resolve_recipe(both, version="main", kind="benchmark").parallelism.vp == 20


def test_unknown_name_suggests_three_close_names() -> None:
    with pytest.raises(UserError) as error:
        resolve_recipe("wan_1_3B_pretrain_config")
    message = str(error.value)
    assert "Closest names: wan_1_3b_pretrain_config" in message
    assert message.count(",") >= 2


def test_find_recipes_filters() -> None:
    found = find_recipes(family="qwen", mode="pretrain", kind="library", hf_model_id="Qwen/Qwen3-30B-A3B")
    assert found and all(r.family == "qwen" and r.mode == "pretrain" for r in found)
    assert "qwen3_30b_a3b_pretrain_config" in {r.name for r in found}
    assert find_recipes(version="0.3.1", kind="benchmark")[0].kind == "benchmark"


def test_detect_version_from_checkout_and_metadata(tmp_path: Path) -> None:
    assert detect_version(TREES / "v06_hw") == "0.6.0"  # package_info.py says 0.6.1
    site = tmp_path / "site-packages"
    (site / "megatron" / "bridge").mkdir(parents=True)
    (site / "megatron_bridge-0.5.0.dist-info").mkdir()
    # 0.5.0 lies between the bundled 0.3.1 and 0.5.1: the one resolver answers from the earlier one
    assert detect_version(site / "megatron" / "bridge") == "0.3.1"
    assert detect_version(tmp_path) is None
    with pytest.raises(UserError):
        detect_version(tmp_path / "missing")


runner = CliRunner()


def test_cli_list_json_has_full_records() -> None:
    result = runner.invoke(
        app, ["recipes", "list", "--version", "0.5.1", "--family", "qwen", "--kind", "library", "--json"]
    )
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert records and set(records[0]) >= RECORD_KEYS
    assert all(r["family"] == "qwen" and r["kind"] == "library" for r in records)


def test_cli_show_and_diff() -> None:
    shown = runner.invoke(app, ["recipes", "show", "llama3_8b_128k_pretrain_config", "--json"])
    assert shown.exit_code == 0 and json.loads(shown.output)["min_gpus"] == 64
    diff = runner.invoke(
        app,
        ["recipes", "diff", "qwen3_30b_a3b_pretrain_config", "--from", "0.5.1", "--to", "0.6.0", "--json"],
    )
    changes = {c["field"]: (c["from"], c["to"]) for c in json.loads(diff.output)}
    assert changes["parallelism.ep"] == (4, 16) and changes["parallelism.tp"] == (4, 1)


def test_cli_rejects_bad_kind() -> None:
    result = runner.invoke(app, ["recipes", "list", "--kind", "perf"])
    assert result.exit_code != 0 and isinstance(result.exception, UserError)


def test_cli_index_writes_atomically(tmp_path: Path) -> None:
    out = tmp_path / "out" / "catalog.json"
    result = runner.invoke(app, ["recipes", "index", str(TREES / "v06_hw"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    catalog = json.loads(out.read_text())
    assert catalog["version"] == "0.6.1" and catalog["source"]["kind"] == "checkout"
    assert {"llama3_8b_pretrain_config", "qwen3_30b_a3b_pretrain_config"} <= {
        r["name"] for r in catalog["recipes"]
    }
    assert sorted(p.name for p in out.parent.iterdir()) == ["catalog.json"]  # no temp files left behind
    missing = runner.invoke(app, ["recipes", "index", str(tmp_path / "nope"), "--out", str(out)])
    assert isinstance(missing.exception, UserError)


def test_detect_version_from_git_tag(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "Megatron-Bridge"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    for command in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "x"], ["tag", "v0.5.1"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True, env=env, capture_output=True)
    assert detect_version(repo) == "0.5.1"


def test_detect_version_from_installed_distribution(monkeypatch) -> None:
    from importlib import metadata

    installed: dict[str, str] = {"megatron-bridge": "0.6.0"}

    def fake_version(name: str) -> str:
        if name in installed:
            return installed[name]
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", fake_version)
    assert detect_version() == "0.6.0"
    installed.clear()
    assert detect_version() is None
