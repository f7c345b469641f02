"""The chat's side panel: empty messages are not answered, no empty launch box, downloads, thumbs stored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assistant.answer import Answer
from assistant.compose import checklist_lines, sources_lines, t
from assistant.feedback import read_feedback
from assistant.messages import words
from assistant.records import Citation
from assistant.settings import Settings
from ui.gradio_app import bubble, build_demo, page_labels, rate, respond

pytestmark = pytest.mark.integration  # whole answers through the Gradio handler
ROOT = Path(__file__).resolve().parent.parent
# How the knowledge base once named the upstream recommender skill it corrects: meaningless to a user.
INTERNAL_WORDING = re.compile(r"the skill(?:'s| document|\b)|技能文档", re.IGNORECASE)


def test_empty_message_is_not_answered() -> None:
    assert list(respond("   ", [], "0.6.0", "auto")) == []


def test_panel_downloads_and_thumbs(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    *_, last = respond("llama3 8b pretrain on 4 H100 with seq length 16384", [], "0.6.0", "auto")
    markdown, _card, command, _findings, files, lang = last
    assert lang == "en"
    assert command["visible"] is True and "run_recipe.py" in command["value"]
    names = {Path(f).name.split(".", 1)[1] for f in files}
    assert names == {"sbatch", "overrides.txt", "overrides.yaml", "answer.json"}
    assert rate(False, markdown, "too slow", settings)
    (entry,) = read_feedback(settings)
    assert entry.verdict == "down" and entry.comment == "too slow" and entry.version == "0.6.0"
    assert not rate(True, "an answer this process never gave", "", settings)
    *_, hello = respond("hello", [], "0.6.0", "auto")
    assert hello[2]["visible"] is False and [Path(f).name for f in hello[4]] == ["answer.answer.json"]


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


def _answer(**changes) -> Answer:
    base = {"language": "en", "intent": "recommend", "slots": {}, "version": "0.6.0"}
    return Answer.model_validate({**base, **changes})


def test_bubble_cites_inline_once_and_drops_unsupported_passages() -> None:
    backing = Citation(
        n=2, source="guide/en/a.md#x", heading="Overlap", text="Set ddp.overlap_grad_reduce=false on H100."
    )
    stray = Citation(
        n=1, source="guide/en/b.md#y", heading="Qwen3.5-VL FSDP", text="Blackwell-only vision towers."
    )
    checklist = ["Smoke test first."]
    body = "**Checks and pitfalls**\n- `moe-overlap`: turn off ddp.overlap_grad_reduce on H100."
    markdown = "\n\n".join([body, "\n".join(checklist_lines(checklist, "en")),
                              "\n".join(sources_lines([stray, backing], "en"))])  # fmt: skip
    answer = _answer(answer_markdown=markdown, citations=[stray, backing], checklist=checklist)
    first = bubble(answer, [])
    assert first.count("[1]</sup>") == 1 and "[2]" not in first  # the backing passage, renumbered; no stray
    assert "Blackwell" not in first and "<details><summary>[1]" in first
    assert first.count(t("sources", "en")) == 1 and first.index("Smoke test") < first.index("<details>")
    assert first.index("ar-cite") < first.index("Smoke test")  # the marker sits in the body
    later = bubble(answer, [{"role": "assistant", "content": first}])
    assert "Smoke test" not in later  # the checklist once per conversation


def test_labels_follow_the_answer_language() -> None:
    heading, version, *_rest, downloads = page_labels("zh", "0.6.0")
    assert "配方助手" in heading and version["label"] == words("zh", "ui.version")
    assert downloads["label"] == words("zh", "ui.downloads")
    assert page_labels("en", "0.6.0")[4]["placeholder"] == words("en", "ui.placeholder")


def test_long_commands_wrap_with_continuations() -> None:
    command = (
        "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py --recipe x"
    )
    shown = bubble(_answer(answer_markdown=f"**Launch**\n```bash\n{command}\n```"))
    assert " \\\n    --nproc_per_node=8" in shown
