"""Question forms the router did not name (assistant/intent_form): each form's line, on the bundled
catalogs, the conversion table and the rule module's texts."""

from __future__ import annotations

import pytest

from assistant import catalog as catalogs
from assistant import intent_form
from assistant.kb import knowledge_base
from assistant.records import Slots

KB = knowledge_base()  # the bundled knowledge base the answers read


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("Why does it still run when I set expert-model-parallel-size=32?", "why_allowed"),
        ("为什么把 expert-model-parallel-size 设成 32 也能跑？", "why_allowed"),
        ("Do I need to convert the HF weights to Megatron format first?", "conversion_need"),
        ("需要先把 HF 权重转换成 Megatron 格式吗？", "conversion_need"),
        ("import_ckpt runs out of host RAM. Can I do the import across GPUs?", "distributed_import"),
        ("What must my train batch size be divisible by?", "batch_divisible"),
        ("Can I train XiaoMi MiMo-V2-Flash with Megatron-Bridge?", "can_train"),
        ("How do I begin pretraining from a HF checkpoint?", "start_from_hf"),
        ("我想从 HF 的权重开始继续训练", "start_from_hf"),
        ("Can I start from a Hugging Face dataset?", None),
        ("Which recipe for Llama 3 8B on 8 H100?", None),
    ],
)
def test_forms(text, form):
    assert intent_form.classify(text) == form


def test_asked_model_needs_a_model_like_name():
    named = intent_form.asked_model("Can I train XiaoMi MiMo-V2-Flash with Megatron-Bridge?")
    assert named == "XiaoMi MiMo-V2-Flash"
    # "LoRA" names a method, not a model: not answered as an unknown model
    assert intent_form.asked_model("When can we use LoRA in Megatron-Bridge?") is None
    asked = "Is there a fine-tuning recipe for Qwen3-VL-4B (Qwen/Qwen3-VL-4B-Instruct)?"
    assert intent_form.asked_model(asked) == "Qwen3-VL-4B"
    assert intent_form.asked_model("Is there a recipe for Foo 7B in 0.6.0?") == "Foo 7B"


def test_ep_above_dp_is_explained_with_the_users_numbers():
    slots = Slots(num_gpus=32, overrides={"model.context_parallel_size": "16"})
    asked = ["I set expert-model-parallel-size=32, why does it still run?"]
    line = intent_form.why_allowed(asked, slots, "en", 256)
    assert "expected" in line and "EDP = 1" in line and "DP = 32 / (TP 1 × PP 1 × CP 16) = 2" in line
    assert "256" in line
    # an expert mesh that does not divide the world is not called expected
    bad = intent_form.why_allowed(["why does it still run with EP 24?"], slots, "en", None)
    assert "expected" not in bad and "not divisible by expert_tensor_model_pipeline_parallel size (24)" in bad
    assert intent_form.why_allowed(["why does it still run with TP 2?"], slots, "en", None) == ""


def test_conversion_need_reads_the_recipe_defaults():
    catalog = catalogs.load_catalog("0.6.0")
    pretrain = next(r for r in catalog.recipes if r.name == "llama3_8b_pretrain_config")
    assert "No conversion is needed" in intent_form.conversion_need(pretrain, "0.6.0", "en")
    assert "不需要" in intent_form.conversion_need(pretrain, "0.6.0", "zh")
    sft = next(r for r in catalog.recipes if r.name == "llama3_8b_sft_config")
    line = intent_form.conversion_need(sft, "0.6.0", "en")
    assert "No conversion" not in line and "checkpoint.pretrained_checkpoint" in line


@pytest.mark.parametrize("version", ["0.3.1", "main"])
def test_distributed_import_names_the_release_example(version):
    line = intent_form.distributed_import(version, "en", intent_form.load_conversion(KB))
    assert "examples/conversion/hf_megatron_roundtrip_multi_gpu.py" in line
    assert "provide_distributed_model" in line and "save_megatron_model" in line
    assert intent_form.distributed_import("0.1.0", "en", intent_form.load_conversion(KB)) == ""


def test_batch_rule_quotes_megatron_core():
    assert "not divisible by micro batch size" in intent_form.batch_divisible("en")
    assert "MBS × DP" in intent_form.batch_divisible("zh")


@pytest.mark.parametrize(
    ("version", "cli", "accepts"),
    [
        ("0.3.1", "examples/conversion/convert_checkpoints.py import", "must be a Megatron checkpoint"),
        ("0.5.1", "examples/conversion/convert_checkpoints.py import", "accepted there from 0.6.0 on"),
        ("0.6.0", "scripts/conversion/convert.sh import", "also takes a local Hugging Face model directory"),
        ("main", "scripts/conversion/convert.sh import", "step 1 is optional"),
    ],
)
@pytest.mark.integration
def test_starting_from_a_hugging_face_model_is_answered_in_the_releases_own_names(version, cli, accepts):
    """Convert once (AutoBridge.import_ckpt or the release's CLI), then a pretrain recipe through
    run_recipe.py with checkpoint.pretrained_checkpoint; a local HF directory works there from v0.6.0."""
    from assistant.service import ask

    question = "Where do I begin if I want to pretrain starting from a Hugging Face model?"
    answer = ask(question, version=version)
    line = answer.answer_markdown.split("\n\n")[0]
    assert "AutoBridge.import_ckpt(hf_model_id, megatron_path)" in line and cli in line and accepts in line
    assert "run_recipe.py --recipe llama3_8b_pretrain_config" in line
    assert "checkpoint.pretrained_checkpoint=${PRETRAINED_CHECKPOINT}" in line
    zh = ask("想从 Hugging Face 模型开始预训练，从哪里开始？", version=version)
    assert "AutoBridge.import_ckpt" in zh.answer_markdown and "两步" in zh.answer_markdown


@pytest.mark.integration
def test_starting_from_hf_with_a_model_named_reads_that_recipe():
    from assistant.service import ask

    answer = ask("I want to fine-tune Llama 3 8B starting from the HF checkpoint on 8 H100", version="0.6.0")
    assert "takes two steps" not in answer.answer_markdown
    assert "checkpoint.pretrained_checkpoint" in answer.answer_markdown
