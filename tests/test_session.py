"""Multi-turn slot filling: follow-ups keep earlier slots, a new model resets its own, ask what is missing."""

from __future__ import annotations

import json

import pytest

from assistant.records import Slots
from assistant.session import Conversation, clarifying_question, missing
from tests.test_understand import ask


def talk(*turns: str) -> tuple[Conversation, Slots]:
    conv = Conversation()
    slots = Slots()
    for turn in turns:
        slots = conv.update(ask(turn), text=turn)
    return conv, slots


def test_follow_up_gpu_count_keeps_model_and_goal() -> None:
    _, slots = talk("Qwen3 30B-A3B SFT on 16 H100", "and on 8 GPUs?")
    assert (slots.model_stem, slots.goal, slots.num_gpus, slots.gpu_type) == (
        "qwen3_30b_a3b",
        "sft",
        8,
        "h100",
    )
    assert slots.intent == "recommend" and slots.language == "en"


def test_the_fastest_layout_question_carries_to_a_new_count_not_to_a_new_goal() -> None:
    fastest = "What is the fastest layout to pretrain Llama 3 70B on 64 H100s?"
    _, slots = talk(fastest, "and on 128 GPUs?")
    assert slots.wants_fastest and slots.num_gpus == 128
    _, slots = talk(fastest, "LoRA it on 8 GPUs instead")
    assert slots.wants_fastest is None and slots.goal == "peft"
    _, slots = talk("最快的布局是什么？64 张 H100 预训练 Llama 3 70B", "换成 Qwen3 32B 呢？")
    assert slots.wants_fastest is None


def test_chinese_follow_up_switches_language() -> None:
    _, slots = talk("Qwen3 30B-A3B SFT on 16 GPUs", "那8卡呢？")
    assert (slots.model_stem, slots.goal, slots.num_gpus) == ("qwen3_30b_a3b", "sft", 8)
    assert slots.language == "zh"


@pytest.mark.parametrize(("follow_up", "precision"), [("and in NVFP4?", "nvfp4"), ("in FP8?", "fp8cs")])
def test_a_bare_precision_follow_up_amends_the_last_plan(follow_up: str, precision: str) -> None:
    _, slots = talk("Pretrain DeepSeek-V3 on 256 B200 GPUs", follow_up)
    assert (slots.intent, slots.model_stem, slots.num_gpus, slots.gpu_type, slots.precision) == (
        "recommend",
        "deepseek_v3",
        256,
        "b200",
        precision,
    )


def test_a_bare_precision_with_nothing_planned_is_not_a_plan() -> None:
    _, slots = talk("thanks!", "and in NVFP4?")
    assert slots.intent != "recommend"


def test_follow_up_sequence_length() -> None:
    _, slots = talk("Llama 3 8B pretraining on 16 GPUs", "what about 128K?")
    assert (slots.model_stem, slots.goal, slots.num_gpus, slots.seq_length) == (
        "llama3_8b",
        "pretrain",
        16,
        131072,
    )


def test_restated_gpu_count_replaces_old_topology() -> None:
    _, slots = talk("Llama 3 70B pretrain on 2 nodes x 8 H100", "and on 8 GPUs?")
    assert (slots.num_gpus, slots.num_nodes, slots.gpus_per_node) == (8, None, None)
    assert slots.gpu_type == "h100"


def test_new_model_resets_model_slots_but_keeps_gpus() -> None:
    conv, first = talk("qwen3_30b_a3b_sft_config on 16 H100 with model.expert_model_parallel_size=8")
    assert first.recipe_name == "qwen3_30b_a3b_sft_config" and first.overrides
    slots = conv.update(ask("what about Llama 3 8B?"))
    assert slots.model_stem == "llama3_8b"
    assert slots.recipe_name is None and slots.overrides == {}
    assert (slots.num_gpus, slots.gpu_type) == (16, "h100")


def test_same_model_merges_overrides() -> None:
    _, slots = talk("Llama 3 70B SFT, tp=4", "Llama 3 70B with pp=2")
    assert slots.overrides == {
        "model.tensor_model_parallel_size": "4",
        "model.pipeline_model_parallel_size": "2",
    }


def test_goal_change_clears_peft_scheme() -> None:
    _, slots = talk("DoRA on Qwen3 8B, 1 GPU", "actually full SFT on 8 GPUs")
    assert (slots.goal, slots.peft_scheme, slots.num_gpus) == ("sft", None, 8)


def test_benchmark_thread_continues_on_bare_follow_up() -> None:
    _, slots = talk("Benchmark Llama3 70B throughput on 64 H100", "and on B200?")
    assert (slots.intent, slots.gpu_type, slots.num_gpus) == ("benchmark", "b200", 64)


def test_benchmark_thread_survives_answers_to_its_questions() -> None:
    _, slots = talk("Benchmark throughput", "Llama 3 70B", "H100", "64")
    assert (slots.intent, slots.model_stem, slots.gpu_type, slots.num_gpus) == (
        "benchmark",
        "llama3_70b",
        "h100",
        64,
    )


def test_bare_number_answers_the_gpu_question() -> None:
    _, slots = talk("我想微调千问3 8B", "十六")
    assert (slots.model_stem, slots.goal, slots.num_gpus, slots.language) == ("qwen3_8b", "sft", 16, "zh")


def test_bare_number_without_a_pending_question_is_not_a_gpu_count() -> None:
    conv, _ = talk("Qwen3 8B SFT on 8 GPUs")
    assert conv.update(ask("64"), text="64").intent == "out_of_scope"
    assert conv.slots.num_gpus == 8


def test_first_try_then_a_full_request_becomes_a_recommendation() -> None:
    _, slots = talk("first time trying Bridge", "Qwen3 8B SFT on 8 GPUs")
    assert (slots.intent, slots.model_stem) == ("recommend", "qwen3_8b")


def test_first_try_keeps_going_on_a_bare_follow_up() -> None:
    _, slots = talk("first time trying Bridge", "and on 2 GPUs?")
    assert (slots.intent, slots.num_gpus) == ("first_try", 2)


def test_out_of_scope_turn_does_not_erase_memory() -> None:
    conv, _ = talk("Qwen3 8B SFT on 8 GPUs")
    reply = conv.update(ask("what's the weather like?"))
    assert reply.intent == "out_of_scope"
    slots = conv.update(ask("and with LoRA?"))
    assert (slots.model_stem, slots.goal, slots.peft_scheme, slots.num_gpus) == (
        "qwen3_8b",
        "peft",
        "lora",
        8,
    )


def test_error_text_belongs_to_its_turn() -> None:
    _, slots = talk("RuntimeError: CUDA out of memory on Qwen3 8B", "Qwen3 8B SFT on 8 GPUs then?")
    assert slots.error_text is None and slots.intent == "recommend"


def test_round_trip_json() -> None:
    conv, _ = talk("Qwen3 30B-A3B SFT on 16 H100", "那8卡呢？")
    data = json.loads(json.dumps(conv.to_json()))
    again = Conversation.from_json(data)
    assert again.to_json() == conv.to_json()
    assert again.update(ask("what about 32k?")).seq_length == 32768


def test_from_empty_json() -> None:
    conv = Conversation.from_json({})
    assert conv.update(ask("Llama 3 8B")).model_stem == "llama3_8b"


# ---------------------------------------------------------------- missing slots and the clarifying question


@pytest.mark.parametrize(
    ("question", "needs"),
    [
        ("Qwen3 30B-A3B SFT on 16 GPUs", []),
        ("I want to train something", ["model", "goal", "num_gpus"]),
        ("Llama 3 8B", ["goal", "num_gpus"]),
        ("Llama 3 SFT on 8 GPUs", ["model"]),
        ("Mixtral 8x7B SFT on 16 GPUs", []),  # named with its size: answered as a model without a recipe
        ("Gemma3 27B pretraining on 32 B200", []),
        ("在16张H100上做SFT", ["model"]),
        ("千问3 8B 预训练", ["num_gpus"]),
        ("first time trying Bridge", []),
        ("why must TP divide num_key_value_heads?", []),
        ("RuntimeError: CUDA out of memory", []),
        ("Benchmark Llama3 70B throughput", ["gpu_type", "num_gpus"]),
        ("Benchmark throughput on 64 H100", ["model"]),
        ("What is the difference between 0.5.1 and 0.6.0?", []),
        ("what changed in v0.6.0?", ["versions"]),
        ("llama3_8b_128k_pretrain_config", ["num_gpus"]),
    ],
)
def test_missing_slots(question: str, needs: list[str]) -> None:
    assert missing(ask(question)) == needs


def test_missing_after_follow_up_fills() -> None:
    conv = Conversation()
    first = conv.update(ask("Qwen3 8B"))
    assert missing(first) == ["goal", "num_gpus"]
    second = conv.update(ask("LoRA, 单卡"))
    assert missing(second) == []


def test_clarifying_question_english_lists_only_missing() -> None:
    question = clarifying_question(["goal", "num_gpus"], "en")
    assert question.endswith("?")
    assert "pretrain" in question and "GPUs" in question
    assert "Hugging Face" not in question


def test_clarifying_question_chinese() -> None:
    question = clarifying_question(["model", "goal", "num_gpus"], "zh")
    assert "模型" in question and "训练目标" in question and "GPU 数量" in question
    assert "GPU 型号" not in question


def test_clarifying_question_nothing_missing() -> None:
    assert clarifying_question([], "en") == "" and clarifying_question([], "zh") == ""


def test_clarifying_question_follows_turn_language() -> None:
    slots = ask("我想训练一个模型")
    assert slots.language == "zh"
    assert "请告诉我" in clarifying_question(missing(slots), slots.language)


def test_size_follow_up_after_a_rule_question_amends_that_question() -> None:
    question = "With CP=2 and TP=4, what must my sequence length be divisible by?"
    conv, slots = talk(question, "and with TP 8?")
    assert slots.intent == "explain" and conv.amended_topic and conv.topic_question == question
    assert slots.overrides["model.tensor_model_parallel_size"] == "8"
    assert slots.overrides["model.context_parallel_size"] == "2"
    restored = Conversation.from_json(json.loads(json.dumps(conv.to_json())))
    assert restored.topic_question == question


def test_a_new_question_is_not_an_amendment() -> None:
    question = "With CP=2 and TP=4, what must my sequence length be divisible by?"
    conv, slots = talk(question, "Qwen3 8B SFT on 8 H100")
    assert slots.intent == "recommend" and not conv.amended_topic and conv.topic_question is None
