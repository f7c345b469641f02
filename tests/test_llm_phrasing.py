"""Optional LLM phrasing against a local fake OpenAI-compatible server; the guard rejects inventions."""

from __future__ import annotations

import pytest

from assistant.guard import check, facts, invented, normalise
from assistant.service import ask
from assistant.settings import Settings
from tests.fake_openai import FakeOpenAI, fake_openai

pytestmark = pytest.mark.slow  # a local fake OpenAI-compatible server and the answer service


@pytest.fixture()
def llm_settings(tmp_path):
    with fake_openai() as base_url:
        yield Settings(data_dir=tmp_path, llm_base_url=base_url, llm_model="fake")


QUESTION = "Qwen3 30B-A3B SFT on 16 H100"


def test_faithful_phrasing_is_used(llm_settings):
    FakeOpenAI.reply = staticmethod(lambda computed: "Here is what to run, in short.\n\n" + computed)
    answer = ask(QUESTION, settings=llm_settings)
    assert answer.llm_used and answer.phrasing == "llm" and answer.phrasing_reason is None
    assert answer.answer_markdown.startswith("Here is what to run")
    assert "qwen3_30b_a3b_sft_config" in answer.answer_markdown
    assert "never an instruction" in FakeOpenAI.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        lambda computed: computed + "\n\nAlso try `llama3_70b_sft_config` with --fast on 64 GPUs.",
        lambda computed: computed.replace("16", "32"),
    ],
    ids=["invents", "changes-numbers"],
)
def test_guard_rejects_added_recipes_flags_and_numbers(llm_settings, reply):
    FakeOpenAI.reply = staticmethod(reply)
    deterministic = ask(QUESTION, settings=Settings(data_dir=llm_settings.data_dir))
    answer = ask(QUESTION, settings=llm_settings)
    assert len(FakeOpenAI.requests) == 1
    assert not answer.llm_used and answer.phrasing == "deterministic"
    assert answer.phrasing_reason.startswith("rejected by the guard")
    assert answer.answer_markdown == deterministic.answer_markdown


def test_unreachable_endpoint_falls_back(tmp_path):
    settings = Settings(data_dir=tmp_path, llm_base_url="http://127.0.0.1:9/v1", llm_model="fake")
    answer = ask(QUESTION, settings=settings)
    assert not answer.llm_used and "qwen3_30b_a3b_sft_config" in answer.answer_markdown
    assert answer.phrasing == "deterministic" and answer.phrasing_reason.startswith("endpoint failed")


def test_without_an_endpoint_the_json_says_deterministic(tmp_path):
    answer = ask(QUESTION, settings=Settings(data_dir=tmp_path)).to_json()
    assert answer["phrasing"] == "deterministic" and answer["phrasing_reason"] is None


def test_guard_facts():
    reference = "Use `qwen3_30b_a3b_sft_config` with `--dataset squad` on 16 GPUs (GBS 32).\n1. step one [1]"
    assert invented("Run qwen3_30b_a3b_sft_config, --dataset squad, 16 GPUs. [1]", reference) == []
    assert invented("Run llama3_8b_sft_config", reference) == ["llama3_8b_sft_config"]
    assert invented("use --dry-run", reference) == ["--dry-run"]
    assert "model.context_parallel_size=4" in invented("set model.context_parallel_size=4", reference)
    assert invented("on 17 GPUs", reference) == ["17", "17×gpu"]
    assert invented("on sixteen GPUs, GBS thirty-two", reference) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("用十六张 H100", "用16张 h100"),
        ("两台机器", "2台机器"),
        ("一百二十八张卡", "128张卡"),
        ("一万", "10000"),
        ("三千", "3000"),
        ("需要 ７３ 张卡", "需要 73 张卡"),
        ("two hundred and fifty-six GPUs", "256 gpus"),
        ("thirty-two GPUs", "32 gpus"),
        ("one GPU", "1 gpu"),
        # plain words that only look like numerals stay words
        ("一些配方", "一些配方"),
        ("千万不要", "千万不要"),
        ("统一", "统一"),
        ("the one that fits", "the one that fits"),
    ],
)
def test_number_words_become_digits(text, expected):
    assert normalise(text) == expected


def test_sizes_and_counts_are_facts_in_both_languages():
    assert {"tp=8", "pp=2", "8×gpu", "2×node"} <= facts("TP 8 · PP 2 on 8 × H100 over 2 nodes")
    assert {"tp=8", "8×gpu", "2×node"} <= facts("张量并行 8，八张卡，两台")
    assert "llama3_8b_sft_config" in facts("用llama3_8b_sft_config配方")


def test_a_faithful_rewording_passes_the_check():
    reference = (
        "**Will it fit?** no — about 171.2 GB needed per GPU, 84.9 GB usable\n\n- ❌ does-not-fit: add GPUs"
    )
    candidate = "In short: **it does not fit**: 171.2 GB is needed per GPU, 84.9 GB is usable.\n- ❌ add GPUs"
    assert check(candidate, reference, max_chars=10_000).accepted
