"""Ingest and the extractor read only what they should (issue 20, item 6): links out of the given folder
are not followed, a file that is not UTF-8 is skipped and reported while the rest is indexed, and the
interpreter bounds integer size and the total work of one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.retrieval import make_retriever
from assistant.settings import Settings
from ingest.build import ingest
from ingest.recipes.extract import evaluate, extract
from ingest.recipes.interpreter import Interpreter, Limits
from ingest.recipes.sources import SourceTree
from tests.conftest import empty_knowledge_base


@pytest.fixture()
def tree(tmp_path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "passwd.md").write_text("root:x:0:0 zebracorn secret outside the tree\n", encoding="utf-8")
    (secret / "notes").mkdir()
    (secret / "notes" / "more.md").write_text("zebracorn also outside\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nThe quokka quota is eight.\n", encoding="utf-8")
    (docs / "latin1.md").write_bytes("# Caf\xe9\n\nquokka in latin-1\n".encode("latin-1"))
    (docs / "passwd.md").symlink_to(secret / "passwd.md")
    (docs / "linked").symlink_to(secret / "notes", target_is_directory=True)
    (docs / "inside.md").symlink_to(docs / "guide.md")  # a link that stays inside is fine
    return docs


@pytest.mark.slow  # a real ingest with the embedding model into Chroma: 100 s of the fast set
@pytest.mark.timeout(300)
def test_links_out_of_the_root_and_non_utf8_files_are_skipped_and_reported(tmp_path, tree):
    settings = Settings(data_dir=tmp_path / "data", knowledge_base=empty_knowledge_base(tmp_path / "kb"))
    report, warnings = ingest(settings, [tree])
    text = "\n".join(warnings)
    assert f"skipped {tree / 'passwd.md'}: a link that leads out of {tree}" in text
    assert "latin1.md: is not UTF-8 text" in text
    assert report.added >= 1
    retriever = make_retriever(settings)
    assert retriever.search("quokka quota", k=3).hits
    sources = {h.source for h in retriever.search("zebracorn secret outside", k=10).hits}
    assert not any("passwd" in s or "more.md" in s for s in sources), sources


SQUARING = """
def squaring_pretrain_config():
    x = 3
    for _ in range(40):
        x = x * x
    return x


def shifting_pretrain_config():
    x = 1
    for _ in range(2000):
        x = x << 64
    return x
"""


@pytest.mark.timeout(60)
def test_integer_growth_stops_at_the_integer_budget():
    tree = SourceTree(label="ints", kind="checkout", package_prefix="")
    code = SQUARING.encode()
    tree.entries["megatron/bridge/recipes/ints.py"] = (len(code), lambda: code)
    tree.entries["megatron/bridge/recipes/__init__.py"] = (
        len(b"from megatron.bridge.recipes.ints import *\n"),
        lambda: b"from megatron.bridge.recipes.ints import *\n",
    )
    records = {r.name: r for r in extract(tree, "9.9.9").records}
    for name in ("squaring_pretrain_config", "shifting_pretrain_config"):
        assert "integer budget" in records[name].unknown["*"], records[name].unknown


@pytest.mark.timeout(120)
def test_the_work_of_one_file_is_bounded():
    spin = "\n\n".join(
        f"def spin{i}_pretrain_config():\n    for i in range(2000):\n        for j in range(2000):\n"
        "            x = i + j\n    return x"
        for i in range(12)
    )
    code = spin.encode()
    tree = SourceTree(label="spin", kind="checkout", package_prefix="")
    tree.entries["megatron/bridge/recipes/spin.py"] = (len(code), lambda: code)
    interp = Interpreter(tree, limits=Limits(call_steps=50_000, file_steps=120_000))
    module = interp.load_module("megatron.bridge.recipes.spin")
    reasons = [
        evaluate(interp, module.namespace[f"spin{i}_pretrain_config"]).failure or "" for i in range(12)
    ]
    assert all("budget" in reason for reason in reasons)
    # 120,000 steps cover two full 50,000-step calls and part of a third; every later call is refused at once
    assert sum("work budget of 120000 steps for megatron/bridge/recipes/spin.py" in r for r in reasons) == 9
    assert sum(interp.file_steps.values()) <= 120_000 + 12
