"""Relevance screening of quoted passages, abstention lines, and the topic table's links to the guide."""

from __future__ import annotations

import json
import re

import pytest

from assistant.kb import KnowledgeBase
from assistant.records import Hit
from assistant.relevance import abstention, focus_of, load_topics, model_keys, same_model, screen
from assistant.settings import KNOWLEDGE_BASE
from ingest.docs import chunk_file

GUIDE = KNOWLEDGE_BASE / "guide"
TABLE = load_topics(KnowledgeBase(KNOWLEDGE_BASE))


def hit(source: str, heading: str, section: str = "") -> Hit:
    return Hit(
        chunk_id=source, source=source, heading=heading, section=section or heading.split(" > ")[-1],
        doc_type="guide", lang="en", text=heading, score=1.0,
    )  # fmt: skip


QWEN35_VL_FSDP = hit(
    "guide/en/pitfalls.md#qwen35-vl-fsdp-blackwell",
    "Pitfalls and exact error messages > The pitfalls > Qwen3.5-VL MoE with FSDP is Blackwell-only",
)
FSDP_TP_H100 = hit(
    "guide/en/pitfalls.md#fsdp-tp-h100",
    "Pitfalls and exact error messages > The pitfalls > Megatron-FSDP with TP > 1 on H100",
)
EXPERT_MESH = hit(
    "guide/en/moe-meshes.md#expert-mesh",
    "MoE: dense mesh and expert mesh arithmetic > Expert-mesh data parallelism",
)
DEEPEP_TABLE = hit(
    "guide/en/moe-dispatch.md#flex-gpu-support",
    "MoE token dispatch: alltoall, DeepEP, HybridEP, and MoE LoRA > Which GPUs each backend accepts",
)
PRECISION_TABLE = hit(
    "guide/en/precision.md#precision-per-arch",
    "FP8, MXFP8 and NVFP4 per GPU architecture > Which format runs on which GPU",
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Qwen3.5-VL MoE with FSDP", ("qwen", "35", True)),
        ("qwen35_vl_35b_a3b_pretrain_config", ("qwen", "35", True)),
        ("Qwen3-30B-A3B SFT", ("qwen", "3", False)),
        ("qwen3_vl_8b", ("qwen", "3", True)),
        ("DeepSeek-V3 on 256 H100", ("deepseek", "3", False)),
        ("glm45_355b_pretrain_config", ("glm", "45", False)),
        ("Llama 70B", ("llama", "", False)),  # a size is not a generation
        ("GPT-OSS 120B", ("gptoss", "", False)),
    ],
)
def test_model_keys(text, key):
    assert model_keys(text) == {key}


def test_no_model_in_ordinary_words():
    assert model_keys("graphics philosophy and the step time") == frozenset()


def test_generations_and_vl_are_different_models_but_a_missing_generation_is_not():
    assert not same_model(("qwen", "3", False), ("qwen", "35", True))
    assert not same_model(("qwen", "3", False), ("qwen", "3", True))
    assert same_model(("llama", "", False), ("llama", "3", False))


def test_a_passage_about_another_model_is_not_shown():
    focus = focus_of("Qwen3 30B-A3B with Megatron-FSDP on 16 H100", TABLE, moe=True)
    screened = screen([QWEN35_VL_FSDP, FSDP_TP_H100], focus, TABLE, strict=False)
    assert [h.source for h in screened.hits] == [FSDP_TP_H100.source]
    assert "qwen35-vl" in screened.dropped[0][1]


def test_moe_passages_are_not_shown_for_a_dense_model():
    focus = focus_of("Llama 3 70B pretraining on 64 H100", TABLE, moe=False)
    assert [h.source for h in screen([EXPERT_MESH, FSDP_TP_H100], focus, TABLE, strict=False).hits] == [
        FSDP_TP_H100.source
    ]
    # Unknown architecture, or a question that itself talks about experts: nothing is dropped for it.
    for focus in (
        focus_of("Llama 3 70B", TABLE, moe=None),
        focus_of("Llama 3 70B with EP 8", TABLE, moe=False),
    ):
        assert len(screen([EXPERT_MESH], focus, TABLE, strict=False).hits) == 1


def test_strict_screening_keeps_only_the_topic_asked_about():
    focus = focus_of("Does RTX PRO 6000 support MXFP8 training?", TABLE, moe=None)
    assert focus.topics == ("precision",)
    strict = screen([DEEPEP_TABLE, PRECISION_TABLE], focus, TABLE, strict=True)
    assert [h.source for h in strict.hits] == [PRECISION_TABLE.source]
    assert len(screen([DEEPEP_TABLE, PRECISION_TABLE], focus, TABLE, strict=False).hits) == 2


def test_a_question_without_a_known_topic_is_not_screened_by_topic():
    focus = focus_of("num_layers=92 should be divisible by pipeline_model_parallel_size=8", TABLE, moe=None)
    assert focus.topics == ()
    assert len(screen([DEEPEP_TABLE], focus, TABLE, strict=True).hits) == 1


def test_cp_is_not_read_in_cpu():
    assert "sequence" not in focus_of("CPU offloading on H100", TABLE, moe=None).topics
    assert "sequence" in focus_of("用CP=2训练", TABLE, moe=None).topics


@pytest.mark.parametrize(
    ("question", "lang", "version", "path"),
    [
        ("How do I log to Weights & Biases?", "en", "0.6.0", "docs/training/logging.md"),
        ("怎么训练自己的分词器？", "zh", "0.5.1", "src/megatron/bridge/training/tokenizers/config.py"),
        ("How do I distill a model?", "en", "0.3.1", "docs/training/distillation.md"),
        ("How do I distill a model?", "en", "main", "docs/modelopt/README.md"),
    ],
)
def test_abstention_names_the_file_of_the_users_release(question, lang, version, path):
    line = abstention(focus_of(question, TABLE, moe=None), TABLE, version, lang)
    assert f"`{path}`" in line and version in line and "\n" not in line
    assert ("配方目录" in line) == (lang == "zh")


def test_abstention_without_a_topic_points_to_the_docs_index():
    line = abstention(focus_of("something else entirely", TABLE, moe=None), TABLE, "0.6.0", "en")
    assert "`docs/README.md`" in line and "start from" in line


def _sections(lang: str) -> dict[str, set[str]]:
    pages: dict[str, set[str]] = {}
    for path in sorted((GUIDE / lang).glob("*.md")):
        chunks = chunk_file(path, source=path.name, doc_type="guide")
        pages[path.name] = {c.source.split("#", 1)[1] for c in chunks if "#" in c.source}
    return pages


def test_every_guide_reference_of_the_topic_table_exists_in_both_languages():
    for lang in ("en", "zh"):
        pages = _sections(lang)
        for topic in TABLE.topics:
            for ref in topic.guide:
                page, _, anchor = ref.partition("#")
                assert page in pages, f"{topic.id}: {lang}/{page} missing"
                assert not anchor or anchor in pages[page], f"{topic.id}: {lang}/{ref} missing"


def test_english_and_chinese_guide_pages_have_the_same_explicit_anchors():
    anchor = re.compile(r"\{#([A-Za-z0-9_-]+)\}")
    for path in sorted((GUIDE / "en").glob("*.md")):
        twin = GUIDE / "zh" / path.name
        assert twin.exists(), f"no Chinese page for {path.name}"
        en, zh = (anchor.findall(p.read_text(encoding="utf-8")) for p in (path, twin))
        assert en == zh, path.name


def test_topics_table_covers_every_bundled_version():
    data = json.loads((KNOWLEDGE_BASE / "topics.json").read_text(encoding="utf-8"))
    versions = set(data["fallback"])
    for raw in data["topics"]:
        assert set(raw["upstream"]) == versions, raw["id"]


def test_a_knowledge_base_without_a_topic_table_still_screens_and_abstains(tmp_path):
    table = load_topics(KnowledgeBase(tmp_path))
    focus = focus_of("Qwen3 30B-A3B with Megatron-FSDP", table, moe=None)
    assert focus.topics == ()
    assert [h.source for h in screen([QWEN35_VL_FSDP, FSDP_TP_H100], focus, table, strict=True).hits] == [
        FSDP_TP_H100.source
    ]
    assert abstention(focus, table, "0.6.0", "en").endswith("for Megatron-Bridge 0.6.0.")
