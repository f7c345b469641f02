"""The shared version resolver: the question wins, nearby releases carry a notice, others are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.version_resolve import bundled_choice, resolve

BUNDLED = ["0.3.1", "0.5.1", "0.6.0", "main"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("raw", "version", "noted"),
    [
        ("0.3.1", "0.3.1", False),
        ("v0.6", "0.6.0", False),
        ("main", "main", False),
        ("0.4.1", "0.3.1", True),  # between 0.3.1 and 0.5.1: the earlier one
        ("0.5.0", "0.3.1", True),
        ("0.6.2", "0.6.0", True),
        ("0.7.0rc1", "main", True),  # the next minor is what main develops
    ],
)
def test_bundled_choice(raw: str, version: str, noted: bool) -> None:
    choice = bundled_choice(raw, BUNDLED)
    assert choice.version == version
    assert bool(choice.note_en) == noted and bool(choice.note_zh) == noted
    if noted:
        assert version in choice.note_en and version in choice.note_zh


@pytest.mark.parametrize("raw", ["9.9.9", "7.7", "0.2.0", "1.0", "banana"])
def test_unknown_version_refused_with_list_and_index_hint(raw: str) -> None:
    with pytest.raises(UserError) as caught:
        bundled_choice(raw, BUNDLED)
    text = str(caught.value)
    assert "0.3.1, 0.5.1, 0.6.0, main" in text and "autorecipe recipes index" in text
    assert "autorecipe recipes index" in caught.value.in_language("zh")


def test_question_wins_over_selector_with_one_line() -> None:
    choice = resolve("0.6.0", "0.3.1", "0.6.0", BUNDLED)
    assert choice.version == "0.3.1"
    assert "0.3.1" in choice.note_en and "0.6.0" in choice.note_en and "\n" not in choice.note_en
    assert resolve("0.6.0", "0.6.0", "0.6.0", BUNDLED).note_en == ""
    assert resolve(None, "0.3.1", "0.6.0", BUNDLED).note_en == ""
    assert resolve(None, None, "0.6.0", BUNDLED).version == "0.6.0"
    assert resolve("0.4.1", None, "0.6.0", BUNDLED).version == "0.3.1"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "ui.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


@pytest.mark.integration
def test_front_ends_share_it() -> None:
    """ask (the CLI, MCP, Slack and Gradio all call it) answers for the version in the text, says so."""
    from assistant.service import ask

    en = ask("on Megatron-Bridge 0.3.1, how do I launch llama3_8b_pretrain_config?", version="0.6.0")
    assert en.version == "0.3.1" and en.recipe is not None and en.recipe.version == "0.3.1"
    assert en.version_note and en.answer_markdown.startswith(f"_{en.version_note}_")
    zh = ask("在 Megatron-Bridge 0.6.0 上怎么启动 llama3_8b_pretrain_config？", version="0.3.1")
    assert zh.version == "0.6.0" and zh.language == "zh" and "0.6.0" in (zh.version_note or "")
    near = ask("llama3 8b sft on 8 h100", version="0.4.1")
    assert near.version == "0.3.1" and "0.4.1" in (near.version_note or "")
    assert ask("llama3 8b sft on 8 h100", version="0.6.0").version_note is None
    with pytest.raises(UserError):
        ask("llama3 8b sft on 8 h100", version="9.9.9")


@pytest.mark.integration
def test_cli_refuses_unknown_versions(tmp_path: Path) -> None:
    flag = _cli("ask", "llama3 8b sft on 8 h100", "--version", "9.9.9")
    assert flag.returncode == 2 and "autorecipe recipes index" in flag.stderr
    assert "Traceback" not in flag.stderr
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"id": "a", "question": "llama3 8b sft", "version": "7.7"}) + "\n")
    line = json.loads(_cli("ask", "--batch", str(batch)).stdout)
    assert line["id"] == "a" and "not bundled" in line["error"]
    near = json.loads(_cli("ask", "--json", "llama3 8b sft on 8 h100", "--version", "0.4.1").stdout)
    assert near["version"] == "0.3.1" and "0.4.1" in near["version_note"]
