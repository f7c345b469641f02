"""The README's architecture section and docs/ describe the code as it is: every module path they name
exists, and every package folder is described in the architecture section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = ("assistant", "ingest", "ui", "evals", "knowledge_base")
TOP_LEVEL = (*CODE, "benchmarks", "tests")  # not docs/: a doc may cite upstream's docs/releases/...
# `assistant/rules/`, `ingest/docs.py`, `ui/commands/` ...: a backticked path under a top-level folder.
PATH = re.compile(r"`((?:" + "|".join(TOP_LEVEL) + r")/[\w./{},*<>-]*)`")
# `phrase.py`, `session.py`: a bare module name the architecture table lists beside a folder's path.
BARE_MODULE = re.compile(r"`(\w+\.py)`")
UPSTREAM_MODULES = {"run_recipe.py"}  # Megatron-Bridge's launcher, named as what the extractor reads


def architecture_section(readme: str) -> str:
    start = readme.index("\n## Architecture")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def named_paths(text: str) -> list[str]:
    """Module and folder paths a text names, with `{a,b}` and `<version>` placeholders left out."""
    return [p.rstrip("/.,") for p in PATH.findall(text) if not re.search(r"[{}*<>]", p)]


def missing_paths(text: str) -> list[str]:
    return [p for p in named_paths(text) if not (ROOT / p).exists()]


def package_folders() -> list[str]:
    """Every package of the code: a folder with an __init__.py under the runtime top-level folders."""
    return sorted(
        str(init.parent.relative_to(ROOT)) for top in CODE for init in (ROOT / top).rglob("__init__.py")
    )


def test_the_path_check_sees_a_missing_module() -> None:
    text = "`assistant/kb.py` reads, `assistant/no_such_module.py` does not, `ui/commands/` holds commands"
    assert named_paths(text) == ["assistant/kb.py", "assistant/no_such_module.py", "ui/commands"]
    assert missing_paths(text) == ["assistant/no_such_module.py"]


def test_every_module_the_architecture_section_names_exists() -> None:
    section = architecture_section((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(named_paths(section)) > 20
    assert missing_paths(section) == []
    bare = [
        m
        for m in BARE_MODULE.findall(section)
        if m not in UPSTREAM_MODULES and not any(next((ROOT / top).rglob(m), None) for top in CODE)
    ]
    assert bare == []


@pytest.mark.parametrize("doc", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_every_module_a_doc_names_exists(doc: str) -> None:
    assert missing_paths((ROOT / "docs" / doc).read_text(encoding="utf-8")) == []


def test_every_package_folder_is_described() -> None:
    section = architecture_section((ROOT / "README.md").read_text(encoding="utf-8"))
    described = {p.rstrip("/") for p in named_paths(section)}
    assert [p for p in package_folders() if p not in described] == []
