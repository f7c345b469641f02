"""Files a user takes away from one answer: the Slurm script, the overrides (Hydra dotlist and YAML) and
the whole answer JSON (the same object as `ask --json`). Pure: Answer in, {file name: text} out."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from assistant.answer import Answer
from assistant.records import Override


def wrapped(command: str) -> str:
    """One flag per line (shell continuations), so a long launch command reads and copies cleanly."""
    if "\n" in command:
        return command
    return re.sub(r" (?=--|'|scripts/)", " \\\n    ", command)


def terminal_markdown(markdown: str) -> str:
    r"""Markdown for a terminal renderer: a single line break stays a break (not a joined paragraph), and a
    one-line command in a code fence is wrapped with `\` continuations."""
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(wrapped(line) if len(line) > 80 else line)
        else:
            out.append(line + "  " if line.strip() and not line.lstrip().startswith(("|", "#")) else line)
    return "\n".join(out)


def _hydra_value(value: Any) -> str:
    """A value as Hydra's override grammar reads it back (JSON scalars and lists are valid there)."""
    if isinstance(value, str):
        return (
            value if value.replace("_", "").replace("-", "").replace(".", "").isalnum() else json.dumps(value)
        )
    return json.dumps(value)


def _nested(overrides: list[Override]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for item in overrides:
        *parents, leaf = item.key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = item.value
    return tree


def export_files(answer: Answer) -> dict[str, str]:
    """Every file this answer can give; the JSON always, the others when the answer has them."""
    stem = answer.recipe.name if answer.recipe is not None else "answer"
    files: dict[str, str] = {}
    if answer.commands.slurm:
        files[f"{stem}.sbatch"] = answer.commands.slurm.rstrip("\n") + "\n"
    if answer.overrides:
        files[f"{stem}.overrides.txt"] = "".join(
            f"{item.key}={_hydra_value(item.value)}\n" for item in answer.overrides
        )
        files[f"{stem}.overrides.yaml"] = yaml.safe_dump(_nested(answer.overrides), sort_keys=False)
    files[f"{stem}.answer.json"] = json.dumps(answer.to_json(), ensure_ascii=False, indent=1) + "\n"
    return files
