"""The downloads parse: the sbatch passes `bash -n`, the dotlist and YAML give the overrides back, the JSON
is `ask --json`'s object."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from assistant.service import ask
from ui.answer_export import export_files

pytestmark = pytest.mark.integration  # a real answer from the service


def test_downloads_parse(tmp_path: Path) -> None:
    answer = ask("llama3 8b pretrain on 4 H100 with seq length 16384")
    files = export_files(answer)
    stem = answer.recipe.name
    sbatch = tmp_path / f"{stem}.sbatch"
    sbatch.write_text(files[f"{stem}.sbatch"])
    assert subprocess.run(["bash", "-n", str(sbatch)], check=False).returncode == 0
    wanted = {item.key: item.value for item in answer.overrides}
    dotlist = dict(line.split("=", 1) for line in files[f"{stem}.overrides.txt"].splitlines())
    assert {k: yaml.safe_load(v) for k, v in dotlist.items()} == wanted
    tree = yaml.safe_load(files[f"{stem}.overrides.yaml"])
    for key, value in wanted.items():
        node = tree
        for part in key.split("."):
            node = node[part]
        assert node == value
    assert json.loads(files[f"{stem}.answer.json"]) == answer.to_json()


def test_no_recipe_gives_only_json() -> None:
    files = export_files(ask("hello"))
    assert list(files) == ["answer.answer.json"]
