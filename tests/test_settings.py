"""Where the data comes from: the installed knowledge_base package by default, AUTORECIPE_KNOWLEDGE_BASE when
set, and every data file in git is one the wheel ships (.ci/wheel-check proves the installed wheel)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

import knowledge_base
from assistant.settings import KNOWLEDGE_BASE, Settings

REPO = Path(__file__).resolve().parents[1]


def test_the_default_knowledge_base_is_the_imported_data_package() -> None:
    assert Path(knowledge_base.__file__).resolve().parent == KNOWLEDGE_BASE
    assert Settings().knowledge_base == KNOWLEDGE_BASE
    assert list((KNOWLEDGE_BASE / "catalogs").glob("*.json"))
    assert list((KNOWLEDGE_BASE / "guide").glob("*/*.md"))


def test_the_knowledge_base_setting_moves_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AUTORECIPE_KNOWLEDGE_BASE", str(tmp_path))
    assert Settings().knowledge_base == tmp_path


def test_every_data_file_in_git_is_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = config["package-data"]["*"]
    assert config["include-package-data"] is False  # only these globs decide what the wheel carries
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "knowledge_base", "evals/golden"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    # Each folder is a (namespace) package, so a glob under the "*" key matches a file name in any of them.
    data = [Path(path) for path in listed if not path.endswith(".py")]
    assert data
    assert [path for path in data if not any(fnmatch.fnmatch(path.name, glob) for glob in globs)] == []
