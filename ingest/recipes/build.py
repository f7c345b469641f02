"""Assemble a Catalog (recipes + launcher) from a source tree and write it atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from assistant.records import Catalog, CatalogSource
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
    return Catalog(
        version=version,
        source=source,
        recipes=extraction.records,
        launcher=launcher,
        warnings=list(dict.fromkeys(warnings)),
    )


def write_catalog(catalog: Catalog, out: str | Path) -> Path:
    """Write catalog JSON (indent=1, recipes sorted by kind then name) via a temp file + rename."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = catalog.to_json()
    payload["recipes"].sort(key=lambda r: (r["kind"], r["name"]))
    text = json.dumps(payload, indent=1, ensure_ascii=False) + "\n"
    handle, temp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temp, 0o644)
        os.replace(temp, out)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return out
