"""The chat's side panel: empty messages are not answered, no empty launch box, downloads, thumbs stored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assistant.feedback import read_feedback
from assistant.settings import Settings
from ui.gradio_app import build_demo, rate, respond

pytestmark = pytest.mark.integration  # whole answers through the Gradio handler
ROOT = Path(__file__).resolve().parent.parent
# How the knowledge base once named the upstream recommender skill it corrects: meaningless to a user.
INTERNAL_WORDING = re.compile(r"the skill(?:'s| document|\b)|技能文档", re.IGNORECASE)


def test_empty_message_is_not_answered() -> None:
    assert list(respond("   ", [], "0.6.0", "auto")) == []


def test_panel_downloads_and_thumbs(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    *_, last = respond("llama3 8b pretrain on 4 H100 with seq length 16384", [], "0.6.0", "auto")
    markdown, _card, command, _findings, _sources, files = last
    assert command["visible"] is True and "run_recipe.py" in command["value"]
    names = {Path(f).name.split(".", 1)[1] for f in files}
    assert names == {"sbatch", "overrides.txt", "overrides.yaml", "answer.json"}
    assert rate(False, markdown, "too slow", settings)
    (entry,) = read_feedback(settings)
    assert entry.verdict == "down" and entry.comment == "too slow" and entry.version == "0.6.0"
    assert not rate(True, "an answer this process never gave", "", settings)
    *_, hello = respond("hello", [], "0.6.0", "auto")
    assert hello[2]["visible"] is False and [Path(f).name for f in hello[5]] == ["answer.answer.json"]


def test_page_builds_with_like_and_clear() -> None:
    demo = build_demo(Settings())
    events = {event for dep in demo.config["dependencies"] for _, event in dep.get("targets", [])}
    assert {"like", "clear"} <= events


def test_no_internal_wording_reaches_users() -> None:
    """Guide passages are quoted and cited, messages are shown: neither says "the skill's wording"."""
    shown = [*ROOT.glob("knowledge_base/guide/*/*.md"), *ROOT.glob("assistant/messages/*.py")]
    hits = [
        f"{path.name}: {m.group(0)}" for path in shown for m in INTERNAL_WORDING.finditer(path.read_text())
    ]
    assert shown and hits == []
