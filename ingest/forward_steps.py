"""Extract which forward step each recipe family trains with, from Megatron-Bridge's own table.

From v0.6.0, `scripts/training/recipe_metadata.py` maps recipe-name prefixes to forward-step names
(RECIPE_FORWARD_STEP_PREFIXES) and `run_recipe.py` picks the step from it. The 0.5.x `run_recipe.py` has
the same step names but defaults to `gpt_step`, so a VLM, diffusion, audio or omni recipe needs an explicit
`--step_func` there. The table is read with `ast` (nothing is imported) into
knowledge_base/forward_steps.json; assistant/catalog.py hands it to launchers that do not infer the step.

Usage: python -m ingest.forward_steps [--bridge GIT_DIR] [--ref v0.6.0]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from assistant.settings import get_settings
from ingest.calibration import git_show, write_json
from ingest.catalog_build import bridge_git_dir

TABLE_PATH = "scripts/training/recipe_metadata.py"
TABLE_NAME = "RECIPE_FORWARD_STEP_PREFIXES"


def extract_forward_steps(source: str) -> list[tuple[str, str]]:
    """The (recipe-name prefix, forward step) pairs of the module's literal table, in its order."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == TABLE_NAME for t in node.targets
        ):
            pairs = ast.literal_eval(node.value)
            return [(str(prefix), str(step)) for prefix, step in pairs]
    raise ValueError(f"{TABLE_NAME} not found")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bridge", type=Path, help="Megatron-Bridge git mirror (default $AUTORECIPE_BRIDGE_GIT)."
    )
    parser.add_argument("--ref", default="v0.6.0")
    args = parser.parse_args(argv)
    args.bridge = str(bridge_git_dir(args.bridge))  # a clear message when neither is given
    pairs = extract_forward_steps(git_show(args.bridge, args.ref, TABLE_PATH))
    out = get_settings().knowledge_base / "forward_steps.json"
    write_json(
        out,
        {
            "description": "recipe-name prefix -> forward step (first match wins; no match: the text step)",
            "source": {"repo": "NVIDIA-NeMo/Megatron-Bridge", "ref": args.ref, "path": TABLE_PATH},
            "prefixes": [list(pair) for pair in pairs],
            "produced_by": "python -m ingest.forward_steps",
        },
    )
    print(f"wrote {out}: {len(pairs)} prefixes")


if __name__ == "__main__":
    main()
