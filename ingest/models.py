"""Write knowledge_base/models/<org>__<name>.json: one ModelArch per HF model id the recipes use.

Inputs are public HF `config.json` files (or HF-shaped dicts transcribed from Megatron-Bridge provider
classes, tests and docs). A config may carry two extra keys that HF never uses: `_hf_model_id` and
`_source` (where each number came from); they become the record's id and source note.

    python -m ingest.models build CONFIG_DIR [--out DIR]   # (re)generate from a directory of configs
    python -m ingest.models add PATH [--id ORG/NAME]       # add one local config.json / HF cache snapshot
    python -m ingest.models check [--dir DIR]              # validate the bundled files
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from assistant.errors import UserError
from assistant.kb import knowledge_base
from assistant.models import (
    arch_from_hf_config,
    count_parameters,
    load_local_config,
    model_file_name,
    models_dir,
    read_config_file,
)
from assistant.records import ModelArch
from ingest.atomic import write_atomic

__all__ = [
    "arch_from_hf_config",
    "build_from_config_dir",
    "check_dir",
    "count_parameters",
    "write_model_arch",
]


def write_model_arch(arch: ModelArch, out_dir: Path) -> Path:
    """Write one record atomically."""
    text = json.dumps(arch.to_json(), indent=2, ensure_ascii=False) + "\n"
    return write_atomic(out_dir / model_file_name(arch.hf_model_id), text)


def arch_from_config_file(path: Path) -> ModelArch:
    """One HF-shaped config file -> ModelArch; id and source from `_hf_model_id` / `_source` if present."""
    config = read_config_file(path)
    model_id = config.get("_hf_model_id") or path.stem.replace("__", "/", 1)
    source = config.get("_source") or f"HF config.json ({path.name})"
    return arch_from_hf_config(config, str(model_id), str(source))


def build_from_config_dir(config_dir: Path, out_dir: Path) -> list[Path]:
    """Regenerate the catalog from every *.json config in `config_dir`."""
    files = sorted(config_dir.glob("*.json"))
    if not files:
        raise UserError(f"No *.json configs in {config_dir}.")
    return [write_model_arch(arch_from_config_file(f), out_dir) for f in files]


def check_dir(directory: Path) -> list[str]:
    """Problems in a catalog directory: invalid records, wrong file names, stale parameter counts."""
    problems: list[str] = []
    for file in sorted(directory.glob("*.json")):
        try:
            arch = ModelArch.model_validate_json(file.read_text(encoding="utf-8"))
        except ValidationError as exc:
            problems.append(f"{file.name}: not a ModelArch ({exc.error_count()} errors)")
            continue
        if file.name != model_file_name(arch.hf_model_id):
            problems.append(f"{file.name}: holds {arch.hf_model_id}")
        if arch.num_query_groups and arch.num_attention_heads % arch.num_query_groups:
            problems.append(
                f"{file.name}: heads {arch.num_attention_heads} % kv heads {arch.num_query_groups}"
            )
        if not arch.is_hybrid and arch.total_params is not None:
            total, active = count_parameters(arch)
            if (total, active) != (arch.total_params, arch.active_params):
                problems.append(
                    f"{file.name}: stored counts differ from count_parameters ({total}, {active})"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.models", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="regenerate records from a directory of HF-shaped configs")
    build.add_argument("config_dir", type=Path)
    build.add_argument("--out", type=Path, default=None)
    add = sub.add_parser("add", help="add one local config.json or HF cache snapshot")
    add.add_argument("path", type=Path)
    add.add_argument("--id", dest="hf_model_id", default=None)
    add.add_argument("--out", type=Path, default=None)
    check = sub.add_parser("check", help="validate the bundled records")
    check.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            written = build_from_config_dir(args.config_dir, args.out or models_dir(kb=knowledge_base()))
            print(f"wrote {len(written)} model records")
        elif args.command == "add":
            arch = load_local_config(args.path, args.hf_model_id)
            print(write_model_arch(arch, args.out or models_dir(kb=knowledge_base())))
        else:
            problems = check_dir(args.dir or models_dir(kb=knowledge_base()))
            print("\n".join(problems) or "ok")
            return 1 if problems else 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
