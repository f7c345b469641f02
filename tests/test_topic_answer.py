"""The topic composer (assistant/topic_answer.py) and its fact table (knowledge_base/section_facts.json).

The table is checked against the guide (every anchor is a section of the en and zh page) and, where the
upstream mirror is on this machine, against Megatron-Bridge itself (every Bridge path a fact cites exists
at a release the fact holds for). The composer is driven with hand-made passages.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from assistant.kb import KnowledgeBase
from assistant.records import Hit
from assistant.relevance import load_topics
from assistant.settings import KNOWLEDGE_BASE
from assistant.topic_answer import asks_beyond_recipe, asks_if_known_bug, load_facts, topic_lead

FACTS = load_facts(KnowledgeBase(KNOWLEDGE_BASE))
TOPICS = load_topics(KnowledgeBase(KNOWLEDGE_BASE))
RAW = json.loads((KNOWLEDGE_BASE / "section_facts.json").read_text(encoding="utf-8"))
VERSIONS = {"0.3.1", "0.5.1", "0.6.0", "main"}
BRIDGE = Path(os.environ.get("AUTORECIPE_MIRRORS", "/work/.mirror")) / "NVIDIA-NeMo+Megatron-Bridge" / "repo"
MAIN_PIN = "067f987df03b8355b03192d88d70f1709fedf51a"  # the main snapshot the catalog was built from
TAGS = {"0.3.1": "v0.3.1", "0.5.1": "v0.5.1", "0.6.0": "v0.6.0", "main": MAIN_PIN}
OTHER_PROJECTS = ("Megatron-LM ", "Transformer Engine ", "https://")  # checked by hand, not in the mirror


def _hit(anchor: str, lang: str = "en") -> Hit:
    return Hit(
        chunk_id=anchor,
        source=f"guide/{lang}/{anchor}",
        heading=anchor,
        doc_type="guide",
        lang=lang,
        text="quoted passage",
        score=1.0,
    )


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r"\{#([a-z0-9-]+)\}", page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("anchor", sorted(RAW["sections"]))
def test_every_fact_is_about_a_guide_section_in_both_languages(anchor):
    page, section = anchor.split("#")
    for lang in ("en", "zh"):
        assert section in _anchors(KNOWLEDGE_BASE / "guide" / lang / page), (lang, anchor)
    for fact in RAW["sections"][anchor]:
        assert fact["en"] and fact["zh"] and fact["sources"], anchor
        assert set(fact.get("versions", VERSIONS)) <= VERSIONS, anchor


def test_labels_and_defaults_name_known_topics_and_sections():
    ids = {t.id for t in TOPICS.topics}
    assert set(RAW["labels"]) <= ids
    assert all(topic in ids and anchor in RAW["sections"] for topic, anchor in RAW["defaults"].items())


def _bridge_paths():
    for anchor, facts in RAW["sections"].items():
        for fact in facts:
            for source in fact["sources"]:
                if not source.startswith(OTHER_PROJECTS):
                    path = re.split(r"[ :]", source, maxsplit=1)[0]
                    yield anchor, path, sorted(fact.get("versions", VERSIONS))


@pytest.mark.parametrize(("anchor", "path", "versions"), list(_bridge_paths()))
def test_cited_bridge_paths_exist_upstream(anchor, path, versions):
    if not BRIDGE.exists():
        pytest.skip("Megatron-Bridge mirror not available")
    found = [
        v
        for v in versions
        if subprocess.run(
            ["git", "-C", str(BRIDGE), "cat-file", "-e", f"{TAGS[v]}:{path.rstrip('/')}"],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    ]
    assert found, f"{anchor}: {path} exists at none of {versions}"


def test_lead_names_topic_release_model_and_upstream_doc():
    lead = topic_lead(
        "Should I use recompute_method block or uniform for Llama 3 70B?",
        [_hit("recompute.md#full-recompute")],
        "0.5.1",
        "en",
        topics=TOPICS,
        facts=FACTS,
        entity="Llama 3 70B",
    )
    assert lead.startswith("**Activation recompute** (Megatron-Bridge 0.5.1, for Llama 3 70B):")
    assert "`model.recompute_method`" in lead and "docs/training/activation-recomputation.md" in lead


def test_lead_in_chinese_uses_the_chinese_fact():
    lead = topic_lead(
        "recompute 用 full 还是 selective？",
        [_hit("recompute.md#full-recompute", "zh")],
        "0.5.1",
        "zh",
        topics=TOPICS,
        facts=FACTS,
    )
    assert lead.startswith("**激活重计算（recompute）**（Megatron-Bridge 0.5.1）：")
    assert "重计算整层" in lead and "来源：" in lead


def test_the_fact_follows_the_release():
    ask = "How do I merge LoRA weights into the base model?"
    old = topic_lead(ask, [_hit("checkpoints.md#merge-lora")], "0.3.1", "en", topics=TOPICS, facts=FACTS)
    new = topic_lead(ask, [_hit("checkpoints.md#merge-lora")], "0.6.0", "en", topics=TOPICS, facts=FACTS)
    assert "merged Megatron checkpoint" in old and "merged Hugging Face checkpoint" in new


def test_no_fact_for_the_release_gives_no_lead():
    # the adapter export only exists from 0.5.1; a section without a fact says nothing of its own
    assert (
        topic_lead(
            "export adapter",
            [_hit("checkpoints.md#export-adapter")],
            "0.3.1",
            "en",
            topics=TOPICS,
            facts=FACTS,
        )
        == ""
    )
    assert (
        topic_lead(
            "tp", [_hit("parallelism-rules.md#minimize-pp")], "0.6.0", "en", topics=TOPICS, facts=FACTS
        )
        == ""
    )


def test_of_several_rows_the_one_sharing_words_with_the_question_is_stated():
    lead = topic_lead(
        "Is there a newer release that fixes ETP defaulting to TP for MoE?",
        [],
        "0.3.1",
        "en",
        topics=TOPICS,
        facts=FACTS,
    )
    assert lead.startswith("**Fixed in a later release**") and "expert_tensor_parallel_size" in lead
    lead = topic_lead(
        "Is it a known bug that SFT trains from random weights without pretrained_checkpoint?",
        [],
        "0.5.1",
        "en",
        topics=TOPICS,
        facts=FACTS,
    )
    assert "#4667" in lead


@pytest.mark.parametrize(
    ("question", "lang", "marker"),
    [
        ("Does a newer release stop fine-tuning from randomly initialized weights when I forget the base "
         "checkpoint?", "en", "#4667"),
        ("0.5.1 上全参微调没设置 pretrained_checkpoint 会从随机权重开始训练，后续版本修复了吗？", "zh",
         "#4667"),
        ("专家张量并行默认等于 TP，新版本修复了吗？", "zh", "expert_tensor_parallel_size"),
        ("Is it fixed in a later release that merge_lora.py only writes a Megatron checkpoint?", "en",
         "merge_lora.py"),
        ("Which version adds a dry-run to check my config?", "en", "--dry-run"),
    ],
)
def test_a_listed_fix_is_stated_for_the_question_its_pattern_matches(question: str, lang: str, marker: str):
    lead = topic_lead(question, [], "0.5.1", lang, topics=TOPICS, facts=FACTS)
    assert marker in lead


@pytest.mark.parametrize(
    "question",
    [
        "Is it a known bug that the loss spikes after 2000 steps with CUDA graphs? Fixed in a later release?",
        "用 CUDA graph 训练 2000 步后 loss 突增，这是已知问题吗？后续版本修复了吗？",
        "Is that a known bug? Fine-tuning Qwen3 8B hangs at the first all-reduce.",
    ],
)
def test_a_question_naming_no_listed_fix_gets_no_unrelated_fix(question: str):
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in question) else "en"
    hits = [_hit("release-fixes.md#fixes-by-topic")]
    lead = topic_lead(question, hits, "0.5.1", lang, topics=TOPICS, facts=FACTS)
    for unrelated in ("#4667", "expert_tensor_parallel_size", "merge_lora", "DeepEP", "convert.sh"):
        assert unrelated not in lead


def test_a_row_with_a_pattern_is_never_picked_by_position():
    assert FACTS.fact("release-fixes.md#fixes-by-topic", "0.5.1", "Is this a known bug?") is None
    fact = FACTS.fact("release-fixes.md#fixes-by-topic", "0.5.1", "ETP equals TP for my MoE, known bug?")
    assert fact is not None and "expert_tensor_parallel_size" in fact.en
    # a section whose facts carry no pattern still answers any question
    assert FACTS.fact("release-fixes.md#known-issues", "0.5.1", "Is this a known bug?") is not None


def test_a_second_fact_must_share_words_with_the_question():
    lead = topic_lead(
        "How do I turn on HSDP?",
        [_hit("sharding.md#hsdp"), _hit("checkpoints.md#ckpt-format")],
        "0.6.0",
        "en",
        topics=TOPICS,
        facts=FACTS,
    )
    assert "num_distributed_optimizer_instances" in lead and "torch_dist" not in lead


def test_question_kinds():
    assert asks_if_known_bug("Is that a known bug?") and asks_if_known_bug("这是已知问题吗？")
    assert not asks_if_known_bug("Which recipe for Llama 3 8B?")
    assert asks_beyond_recipe("How do I switch deepseek_v3 to the flex dispatcher with HybridEP?", TOPICS)
    assert not asks_beyond_recipe("What TP should I use for Llama 3 70B on 16 GPUs?", TOPICS)


@pytest.mark.integration
def test_a_model_without_recipes_is_said_so_even_without_a_goal():
    from assistant.service import ask

    answer = ask("Does Megatron-Bridge support Mixtral 8x7B?", version="0.6.0")
    assert "has no recipe for **Mixtral 8x7B**" in answer.answer_markdown
    answer = ask("Megatron-Bridge 支持 Falcon 40B 吗？", version="0.6.0")
    assert "没有 **Falcon 40B** 的配方" in answer.answer_markdown


@pytest.mark.integration
def test_a_known_bug_question_on_a_named_recipe_is_not_a_recommendation():
    from assistant.service import ask

    answer = ask(
        "On 0.5.1, llama32_1b_sft_config without pretrained_checkpoint trains from random weights. "
        "Is that a known bug?",
        version="0.5.1",
    )
    assert answer.intent == "explain" and answer.commands is None or not answer.commands.torchrun
    assert "#4667" in answer.answer_markdown


def test_what_the_question_names_and_nothing_shown_mentions_is_said_plainly():
    from assistant.topic_answer import uncovered_line

    question = "With the hybridep backend and padding_free, the all-gather hangs. What should I do?"
    line = uncovered_line(question, "HybridEP works inside one NVLink domain", "0.3.1", "en", topics=TOPICS)
    assert line.startswith("Nothing in the guide covers `padding_free` for Megatron-Bridge 0.3.1")
    assert "docs/" in line or "src/" in line  # where that release documents the topic
    # an error message no passage quotes is named too; one a passage quotes is not
    raised = (
        "FP8 SFT fails: AssertionError: FP8 execution requires 2D input matrices with height divisible by 8"
    )
    assert "`FP8 execution requires 2D input matrices`" in uncovered_line(
        raised, "FP8 needs compute capability 8.9", "0.3.1", "en", topics=TOPICS
    )
    quoted = "run_recipe.py says ValueError: Mode 'sft' is incompatible with dataset 'mock'. Why?"
    shown = "Error: `ValueError: Mode 'sft' is incompatible with dataset 'mock'.`"
    assert uncovered_line(quoted, shown, "0.6.0", "en", topics=TOPICS) == ""
    zh = uncovered_line("GDN 层能单独重计算吗？", "recompute_modules", "0.5.1", "zh", topics=TOPICS)
    assert zh.startswith("知识库中没有找到关于 `GDN` 的内容（Megatron-Bridge 0.5.1）")


def test_a_key_the_shown_passages_lack_but_the_guide_covers_cites_that_section():
    from assistant.guide_sections import guide_sections
    from assistant.topic_answer import uncovered_line

    guide = guide_sections(KnowledgeBase(KNOWLEDGE_BASE))
    shown = "Full recompute does not combine with TE-scoped CUDA graphs"
    question = "With MoE and CUDA graphs, what should cuda_graph_scope be set to on 0.6.0?"
    line = uncovered_line(question, shown, "0.6.0", "en", topics=TOPICS, guide=guide)
    # the section that explains the key in prose, not a page that only shows it in a command
    assert line == (
        "The guide covers `cuda_graph_scope` in `guide/en/cuda-graphs.md#cuda-graph-scopes` "
        "(CUDA graphs > Scopes: what gets captured)."
    )
    zh = uncovered_line("0.6.0 上 MoE 用 CUDA graph 时 cuda_graph_scope 应该怎么设？", shown, "0.6.0", "zh",
                        topics=TOPICS, guide=guide)  # fmt: skip
    assert zh.startswith("指南在 `guide/zh/cuda-graphs.md#cuda-graph-scopes`（CUDA graph > ")
    assert zh.endswith("中介绍了 `cuda_graph_scope`。") and "没有找到" not in zh
    # a key the guide does not name anywhere is still said to be uncovered, next to one it covers
    both_q = "Does padding_free work with cuda_graph_scope=[attn]?"
    both = uncovered_line(both_q, shown, "0.6.0", "en", topics=TOPICS, guide=guide)
    assert "covers `cuda_graph_scope`" in both and "Nothing in the guide covers `padding_free`" in both
    # a page marked for other releases does not cover the key for this one
    recipe_pages = [s for s in guide if s.source.startswith("guide/en/recipe-unification.md")]
    assert recipe_pages and not any(s.for_version("0.3.1") for s in recipe_pages)


@pytest.mark.integration
def test_the_answer_to_a_key_outside_the_retrieved_passages_cites_where_the_guide_covers_it():
    from assistant.service import ask

    en = "With MoE and CUDA graphs, what should cuda_graph_scope be set to on 0.6.0?"
    zh = "0.6.0 上 MoE 用 CUDA graph 时 cuda_graph_scope 应该怎么设？"
    cases = ((en, "en", "Nothing in the guide"), (zh, "zh", "没有找到关于 `cuda_graph_scope`"))
    for question, lang, wrong in cases:
        answer = ask(question, version="0.6.0", lang=lang)
        assert wrong not in answer.answer_markdown
        assert f"`guide/{lang}/cuda-graphs.md#cuda-graph-scopes`" in answer.answer_markdown


def test_a_quoted_message_is_compared_by_its_fixed_words_not_the_numbers_of_one_run():
    from assistant.topic_answer import uncovered_line

    question = "I ran it and got torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    shown = "Error: usually a plain `torch.OutOfMemoryError: CUDA out of memory`."
    assert uncovered_line(question, shown, "0.6.0", "en", topics=TOPICS) == ""
    # a message no passage quotes is still named, cut before the run's own numbers
    other = "it fails with RuntimeError: NCCL timeout after 1800 seconds on rank 3 of the job"
    assert "`NCCL timeout after`" in uncovered_line(other, shown, "0.6.0", "en", topics=TOPICS)
