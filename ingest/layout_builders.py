"""Catalog build step: which recipes register a pipeline-layout builder for run_recipe.py?

From v0.6.0, `scripts/training/run_recipe.py` calls `sync_model_pipeline_layout` (recipe_runner.py:373) after
the command-line overrides: when -pp or -vp changed and no layout was given, it rebuilds the recipe's
`pipeline_model_parallel_layout` through `model._pipeline_model_parallel_layout_builder`, if the recipe set
one. A recipe that builds its layout without registering a builder keeps the layout made for its own PP and
VP, which Megatron-Core then rejects (rules/validate.py `pp-layout`). The extractor skips private attributes,
so this step reads each record's function in the release's source and stores the builder on the record as
`layout_builder` ("function (path:line)"), following one call into a helper of the same file.

    python -m ingest.layout_builders                 # the bundled catalogs built from git
    python -m ingest.layout_builders --versions 0.6.0
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from assistant.kb import knowledge_base
from assistant.records import Catalog
from assistant.rules.versions import version_key
from ingest.recipes.build import write_catalog

BRIDGE_GIT_SETTING = "AUTORECIPE_BRIDGE_GIT"
_ASSIGN = re.compile(r"\._pipeline_model_parallel_layout_builder\s*=\s*([A-Za-z_][\w.]*)")
_DEF = re.compile(r"^def\s+(\w+)\s*\(", re.MULTILINE)


def functions(text: str) -> dict[str, tuple[int, str]]:
    """Top-level functions of a module: name -> (first line, body text up to the next top-level def)."""
    starts = [(m.group(1), m.start()) for m in _DEF.finditer(text)]
    found: dict[str, tuple[int, str]] = {}
    ends = [s for _, s in starts[1:]] + [len(text)]
    for (name, start), nxt in zip(starts, ends[: len(starts)], strict=True):
        found[name] = (text.count("\n", 0, start) + 1, text[start:nxt])
    return found


def builder_in(text: str, function: str, path: str) -> str | None:
    """The builder `function` registers, itself or through one helper of the same file it calls."""
    defs = functions(text)
    if function not in defs:
        return None
    first, body = defs[function]
    candidates = [(function, first, body)] + [
        (name, line, helper)
        for name, (line, helper) in defs.items()
        if name != function and re.search(rf"\b{re.escape(name)}\s*\(", body)
    ]
    for name, line, chunk in candidates:
        m = _ASSIGN.search(chunk)
        if m:
            at = line + chunk.count("\n", 0, m.start())
            value = m.group(1)
            return f"{value if name == function else name} ({path}:{at})"
    return None


def _show(git_dir: Path, ref: str, path: str) -> str | None:
    result = subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{ref}:{path}"], capture_output=True, text=True, check=False
    )
    return result.stdout if result.returncode == 0 else None


def annotate(catalog: Catalog, git_dir: Path) -> Catalog:
    """The catalog with `layout_builder` set on every record (None where none is registered)."""
    ref = catalog.source.commit or catalog.source.ref
    texts: dict[str, str | None] = {}
    recipes = []
    for record in catalog.recipes:
        path = record.source.path
        if path not in texts:
            texts[path] = _show(git_dir, ref, path)
        text = texts[path]
        function = record.canonical or record.name
        builder = builder_in(text, function, path) if text else None
        recipes.append(record.model_copy(update={"layout_builder": builder}))
    return catalog.model_copy(update={"recipes": recipes})


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--versions", nargs="*", help="Default: every catalog in --dir built from git.")
    parser.add_argument("--dir", type=Path, default=knowledge_base().catalog_dir)
    parser.add_argument("--git", type=Path, default=None, help=f"Bridge git dir (else ${BRIDGE_GIT_SETTING})")
    args = parser.parse_args(list(argv) if argv is not None else None)
    git_dir = args.git or Path(os.environ[BRIDGE_GIT_SETTING])
    versions = args.versions or sorted((p.stem for p in args.dir.glob("*.json")), key=version_key)
    for version in versions:
        path = args.dir / f"{version}.json"
        catalog = Catalog(**json.loads(path.read_text(encoding="utf-8")))
        if catalog.source.kind != "git":
            print(f"{version}: built from {catalog.source.kind}, skipped")
            continue
        catalog = annotate(catalog, git_dir)
        write_catalog(catalog, path)
        named = sorted(r.name for r in catalog.recipes if r.layout_builder)
        print(f"{version}: {len(named)} recipes register a layout builder: {', '.join(named)}")


if __name__ == "__main__":
    main()
