"""Follow-up turns after a recommendation keep its model, recipe, GPUs and release, and change only what
they name: the GPU count or type, the release, the goal, the precision; "why?" explains that plan, and an
error quoted after it is diagnosed for that recipe. Each case runs the real service on the real catalog."""

from __future__ import annotations

from functools import cache

import pytest

from assistant.answer import Answer
from assistant.service import ask
from assistant.session import Conversation

pytestmark = pytest.mark.integration

EN = "Recommend a recipe to SFT Llama 3.1 8B on 8 H100 with Megatron-Bridge 0.6.0"
ZH = "用 Megatron-Bridge 0.6.0 在 8 张 H100 上对 Qwen3 8B 做 SFT，推荐什么配方？"
EN_RECIPE, ZH_RECIPE = "llama31_8b_sft_config", "qwen3_8b_sft_config"


@cache
def _after(first: str) -> dict:
    """The conversation after the first question, saved: each case continues its own copy."""
    conversation = Conversation()
    answer = ask(first, conversation=conversation)
    assert answer.intent == "recommend" and answer.recipe is not None
    return conversation.to_json()


def _second(first: str, second: str) -> Answer:
    return ask(second, conversation=Conversation.from_json(_after(first)))


def _command(answer: Answer) -> str:
    return answer.commands.torchrun or answer.commands.multinode or ""


@pytest.mark.parametrize(
    ("first", "second", "recipe", "gpus", "gpu"),
    [
        (EN, "and with 16 GPUs?", EN_RECIPE, 16, "h100"),
        (EN, "and on 2 nodes?", EN_RECIPE, 16, "h100"),
        (EN, "same thing on H200?", EN_RECIPE, 8, "h200"),
        (ZH, "如果只有 4 张卡呢？", ZH_RECIPE, 4, "h100"),
        (ZH, "换成 A100 呢？", ZH_RECIPE, 8, "a100"),
    ],
)
def test_a_follow_up_on_the_gpus_replans_the_same_recipe(first, second, recipe, gpus, gpu):
    answer = _second(first, second)
    assert answer.intent == "recommend" and answer.recipe is not None and answer.recipe.name == recipe
    assert (answer.slots.num_gpus, answer.slots.gpu_type, answer.version) == (gpus, gpu, "0.6.0")
    assert answer.plan is not None and answer.plan.num_gpus == gpus
    assert answer.language == ("zh" if first == ZH else "en")
    if gpus > 8:
        assert "--nnodes=2" in (answer.commands.multinode or "")


@pytest.mark.parametrize(
    ("first", "second", "version", "recipe"),
    [
        (EN, "what about Megatron-Bridge 0.5.1?", "0.5.1", EN_RECIPE),
        (ZH, "我用的是 0.5.1 呢？", "0.5.1", ZH_RECIPE),
        (EN, "and with LoRA?", "0.6.0", "llama31_8b_peft_config"),
        (ZH, "那如果用 LoRA 呢？", "0.6.0", "qwen3_8b_peft_config"),
    ],
)
def test_a_follow_up_on_the_release_or_goal_keeps_the_model_and_gpus(first, second, version, recipe):
    answer = _second(first, second)
    assert answer.intent == "recommend" and answer.recipe is not None and answer.recipe.name == recipe
    assert (answer.version, answer.slots.num_gpus, answer.slots.gpu_type) == (version, 8, "h100")
    assert f"Megatron-Bridge {version}" in answer.answer_markdown
    assert f"--recipe {recipe}" in _command(answer)


@pytest.mark.parametrize(("first", "second"), [(EN, "what about in FP8 then?"), (ZH, "改成 FP8 训练呢？")])
def test_a_follow_up_on_the_precision_sets_it_in_the_same_plan(first, second):
    answer = _second(first, second)
    recipe = ZH_RECIPE if first == ZH else EN_RECIPE
    assert answer.recipe is not None and answer.recipe.name == recipe and answer.slots.num_gpus == 8
    assert answer.slots.precision == "fp8cs"
    assert "'mixed_precision=bf16_with_fp8_current_scaling_mixed'" in _command(answer)


@pytest.mark.parametrize(
    ("first", "second", "head"),
    [
        (EN, "why that parallelism?", f"**Why `{EN_RECIPE}`:**"),
        (EN, "why did you pick this one?", f"**Why `{EN_RECIPE}`:**"),
        (ZH, "为什么用这个并行？", f"**为什么是 `{ZH_RECIPE}`：**"),
        (ZH, "为什么选这个配方？", f"**为什么是 `{ZH_RECIPE}`：**"),
    ],
)
def test_why_about_the_plan_explains_that_plan(first, second, head):
    """Was an answer about sequence-parallel rules (explain) for any wording but "why (this|that) layout"."""
    answer = _second(first, second)
    assert answer.intent == "recommend" and answer.slots.asks_why
    assert answer.answer_markdown.startswith(head)
    assert answer.slots.num_gpus == 8 and answer.version == "0.6.0"


@pytest.mark.parametrize(
    ("first", "second", "lead", "not_said"),
    [
        (
            EN,
            "I ran it and got torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            f"For `{EN_RECIPE}` (Megatron-Bridge 0.6.0)",
            "Nothing in the guide covers `CUDA out of memory",
        ),
        (
            ZH,
            "跑起来报错 torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB，怎么办？",
            f"对于 `{ZH_RECIPE}`（Megatron-Bridge 0.6.0）",
            "没有找到关于 `CUDA out of memory",
        ),
    ],
)
def test_an_error_after_a_recommendation_is_diagnosed_for_that_recipe(first, second, lead, not_said):
    """The quoted message's numbers are the run's own: the guide quoting the message covers it."""
    answer = _second(first, second)
    assert answer.intent == "troubleshoot" and answer.answer_markdown.startswith(lead)
    assert not_said not in answer.answer_markdown
    assert answer.recipe is not None and f"--recipe {answer.recipe.name}" in _command(answer)
    if first == EN:
        assert any(c.source.endswith("batch-size.md#oom-lower-mbs") for c in answer.citations)


@pytest.mark.parametrize(
    ("first", "second", "fit", "speed"),
    [
        (EN, "how fast will it be?", "**Will it fit?**", "**How fast?**"),
        (ZH, "吞吐大概多少？", "**显存是否够用？**", "**速度估计：**"),
        (ZH, "放得下吗？", "**显存是否够用？**", "**速度估计：**"),
    ],
)
def test_a_question_on_the_plans_speed_or_memory_answers_with_that_plan(first, second, fit, speed):
    """Was "outside what I can answer" or a guide quote without the plan."""
    answer = _second(first, second)
    recipe = ZH_RECIPE if first == ZH else EN_RECIPE
    assert answer.intent == "recommend" and answer.recipe is not None and answer.recipe.name == recipe
    assert fit in answer.answer_markdown and speed in answer.answer_markdown
    assert answer.estimate is not None and answer.estimate.throughput is not None


@pytest.mark.parametrize(
    ("first", "second", "recipe", "goal"),
    [
        (EN, "what about Qwen3 14B?", "qwen3_14b_sft_config", "sft"),
        (ZH, "换成 Qwen3 14B 呢？", "qwen3_14b_sft_config", "sft"),
        (EN, "same but pretraining", "llama31_8b_pretrain_config", "pretrain"),
        (ZH, "改成预训练呢？", "qwen3_8b_pretrain_config", "pretrain"),
        (ZH, "序列长度 16k 呢？", "qwen3_8b_sft_32k_config", "sft"),
    ],
)
def test_a_follow_up_on_the_model_goal_or_length_keeps_the_gpus_and_release(first, second, recipe, goal):
    answer = _second(first, second)
    assert answer.intent == "recommend" and answer.recipe is not None and answer.recipe.name == recipe
    assert (answer.slots.goal, answer.slots.num_gpus, answer.slots.gpu_type, answer.version) == (
        goal,
        8,
        "h100",
        "0.6.0",
    )
