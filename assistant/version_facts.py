"""Facts about one Megatron-Bridge version that a question asks for without naming a model (pure).

"Which --dataset for SFT in 0.5.1?" and "Can I use --mode lora with run_recipe.py in 0.5.1?" are answered
from the version's extracted launcher (its flags and dataset presets), never from guide prose about another
release.
"""

from __future__ import annotations

import re

from assistant.messages import msg, words
from assistant.records import Catalog
from assistant.rules.commands import choose_dataset

DATASET_QUESTION = re.compile(r"--dataset|\bdataset\b|数据集", re.IGNORECASE)


def dataset_fact(goal: str | None, text: str, catalog: Catalog, lang: str) -> str:
    """A dataset question that names no model: the version's preset for the goal, read from its launcher
    (the presets changed between releases)."""
    if not goal or not DATASET_QUESTION.search(text):
        return ""
    preset = choose_dataset(catalog.version, goal, catalog.launcher)
    if preset is None:
        return words(lang, "version_facts.no_dataset_flag", version=catalog.version)
    return words(
        lang,
        "version_facts.dataset",
        version=catalog.version,
        goal=msg(f"version_facts.goal.{goal}"),
        preset=preset,
    )


FLAG_IN_TEXT = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9_-]*)")
ASKS_FOR_FLAGS = re.compile(r"\bflags?\b|\boptions\b|\barguments\b|参数|选项", re.IGNORECASE)
SCRIPT_IN_TEXT = re.compile(r"[\w./-]*\w\.py\b")


def names_another_tool(text: str, script: str) -> bool:
    """The question runs another upstream script (the performance launcher `run_script.py`,
    `convert_checkpoints.py`, an example) and not this launcher: its flags belong to that tool."""
    named = {m.rsplit("/", 1)[-1] for m in SCRIPT_IN_TEXT.findall(text)}
    return bool(named) and script.rsplit("/", 1)[-1] not in named


def launcher_facts(text: str, catalog: Catalog, lang: str) -> str:
    """Flags named in a question, checked against this version's extracted launcher ("Can I use --mode
    lora in 0.5.1?"); or, when the question asks which flags the launcher has, the list itself."""
    launcher = catalog.launcher
    if launcher.script is None or not launcher.flags:
        return ""
    if names_another_tool(text, launcher.script):
        return ""
    script, version = f"`{launcher.script}`", catalog.version
    every = ", ".join(f"`{flag.names[0]}`" for flag in launcher.flags)
    named = [m for m in FLAG_IN_TEXT.findall(text) if m.startswith("--") or len(m) <= 4]
    if not named:
        if "run_recipe" not in text or not ASKS_FOR_FLAGS.search(text):
            return ""
        return words(lang, "version_facts.flags", script=script, version=version, every=every)
    lines = []
    for name in dict.fromkeys(named):
        variants = {name, name.replace("-", "_").replace("__", "--", 1), name.replace("_", "-")}
        flag = next((f for f in launcher.flags if variants & set(f.names)), None)
        if flag is None:
            lines.append(
                words(
                    lang, "version_facts.not_a_flag", name=name, script=script, version=version, every=every
                )
            )
        else:
            choices = f" ({', '.join(flag.choices)})" if flag.choices else ""
            names = "/".join(flag.names)
            lines.append(
                words(
                    lang, "version_facts.a_flag", names=names, script=script, version=version, choices=choices
                )
            )
    return "\n".join(lines)
