"""Extract the mixed-precision preset names each Megatron-Bridge release accepts.

A recipe sets `mixed_precision` to a preset name ("bf16_mixed"), and Bridge turns the name into a config
with `get_mixed_precision_config` (a lookup among the factories its `@register` decorator records), so
`mixed_precision=<name>` on the command line switches a recipe to FP8 or FP4. The registered factories of
`src/megatron/bridge/training/mixed_precision.py` are read with `ast` (nothing is imported) at the commit
each bundled catalog was extracted from, into knowledge_base/mixed_precision.json.

Usage: python -m ingest.mixed_precision [--bridge GIT_DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

from assistant.catalog import available_versions
from assistant.kb import knowledge_base
from assistant.settings import get_settings
from ingest.calibration import git_show, write_json
from ingest.catalog_build import bridge_git_dir

MODULE_PATH = "src/megatron/bridge/training/mixed_precision.py"
CONFIG_CLASS = "MixedPrecisionConfig"
REGISTER = "register"


def extract_presets(source: str) -> list[str]:
    """Names of the module-level factories registered in MIXED_PRECISION_RECIPES (`@register`, returning a
    MixedPrecisionConfig), in source order: the names get_mixed_precision_config accepts."""
    return [
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(d, ast.Name) and d.id == REGISTER for d in node.decorator_list)
        and isinstance(node.returns, ast.Name)
        and node.returns.id == CONFIG_CLASS
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bridge", type=Path, help="Megatron-Bridge git mirror (default $AUTORECIPE_BRIDGE_GIT)."
    )
    args = parser.parse_args(argv)
    args.bridge = str(bridge_git_dir(args.bridge))  # a clear message when neither is given
    versions: dict[str, dict] = {}
    for version in available_versions():
        commit = json.loads((knowledge_base().catalog_dir / f"{version}.json").read_text(encoding="utf-8"))[
            "source"
        ]["commit"]
        presets = extract_presets(git_show(args.bridge, commit, MODULE_PATH))
        versions[version] = {"commit": commit, "presets": presets}
    out = get_settings().knowledge_base / "mixed_precision.json"
    write_json(
        out,
        {
            "description": "mixed_precision preset names per bundled release (get_mixed_precision_config)",
            "source": {"repo": "NVIDIA-NeMo/Megatron-Bridge", "path": MODULE_PATH},
            "versions": versions,
            "produced_by": "python -m ingest.mixed_precision",
        },
    )
    print(f"wrote {out}: " + ", ".join(f"{v} {len(d['presets'])}" for v, d in versions.items()))


if __name__ == "__main__":
    main()
