"""Assemble a Catalog (recipes + launcher) from a source tree and write it atomically."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.records import Catalog, CatalogSource, LauncherSpec, RecipeRecord
from ingest.atomic import write_atomic
from ingest.recipes.extract import extract
from ingest.recipes.interpreter import McoreFacts
from ingest.recipes.launcher import read_launcher
from ingest.recipes.sources import SourceTree


def build_catalog(
    tree: SourceTree,
    version: str,
    source: CatalogSource,
    launcher_tree: SourceTree | None = None,
    notes: list[str] | None = None,
    mcore: McoreFacts | None = None,
) -> Catalog:
    """Every exported recipe of `tree`; the launcher is read from `launcher_tree` (default: `tree`)."""
    extraction = extract(tree, version, mcore=mcore)
    launcher, launcher_warnings = read_launcher(launcher_tree or tree)
    warnings = [*(notes or []), *extraction.warnings, *launcher_warnings]
    if launcher.script is None:
        warnings.append("no scripts/training/run_recipe.py in this source: launcher unknown")
    link_launcher_calls(extraction.records, launcher)
    return Catalog(
        version=version,
        source=source,
        recipes=extraction.records,
        launcher=launcher,
        warnings=list(dict.fromkeys(warnings)),
    )


def write_catalog(catalog: Catalog, out: str | Path) -> Path:
    """Write catalog JSON (indent=1, recipes sorted by kind then name) atomically."""
    payload = catalog.to_json()
    payload["recipes"].sort(key=lambda r: (r["kind"], r["name"]))
    return write_atomic(out, json.dumps(payload, indent=1, ensure_ascii=False) + "\n")


PEFT_FLAG = "--peft_scheme"


def link_launcher_calls(records: list[RecipeRecord], launcher: LauncherSpec) -> None:
    """Say which run_recipe.py flags make each recorded call of a recipe. A launcher with --peft_scheme
    (<= 0.5.1) passes its value as peft= to a recipe that takes it: its default (None) is the run without
    the flag, so a finetune recipe's default launch there is full SFT, and LoRA needs `--peft_scheme lora`."""
    flag = next((f for f in launcher.flags if PEFT_FLAG in f.names), None)
    if flag is None:
        return
    for record in records:
        for variant in record.variants:
            if "peft" not in variant.call:
                continue
            value = variant.call["peft"]
            variant.launcher_default = value == flag.default
            variant.launcher_args = [] if variant.launcher_default else [PEFT_FLAG, str(value)]
