"""Which mixed-precision presets store the weights in FP8 or NVFP4, per bundled Megatron-Bridge release.

A preset that sets `fp8_param_gather` (Bridge keeps it in sync with `fp8_param`) makes the model's primary
weights FP8 tensors: one byte each, with the fp32 master copy in the optimizer, and no separate cached
FP8 copy. `fp4_param_gather` (synced with `fp4_param`) does the same with NVFP4 tensors. The memory
estimator needs this per preset, and recipes name a preset rather than repeat it. A preset's
`grad_reduce_in_fp32` (the dataclass default is True; fp16 presets set False) is read too: Bridge's
`runtime_config_update` copies it onto the DDP config, over the recipe's own `ddp.grad_reduce_in_fp32`.
Read statically (`ast`) from src/megatron/bridge/training/mixed_precision.py of each tag; nothing is
imported or executed.
Usage: python -m ingest.precision_params [--bridge GIT_DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

from assistant.rules.versions import BUNDLED_VERSIONS
from assistant.settings import get_settings
from ingest.atomic import write_atomic
from ingest.catalog_build import bridge_git_dir

TAGS = {version: "main" if version == "main" else f"v{version}" for version in BUNDLED_VERSIONS}
PATH = "src/megatron/bridge/training/mixed_precision.py"
FIELDS = ("fp8_param_gather", "fp4_param_gather", "grad_reduce_in_fp32")
DEFAULTS = {"grad_reduce_in_fp32": True}  # MixedPrecisionConfig's dataclass default; the others False


def preset_flags(source: str, field: str = "fp8_param_gather", default: bool = False) -> dict[str, bool]:
    """{preset function: `field`} for every module-level function that builds a config, following
    `cfg = other_preset()` chains, `cfg.<field> = X` and the constructor's keyword; `default` when a
    preset never sets it."""
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    resolved: dict[str, bool | None] = {}

    def value_of(name: str, seen: frozenset[str] = frozenset()) -> bool | None:
        if name in resolved:
            return resolved[name]
        if name in seen or name not in functions:
            return None
        result: bool | None = None
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = node.value.func
                if isinstance(callee, ast.Name) and callee.id in functions:
                    result = value_of(callee.id, seen | {name})
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                for keyword in node.keywords:
                    if keyword.arg == field and isinstance(keyword.value, ast.Constant):
                        result = bool(keyword.value.value)
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == field
                        and isinstance(node.value, ast.Constant)
                    ):
                        result = bool(node.value.value)
        resolved[name] = result
        return result

    names = [n for n in functions if not n.startswith("_")]
    flags = {n: value_of(n) for n in names if n.endswith("_mixed")}
    return {n: default if value is None else value for n, value in flags.items()}


def extract(git_dir: str) -> dict:
    tables: dict[str, dict[str, dict[str, bool]]] = {field: {} for field in FIELDS}
    for version, tag in TAGS.items():
        source = subprocess.run(
            ["git", "-C", git_dir, "show", f"{tag}:{PATH}"], check=True, capture_output=True, text=True
        ).stdout
        for field in FIELDS:
            tables[field][version] = preset_flags(source, field, DEFAULTS.get(field, False))
    return {
        "description": "Mixed-precision presets whose weights are stored in FP8 (fp8_param_gather=True) or "
        "NVFP4 (fp4_param_gather=True), and whose grad_reduce_in_fp32 (copied onto the DDP config by "
        "runtime_config_update) is True or False, per Megatron-Bridge release.",
        "source": f"NVIDIA-NeMo/Megatron-Bridge {PATH} at tags {', '.join(TAGS.values())} (ast)",
        **tables,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bridge", type=Path, help="Megatron-Bridge git mirror (default $AUTORECIPE_BRIDGE_GIT)."
    )
    args = parser.parse_args(argv)
    args.bridge = str(bridge_git_dir(args.bridge))  # a clear message when neither is given
    out = Path(get_settings().knowledge_base) / "calibration" / "precision_params.json"
    write_atomic(out, json.dumps(extract(args.bridge), indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
