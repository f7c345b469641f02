"""Attach to each published perf row the performance features its release's recipe turned on.

A perf table row names a model, GPU, precision and layout, not the software settings (CUDA graphs, MoE
all-to-all overlap, FP8 attention, fused expert MLPs, the token dispatcher) that moved the numbers between
releases. Those live in
the release's benchmark recipes. For each container release we extract the recipes of the Megatron-Bridge
tag it shipped with (the same static extractor as the catalogs: nothing is imported or executed) and take
the features of the benchmark recipe with the row's model, GPU, precision and layout.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from assistant.estimate.features import features_from_fields
from assistant.estimate.throughput import precision_key
from assistant.records import CatalogSource, RecipeRecord
from ingest.catalog_build import materialise
from ingest.recipes.build import build_catalog
from ingest.recipes.sources import open_source

# NeMo container release -> Megatron-Bridge tag. Source: docs/releases/software-versions.md at 067f987
# (26.06 -> 0.5.0, 26.04 -> 0.4.0, 26.02 -> 0.3.0, 25.11 -> 0.2.0); patch containers (.01) ship the
# patch release (docs/releases/known-issues.md: "26.02.01 (r0.3.1)"). 26.04.01 shipped 0.4.2, not 0.4.1
# (docs/fern/docs.yml:18 at 067f987: "0.4.2 (latest) · 26.04.01"; v0.4.1 is a security-only patch
# branched off v0.4.0, while v0.4.2 carries the r0.4.0 perf-config updates and the 26.04.01 perf summary,
# commit 2b82f6f17, e.g. the DeepSeek-V3 B200 PP8 VP2 EP32 preset the table publishes). 26.08 is not listed
# there and is mapped to v0.6.0 by release date (2026-08-19). 25.09 shipped 0.1.0rc3, whose scripts have
# no benchmark configs, so its rows carry no features.
BRIDGE_TAG_OF_RELEASE = {
    "25.11": "v0.2.0",
    "26.02": "v0.3.0",
    "26.02.01": "v0.3.1",
    "26.04": "v0.4.0",
    "26.04.01": "v0.4.2",
    "26.06": "v0.5.0",
    "26.06.01": "v0.5.1",
    "26.08": "v0.6.0",
}
# Perf-table model keys -> the prefix of their benchmark recipe names.
RECIPE_PREFIX = {"llama31_405b": ("llama31_405b", "llama3_1_405b")}


def benchmark_recipes(git_dir: str, tag: str) -> list[RecipeRecord]:
    """The benchmark recipes of one Megatron-Bridge tag, extracted statically."""
    with tempfile.TemporaryDirectory(prefix=f"autorecipe-perf-{tag}-") as temp:
        commit = materialise(Path(git_dir), tag, Path(temp))
        tree = open_source(temp)
        catalog = build_catalog(tree, tag.lstrip("v"), CatalogSource(kind="git", ref=tag, commit=commit))
    return [r for r in catalog.recipes if r.kind == "benchmark"]


def _layout_matches(row: dict[str, Any], recipe: RecipeRecord) -> bool:
    par = recipe.parallelism
    return (
        (par.tp, par.pp, par.cp, par.ep or 1, par.vp if par.vp not in (None, 1) else None)
        == (row["tp"], row["pp"], row["cp"], row["ep"], row["vp"])
        and recipe.micro_batch_size == row["mbs"]
        and recipe.global_batch_size == row["gbs"]
        and (recipe.encoded_gpus or recipe.min_gpus) == row["num_gpus"]
    )


def match_recipe(row: dict[str, Any], recipes: list[RecipeRecord]) -> RecipeRecord | None:
    """The benchmark recipe of the row's model, mode, GPU and precision with the row's exact layout."""
    prefixes = RECIPE_PREFIX.get(row["model"], (row["model"],))
    wanted = precision_key(row["precision"])
    found = [
        r
        for r in recipes
        if r.name.startswith(prefixes)
        and (r.mode or "pretrain") == row["mode"]
        and r.gpu_type == row["gpu"]
        and r.precision is not None
        and precision_key(r.precision) == wanted
        and _layout_matches(row, r)
    ]
    found.sort(key=lambda r: (not r.reachable, r.name))
    return found[0] if found else None


def run_settings(recipe: RecipeRecord | None) -> dict[str, Any]:
    """The recompute and CPU offloading a benchmark recipe ran with, as estimate_throughput takes them.
    The perf scripts switch to selective recompute whenever they set modules; Megatron recomputes
    `core_attn` when selective comes without modules and nothing when the list is empty."""
    if recipe is None:
        return {"recompute": None, "recompute_modules": None, "offload_layers": 0}
    modules = recipe.recompute_modules
    if modules:
        recompute = "selective"
    elif recipe.recompute == "selective" and modules is None:
        recompute, modules = "selective", ["core_attn"]
    else:
        recompute = "full" if recipe.recompute == "full" else None
    fields = recipe.fields
    offload = fields.get("cpu_offloading_num_layers") or fields.get("model.cpu_offloading_num_layers") or 0
    return {"recompute": recompute, "recompute_modules": modules or None, "offload_layers": int(offload)}


def attach_features(rows: list[dict[str, Any]], git_dir: str) -> dict[str, int]:
    """Set row["features"] (None when no recipe of that release matches) and row["features_source"];
    returns {release: matched rows}."""
    matched: dict[str, int] = {}
    for release in sorted({r["release"] for r in rows}):
        tag = BRIDGE_TAG_OF_RELEASE.get(release)
        recipes = benchmark_recipes(git_dir, tag) if tag else []
        matched[release] = 0
        for row in (r for r in rows if r["release"] == release):
            recipe = match_recipe(row, recipes)
            row["features"] = features_from_fields(recipe.fields).to_json() if recipe else None
            row.update(run_settings(recipe))
            row["features_source"] = (
                {"tag": tag, "recipe": recipe.name, "path": recipe.source.path, "line": recipe.source.line}
                if recipe and recipe.source
                else None
            )
            matched[release] += recipe is not None
    return matched
