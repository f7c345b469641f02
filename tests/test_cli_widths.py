"""The CLI's human output at 80 and 200 columns (issue 21): check's findings keep ids, keys and fixes whole,
`recipes show` prints no `None`, and ask renders its checklist as a numbered list and each source on its
own line (not one paragraph)."""

from __future__ import annotations

import re

import pytest

from assistant.settings import get_settings
from tests.test_cli_frontend import WIDTHS, run

pytestmark = pytest.mark.integration  # CLI commands end to end on the bundled catalogs


def whole(token: str, out: str) -> bool:
    """`token` appears unbroken, not glued to other word characters."""
    return re.search(rf"(?<![\w.]){re.escape(token)}(?![\w])", out) is not None


@pytest.mark.parametrize("columns", WIDTHS)
def test_check_keeps_finding_ids_and_fixes_whole(columns: str) -> None:
    args = (
        "check",
        "--recipe",
        "llama3_70b_pretrain_config",
        "--gpus",
        "64",
        "model.tensor_model_parallel_size=3",
    )
    code, out, _ = run(*args, columns=columns)
    assert code != 0  # an invalid config
    assert "None" not in out
    for token in ("tp-heads", "model.tensor_model_parallel_size=2", "llama3_70b_pretrain_config"):
        assert whole(token, out), token


@pytest.mark.parametrize("columns", WIDTHS)
def test_recipes_show_prints_no_none(columns: str) -> None:
    code, out, _ = run("recipes", "show", "llama3_8b_pretrain_config", columns=columns)
    assert code == 0 and "None" not in out
    assert whole("llama3_8b_pretrain_2gpu_h100_bf16_config", out)
    assert re.search(r"peft: -$", out, flags=re.M)


@pytest.mark.parametrize("columns", WIDTHS)
def test_ask_keeps_lists_and_one_source_per_line(columns: str, index_settings, monkeypatch) -> None:
    monkeypatch.setenv("AUTORECIPE_DATA_DIR", str(index_settings.data_dir))
    get_settings.cache_clear()
    try:
        code, out, _ = run("ask", "llama3 8b pretrain on 8 H100", columns=columns)
    finally:
        get_settings.cache_clear()
    assert code == 0 and "None" not in out
    lines = out.splitlines()
    for n in range(1, 7):  # the checklist's six items, each starting its own line
        assert any(re.match(rf"\s*{n}\.?\s+\S", line) for line in lines), n
    sources = [line for line in lines if re.match(r"\s*\[\d+\] guide/", line)]
    assert len(sources) >= 2  # one line each, not run together
    assert all(line.count("guide/") == 1 for line in sources)
