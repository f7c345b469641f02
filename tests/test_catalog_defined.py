"""Every function a bundled tree defines that returns a ConfigContainer has a catalog record; one the launcher
cannot reach says why. The count is independent of the extractor: a plain `ast` walk of the upstream git
mirror for `def ..._config(...) -> ConfigContainer`."""

from __future__ import annotations

import ast
import subprocess

import pytest

from assistant.catalog import load_catalog, resolve_recipe
from tests.conftest import BRIDGE_GIT

GIT = BRIDGE_GIT
REFS = {
    "0.3.1": "v0.3.1",
    "0.5.1": "v0.5.1",
    "0.6.0": "v0.6.0",
    "main": "067f987df03b8355b03192d88d70f1709fedf51a",
}
ROOTS = (
    "src/megatron/bridge/recipes/",
    "src/megatron/bridge/perf_recipes/",
    "src/megatron/bridge/diffusion/recipes/",
)
needs_git = pytest.mark.mirror


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(GIT), *args], capture_output=True, text=True, check=True).stdout


def _annotated_config_defs(ref: str) -> set[str]:
    names: set[str] = set()
    for path in _git("ls-tree", "-r", "--name-only", ref).splitlines():
        if not (path.endswith(".py") and path.startswith(ROOTS)):
            continue
        for node in ast.walk(ast.parse(_git("show", f"{ref}:{path}"))):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name.endswith("_config")
                and node.returns is not None
                and ast.unparse(node.returns).strip("'\"") == "ConfigContainer"
            ):
                names.add(node.name)
    return names


@needs_git
@pytest.mark.parametrize("version", sorted(REFS))
def test_every_function_returning_a_config_has_a_record(version: str) -> None:
    catalog = load_catalog(version)
    recorded = {r.name for r in catalog.recipes} | {r.canonical for r in catalog.recipes}
    defined = _annotated_config_defs(REFS[version])
    assert defined and sorted(defined - recorded) == []


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("gpt3_175b_pretrain_config", "main"),
        ("gpt3_175b_pretrain_config", "0.6.0"),
        ("gpt3_175b_pretrain_config", "0.5.1"),
        ("gpt3_175b_pretrain_config", "0.3.1"),
        ("qwen35_vl_27b_pretrain_mock_config", "main"),
        ("qwen25_vl_7b_finetune_config", "0.3.1"),
    ],
)
def test_unexported_recipes_are_records_the_launcher_cannot_reach(name: str, version: str) -> None:
    record = resolve_recipe(name, version=version)
    assert record.reachable is False
    assert "not exported by megatron.bridge.recipes" in (record.unreachable_reason or "")
    assert record.parallelism.tp is not None and record.source.line > 0


def test_every_unreachable_record_says_why() -> None:
    for version in REFS:
        missing = [
            r.name for r in load_catalog(version).recipes if not r.reachable and not r.unreachable_reason
        ]
        assert missing == [], version
