"""Hybrid retrieval over the real bundled index, in English and Chinese."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.errors import UserError
from evals.metrics import normalise_source
from evals.run import DEFAULT_RETRIEVAL_SET, load_retrieval, run_retrieval
from ingest.build import ingest
from tests.conftest import SKILL_SEED, empty_knowledge_base

MIN_RECALL_AT_5 = 0.9


def test_retrieval_eval_set_shape():
    rows = load_retrieval(DEFAULT_RETRIEVAL_SET)
    assert len(rows) >= 30
    zh = [r for r in rows if r.lang == "zh"]
    assert len(zh) * 2 >= len(rows)
    assert all(r.expected_sources for r in rows)


def test_every_expected_section_exists(index_settings):
    pages = index_settings.knowledge_base / "guide"
    anchors = set()
    for page in pages.glob("*/*.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") and "{#" in line:
                anchors.add(f"{page.name}#{line.split('{#')[1].rstrip('}').strip()}")
    missing = {e for row in load_retrieval(DEFAULT_RETRIEVAL_SET) for e in row.expected_sources} - anchors
    assert not missing


def test_recall_at_5_in_each_language(retriever):
    scores = run_retrieval(load_retrieval(DEFAULT_RETRIEVAL_SET), retriever)
    for lang in ("en", "zh"):
        ranks = [s.rank for s in scores if s.lang == lang]
        misses = [(s.id, s.query, s.hits) for s in scores if s.lang == lang and not s.rank]
        recall = sum(1 for r in ranks if r) / len(ranks)
        assert recall >= MIN_RECALL_AT_5, json.dumps(misses, ensure_ascii=False, indent=1)


@pytest.mark.parametrize(
    ("query", "expected_prefix"),
    [
        ("CUDA graph accepts only Tensor inputs", "pitfalls.md#"),
        ("MoE 显存溢出", "parallelism-rules.md#"),
    ],
)
def test_issue_examples(retriever, query, expected_prefix):
    sources = [normalise_source(h.source) for h in retriever.search(query, k=5).hits]
    assert any(s.startswith(expected_prefix) for s in sources), sources


def test_filters(retriever):
    zh_hits = retriever.search("tensor parallel", k=5, lang="zh").hits
    assert zh_hits and all(h.lang == "zh" for h in zh_hits)
    recipe_hits = retriever.search("llama3 8b pretrain", k=5, doc_type="recipe", version="0.6.0").hits
    assert recipe_hits and all(
        h.doc_type == "recipe" and "0.6.0" in h.version.split(",") for h in recipe_hits
    )
    old_only = retriever.search("llama3 8b pretrain", k=5, doc_type="recipe", version="0.3.1").hits
    assert old_only and all("0.3.1" in h.version.split(",") for h in old_only)


def test_abstains_on_unrelated_text(retriever):
    result = retriever.search("zzqx qqvv wwpt", k=5)
    assert result.abstain and not result.hits


def test_bad_queries(retriever):
    with pytest.raises(UserError):
        retriever.search("   ")
    long_query = "tensor parallel " * 7000  # ~110 KB
    assert retriever.search(long_query, k=3).hits


def test_search_cli_json_contract(index_settings):
    exe = Path(sys.executable).with_name("autorecipe")
    env = {**os.environ, "AUTORECIPE_DATA_DIR": str(index_settings.data_dir)}
    out = subprocess.run(
        [str(exe), "search", "CUDA graph accepts only Tensor inputs", "--k", "3", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    payload = json.loads(out.stdout)
    assert payload["query"] == "CUDA graph accepts only Tensor inputs"
    assert len(payload["hits"]) == 3
    assert set(payload["hits"][0]) == {"chunk_id", "source", "heading", "doc_type", "lang", "text", "score"}


@pytest.mark.slow  # ingests the seed document with the embedding model
@pytest.mark.skipif(not SKILL_SEED.exists(), reason="the original skill document is not beside this checkout")
def test_original_skill_is_found_in_chinese_and_english(tmp_path):
    from assistant.retrieval import HybridRetriever
    from assistant.settings import Settings

    settings = Settings(data_dir=tmp_path / "d", knowledge_base=empty_knowledge_base(tmp_path / "kb"))
    ingest(settings, [SKILL_SEED])
    retriever = HybridRetriever(settings)
    seed_name = SKILL_SEED.name
    for query in (
        "CUDA graphs + full recompute 断言",
        "首次回答检查清单",
        "what to check in the first answer",
        "how to scale Llama3 8B from 2 GPUs to 8 GPUs",
        "大型 MoE 的 EP 过低",
    ):
        hits = retriever.search(query, k=5).hits
        assert any(seed_name in h.source for h in hits), (query, [h.source for h in hits])


def test_a_section_is_cited_once(retriever):
    # A table is indexed whole and row by row; the hits name each section once, at its best rank.
    sources = [h.source for h in retriever.search("shortcut flags -tp -pp -gb", k=8, lang="en").hits]
    assert len(sources) == len(set(sources))


def test_a_question_about_one_release_gets_that_release_first(retriever):
    hits = retriever.search(
        "How do I override config fields on the command line with run_recipe.py in 0.3.1?",
        k=5, lang="en", version="0.3.1",
    ).hits  # fmt: skip
    sources = [normalise_source(h.source) for h in hits]
    assert "overrides.md#v031-overrides" in sources
    assert all("0.3.1" in h.version.split(",") or h.version == "all" for h in hits)
    assert "entry-points.md#shortcut-flags" not in sources  # a v0.6.0+ section


def test_a_chinese_question_in_other_words_finds_the_section(retriever):
    # "旧的配方名" (old recipe names): the guide says "旧名字"; either legacy-name section answers it.
    for version in (None, "0.6.0"):
        hits = retriever.search("旧的配方名在 0.6.0 还能用吗", k=5, lang="zh", version=version).hits
        sources = {normalise_source(h.source) for h in hits}
        assert sources & {"recipe-unification.md#legacy-aliases", "quick-reference.md#legacy-name-notes"}
