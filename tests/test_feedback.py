"""Feedback is stored whole (JSONL in the data dir), can be turned off, and `feedback list` shows it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from typer.testing import CliRunner

from assistant.feedback import feedback_path, read_feedback, record_feedback
from assistant.settings import Settings, get_settings
from ui.cli import app

ANSWER = {"version": "0.6.0", "language": "en", "answer_markdown": "**Recipe:** `llama3_8b_pretrain_config`"}


def test_store_round_trip_and_off(tmp_path: Path) -> None:
    on = Settings(data_dir=tmp_path)
    path = record_feedback(on, question="llama3 8b on 8 h100", answer=ANSWER, verdict="down", source="cli",
                           comment=" wrong GPUs ")  # fmt: skip
    assert path == feedback_path(on) == tmp_path / "feedback.jsonl"
    (entry,) = read_feedback(on)
    assert entry.verdict == "down" and entry.version == "0.6.0" and entry.answer == ANSWER
    assert entry.comment == "wrong GPUs" and entry.question == "llama3 8b on 8 h100"
    off = Settings(data_dir=tmp_path / "off", feedback=False)
    assert record_feedback(off, question="q", answer=ANSWER, verdict="up", source="cli") is None
    assert not feedback_path(off).exists()


def test_concurrent_writers_lose_no_line(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    big = {**ANSWER, "answer_markdown": "x" * 50_000}

    def write(n: int) -> None:
        for i in range(10):
            record_feedback(settings, question=f"{n}-{i}", answer=big, verdict="up", source="gradio")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = feedback_path(settings).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40 and {json.loads(line)["question"] for line in lines} == {
        f"{n}-{i}" for n in range(4) for i in range(10)
    }


def test_cli_lists_and_makes_golden_stubs(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    record_feedback(settings, question="good", answer=ANSWER, verdict="up", source="slack")
    record_feedback(
        settings, question="bad one", answer=ANSWER, verdict="down", source="gradio", comment="no"
    )
    env = {"AUTORECIPE_DATA_DIR": str(tmp_path), "COLUMNS": "80"}
    runner = CliRunner()
    get_settings.cache_clear()  # the CLI reads AUTORECIPE_DATA_DIR through the cached settings
    out = runner.invoke(app, ["feedback", "list"], env=env).output
    assert "2 feedback entries" in out and "bad one" in out
    golden = runner.invoke(app, ["feedback", "list", "--verdict", "down", "--golden"], env=env).output
    (row,) = [json.loads(line) for line in golden.splitlines()]
    assert row["question"] == "bad one" and row["version"] == "0.6.0" and "thumbs down: no" in row["note"]
    assert runner.invoke(app, ["feedback", "list", "--verdict", "meh"], env=env).exit_code != 0
    get_settings.cache_clear()
