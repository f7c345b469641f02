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


def _in_process(*args: str) -> tuple[str, str, BaseException | None]:
    """A CLI command in this process: its stdout, its stderr and the UserError it raised, if any."""
    from typer.testing import CliRunner

    from ui.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.stdout, result.stderr, result.exception


def _assert_refused(error: BaseException | None, raw: str) -> None:
    assert isinstance(error, UserError), error
    text = str(error)
    assert f"Megatron-Bridge {raw} is not bundled" in text
    assert "0.3.1, 0.5.1, 0.6.0, main" in text and "autorecipe recipes index" in text


NAMED_031 = "on Megatron-Bridge 0.3.1, how do I launch llama3_8b_pretrain_config?"
RUN = "llama3 8b sft on 8 h100"
PLAN = ("--recipe", "llama3_8b_pretrain_config", "--gpus", "8")


# ------------------------------------------------------------------ through the service (every UI calls ask)


@pytest.mark.integration
def test_service_question_wins_over_selector_in_one_line() -> None:
    from assistant.service import ask

    en = ask(NAMED_031, version="0.6.0")
    assert en.version == "0.3.1" and en.recipe is not None and en.recipe.version == "0.3.1"
    assert en.version_note and "\n" not in en.version_note and "0.6.0" in en.version_note
    assert en.answer_markdown.startswith(f"_{en.version_note}_")
    zh = ask("在 Megatron-Bridge 0.6.0 上怎么启动 llama3_8b_pretrain_config？", version="0.3.1")
    assert zh.version == "0.6.0" and zh.language == "zh" and "0.6.0" in (zh.version_note or "")
    assert ask(RUN, version="0.6.0").version_note is None


@pytest.mark.integration
@pytest.mark.parametrize("raw", ["9.9.9", "7.7"])
def test_service_refuses_unknown_version(raw: str) -> None:
    from assistant.service import ask

    with pytest.raises(UserError) as caught:
        ask(RUN, version=raw)
    _assert_refused(caught.value, raw)


@pytest.mark.integration
def test_service_between_versions_answers_earlier_with_notice() -> None:
    from assistant.service import ask

    near = ask(RUN, version="0.4.1")
    assert near.version == "0.3.1" and "0.4.1" in (near.version_note or "")
    assert near.to_json()["version_note"] == near.version_note
    assert near.answer_markdown.startswith(f"_{near.version_note}_")


# ------------------------------------------------------------------ through the CLI


@pytest.mark.integration
def test_cli_question_wins_over_version_flag() -> None:
    out = json.loads(_cli("ask", "--json", NAMED_031, "--version", "0.6.0").stdout)
    assert out["version"] == "0.3.1" and "0.6.0" in out["version_note"] and "\n" not in out["version_note"]
    text = _cli("ask", NAMED_031, "--version", "0.6.0").stdout
    assert "answering for 0.3.1, as the question says" in " ".join(text.split())


@pytest.mark.integration
def test_cli_refuses_unknown_versions(tmp_path: Path) -> None:
    flag = _cli("ask", RUN, "--version", "9.9.9")
    assert flag.returncode == 2 and "autorecipe recipes index" in flag.stderr
    assert "Traceback" not in flag.stderr
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"id": "a", "question": "llama3 8b sft", "version": "7.7"}) + "\n")
    line = json.loads(_cli("ask", "--batch", str(batch)).stdout)
    assert line["id"] == "a" and "7.7 is not bundled" in line["error"] and "recipes index" in line["error"]
    for command in (("plan", *PLAN), ("check", *PLAN), ("recipes", "show", "llama3_8b_pretrain_config")):
        _, _, error = _in_process(*command, "--version", "9.9.9")
        _assert_refused(error, "9.9.9")


@pytest.mark.integration
def test_cli_between_versions_answers_earlier_with_notice() -> None:
    near = json.loads(_cli("ask", "--json", RUN, "--version", "0.4.1").stdout)
    assert near["version"] == "0.3.1" and "0.4.1" in near["version_note"]
    for command in ("plan", "check"):
        stdout, stderr, _ = _in_process(command, *PLAN, "--version", "0.4.1", "--json")
        data = json.loads(stdout)
        assert "answering from 0.3.1" in data["version_note"] and "0.4.1" in data["version_note"]
        assert "note: Megatron-Bridge 0.4.1 is not bundled" in stderr
    stdout, stderr, _ = _in_process(
        "recipes", "show", "llama3_8b_pretrain_config", "--version", "0.4.1", "--json"
    )
    assert json.loads(stdout)["version"] == "0.3.1" and "answering from 0.3.1" in stderr
