"""The CLI's flag and batch-line bounds speak both languages: the message catalogs hold them, and the CLI
prints the one of the user's locale."""

from __future__ import annotations

import pytest

from assistant.bounds import MAX_BATCH_LINE_BYTES, batch_line, check_tokens, check_top_k
from assistant.errors import UserError
from assistant.messages import user_language


@pytest.mark.parametrize(
    "call",
    [
        lambda: check_top_k(0),
        lambda: check_tokens(-1.0),
        lambda: batch_line(b"x" * (MAX_BATCH_LINE_BYTES + 1)),
        lambda: batch_line(b"\xff\xfe"),
    ],
)
def test_cli_bounds_errors_have_a_chinese_twin(call) -> None:
    with pytest.raises(UserError) as caught:
        call()
    zh = caught.value.in_language("zh")
    assert zh != str(caught.value) and any("\u4e00" <= ch <= "\u9fff" for ch in zh)


def test_the_top_k_error_names_the_limit_in_both_languages() -> None:
    with pytest.raises(UserError) as caught:
        check_top_k(51)
    assert "50" in str(caught.value) and "51" in caught.value.in_language("zh")


def test_the_cli_speaks_the_locale_language() -> None:
    assert user_language({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert user_language({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert user_language({"LANG": "C.UTF-8"}) == "en"
    assert user_language({}) == "en"


def test_batch_line_errors_speak_the_line_or_locale_language(tmp_path) -> None:
    """`estimate --batch` words a bad line's error in the locale's language; `ask --batch` in the line's own
    (its `lang`, else its question's): the JSONL keys stay the same."""
    from ui.commands.assistant_cmds import _line_language
    from ui.commands.estimate import run_batch

    batch = tmp_path / "in.jsonl"
    batch.write_text('not json\n{"id": "a", "args": "x"}\n{"id": "b", "args": ["--batch", "f"]}\n')
    english, chinese = run_batch(batch, "en"), run_batch(batch, "zh")
    assert [set(x) for x in english] == [set(x) for x in chinese] == [{"id", "error"}] * 3
    assert "not JSON" in english[0]["error"] and "line 1" in english[0]["error"]
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in x["error"]) for x in chinese)
    assert [x["id"] for x in chinese] == [None, "a", "b"]
    assert _line_language({"question": "在 8 张 H100 上微调 Qwen3 8B"}) == "zh"
    assert _line_language({"question": "Qwen3 8B on 8 H100", "lang": "zh"}) == "zh"
    assert _line_language({"question": "Qwen3 8B on 8 H100"}) == "en"
