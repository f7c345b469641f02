"""Bundled catalogs: complete, aliases resolved, library and benchmark kept apart, facts from the issue.

Completeness is checked against an independent, deliberately simple count: a plain walk of the
`__init__.py` star-import closure in the upstream git mirror (read with `git show`, no interpreter).
"""

from __future__ import annotations

import ast
import json
import subprocess
from functools import cache

import pytest

from assistant.catalog import load_catalog
from assistant.kb import knowledge_base
from ingest.recipes.names import OLD_PERF_NAME
from tests.conftest import BRIDGE_GIT

GIT = BRIDGE_GIT
REFS = {
    "0.3.1": "v0.3.1",
    "0.5.1": "v0.5.1",
    "0.6.0": "v0.6.0",
    "main": "067f987df03b8355b03192d88d70f1709fedf51a",
}
VERSIONS = sorted(REFS)
needs_git = pytest.mark.mirror


@cache
def _files(ref: str) -> frozenset[str]:
    out = subprocess.run(
        ["git", "-C", str(GIT), "ls-tree", "-r", "--name-only", ref],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(out.splitlines())


@cache
def _module(ref: str, path: str) -> ast.Module:
    text = subprocess.run(
        ["git", "-C", str(GIT), "show", f"{ref}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    return ast.parse(text)


def _path(ref: str, module: str, root: str = "src/") -> str | None:
    base = root + module.replace(".", "/")
    for candidate in (f"{base}/__init__.py", f"{base}.py"):
        if candidate in _files(ref):
            return candidate
    return None


def _public_names(ref: str, module: str, root: str = "src/", seen: frozenset[str] = frozenset()) -> set[str]:
    """Names `from module import *` binds: a literal __all__, else public top-level names."""
    path = _path(ref, module, root)
    if path is None or module in seen:
        return set()
    tree = _module(ref, path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {e.value for e in node.value.elts}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            if node.names[0].name == "*":
                names |= _public_names(ref, node.module, root, seen | {module})
            elif node.level or "recipes" in (node.module or ""):  # helpers from elsewhere are not recipes
                names.update(a.asname or a.name for a in node.names)
    return {n for n in names if not n.startswith("_")}


def _is_recipe(name: str) -> bool:
    return "config" in name and name == name.lower() and not name.startswith(("set_", "apply_"))


def _records(version: str, kind: str) -> dict[str, object]:
    return {r.name: r for r in load_catalog(version).recipes if r.kind == kind}


@pytest.mark.parametrize("version", VERSIONS)
def test_catalog_file_is_sorted_and_readable(version: str) -> None:
    payload = json.loads((knowledge_base().catalog_dir / f"{version}.json").read_text())
    keys = [(r["kind"], r["name"]) for r in payload["recipes"]]
    assert keys == sorted(keys)
    assert payload["version"] == version
    for record in payload["recipes"][:50]:
        assert set(record["parallelism"]) == {"tp", "pp", "vp", "cp", "ep", "etp", "sp"}
        assert {"path", "line"} <= set(record["source"])


@needs_git
@pytest.mark.parametrize("version", VERSIONS)
def test_every_exported_library_name_is_present(version: str) -> None:
    ref = REFS[version]
    top = _module(ref, "src/megatron/bridge/recipes/__init__.py")
    expected: set[str] = set()
    for node in top.body:
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            expected |= {n for n in _public_names(ref, node.module) if _is_recipe(n)}
    catalog = _records(version, "library")
    reachable = {name for name, r in catalog.items() if r.reachable}
    assert expected and expected == reachable


@needs_git
@pytest.mark.parametrize("version", ["0.6.0", "main"])
def test_every_exported_benchmark_name_is_present(version: str) -> None:
    ref = REFS[version]
    expected: set[str] = set()
    for path in _files(ref):
        parts = path.split("/")
        if (
            path.startswith("src/megatron/bridge/perf_recipes/")
            and len(parts) == 6
            and parts[5] == "__init__.py"
        ):
            expected |= {n for n in _public_names(ref, ".".join(parts[1:5])) if _is_recipe(n)}
    reachable = {name for name, r in _records(version, "benchmark").items() if r.reachable}
    assert expected and expected == reachable


@needs_git
@pytest.mark.parametrize("version", ["0.3.1", "0.5.1"])
def test_every_exported_workload_config_is_present(version: str) -> None:
    ref = REFS[version]
    expected: set[str] = set()
    for path in _files(ref):
        parts = path.split("/")
        if path.startswith("scripts/performance/configs/") and len(parts) == 5 and parts[4] == "__init__.py":
            module = "configs." + parts[3]
            names = _public_names(ref, module, root="scripts/performance/")
            expected |= {n.lower() for n in names if OLD_PERF_NAME.match(n)}
    benchmark = _records(version, "benchmark")
    assert expected and expected == {name for name, r in benchmark.items() if r.reachable}


@needs_git
@pytest.mark.parametrize("version", ["0.6.0", "main"])
def test_legacy_aliases_resolve_to_their_canonical_function(version: str) -> None:
    ref = REFS[version]
    library = _records(version, "library")
    checked = 0
    for path in _files(ref):
        parts = path.split("/")
        if not (path.startswith("src/megatron/bridge/recipes/") and len(parts) == 6 and path.endswith(".py")):
            continue
        for node in _module(ref, path).body:
            if (
                isinstance(node, ast.ImportFrom)
                and ".h100." in f".{node.module}."
                or (isinstance(node, ast.ImportFrom) and ".gb200." in f".{node.module}.")
            ):
                for alias in node.names:
                    if alias.asname and alias.asname in library:
                        assert library[alias.asname].canonical == alias.name, alias.asname
                        assert alias.asname in library[alias.name].aliases
                        checked += 1
    assert checked >= 250


def test_issue_facts() -> None:
    v060 = _records("0.6.0", "library")
    v051 = _records("0.5.1", "library")
    assert v060["llama3_8b_pretrain_config"].canonical == "llama3_8b_pretrain_2gpu_h100_bf16_config"
    q51, q60 = (
        v051["qwen3_30b_a3b_pretrain_config"].parallelism,
        v060["qwen3_30b_a3b_pretrain_config"].parallelism,
    )
    assert (q51.tp, q51.pp, q51.ep) == (4, 2, 4)
    assert (q60.tp, q60.pp, q60.ep) == (1, 1, 16)
    long = v060["llama3_8b_128k_pretrain_config"]
    assert (long.parallelism.tp, long.parallelism.pp, long.parallelism.cp, long.min_gpus) == (4, 2, 8, 64)
    assert "wan_1_3b_pretrain_config" in v060
    assert not any(name.startswith("wan_1_3B") for name in v060)


def test_library_and_benchmark_collisions_are_kept_apart() -> None:
    library, benchmark = _records("main", "library"), _records("main", "benchmark")
    collisions = set(library) & set(benchmark)
    assert len(collisions) == 10  # survey H8
    lib, perf = (
        library["llama3_70b_peft_8gpu_h100_bf16_config"],
        benchmark["llama3_70b_peft_8gpu_h100_bf16_config"],
    )
    assert (lib.parallelism.tp, lib.parallelism.pp) == (8, 1)
    assert (perf.parallelism.tp, perf.parallelism.pp, perf.parallelism.vp) == (1, 4, 20)


def test_survey_hazards_in_main() -> None:
    library, benchmark = _records("main", "library"), _records("main", "benchmark")
    assert benchmark["deepseek_v3_pretrain_64gpu_h100_bf16_config"].min_gpus == 512  # H9: N != layout minimum
    assert library["glm45_355b_peft_16gpu_h100_bf16_config"].min_gpus == 16  # H12: ETP=1 when EP>1
    nano = library["nemotron_nano_9b_v2_pretrain_2gpu_h100_bf16_config"]
    assert (nano.seq_length, nano.model_seq_length) == (8192, 131072)  # H13


def test_launchers_per_version() -> None:
    v031, v051, v060 = (load_catalog(v).launcher for v in ("0.3.1", "0.5.1", "0.6.0"))
    assert v031.modes == ["finetune", "pretrain"] and v031.dataset_presets == []
    assert any("--dataset" in f.names for f in v051.flags) and v051.modes is None
    presets = {p.name: p.modes for p in v060.dataset_presets}
    assert presets["mock"] == ["pretrain"]
    assert presets["squad"] == ["sft", "lora", "dora"]
    assert v060.modes == ["pretrain", "sft", "lora", "dora"]
    for spec in (v031, v051, v060):
        assert (
            spec.benchmark is not None and spec.benchmark.script == "scripts/performance/setup_experiment.py"
        )
        assert any("--model_recipe_name" in f.names for f in spec.benchmark.flags)
    assert any("git tag v0.3.1" in w for w in load_catalog("0.3.1").warnings)


def test_hardware_name_bound_to_another_gpu_keeps_its_own_encoding() -> None:
    record = _records("main", "benchmark")["llama31_405b_pretrain_256gpu_b200_bf16_config"]
    assert record.canonical == "llama31_405b_pretrain_256gpu_gb200_bf16_config"
    assert (record.gpu_type, record.encoded_gpus) == ("b200", 256)


@pytest.mark.parametrize(("version", "public_constants"), [("0.3.1", 281), ("0.5.1", 430)])
def test_unexported_workload_configs_are_kept_unreachable(version: str, public_constants: int) -> None:
    benchmark = _records(version, "benchmark")
    assert len(benchmark) == public_constants  # survey §4: public constants in *_workload_base_configs.py
    hidden = [r for r in benchmark.values() if not r.reachable]
    assert hidden and all(not r.name.startswith("_") for r in hidden)


def test_every_bundled_release_knows_its_mixed_precision_presets():
    from assistant.catalog import available_versions, load_catalog

    for version in available_versions():
        presets = load_catalog(version).launcher.mixed_precision_presets
        assert {"bf16_mixed", "bf16_with_fp8_current_scaling_mixed", "bf16_with_mxfp8_mixed"} <= set(presets)
    assert (
        "nemotron_3_super_bf16_with_nvfp4_mixed" not in load_catalog("0.3.1").launcher.mixed_precision_presets
    )
    assert "nemotron_3_super_bf16_with_nvfp4_mixed" in load_catalog("0.6.0").launcher.mixed_precision_presets
