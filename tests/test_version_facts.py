"""Version facts come from the version's extracted launcher: flags and dataset presets differ per release."""

from __future__ import annotations

import pytest

from assistant.catalog import load_catalog
from assistant.version_facts import dataset_fact, launcher_facts


@pytest.mark.parametrize(
    ("version", "goal", "preset"),
    [
        ("0.5.1", "sft", "llm-finetune"),
        ("0.5.1", "pretrain", "llm-pretrain-mock"),
        ("0.6.0", "peft", "squad"),
    ],
)
def test_the_dataset_preset_follows_version_and_goal(version: str, goal: str, preset: str) -> None:
    fact = dataset_fact(goal, "which --dataset?", load_catalog(version), "en")
    assert f"`--dataset {preset}`" in fact and version in fact


def test_no_dataset_fact_without_a_goal_or_a_dataset_question() -> None:
    catalog = load_catalog("0.6.0")
    assert dataset_fact(None, "which --dataset?", catalog, "en") == ""
    assert dataset_fact("sft", "how many GPUs?", catalog, "en") == ""


def test_0_3_1_has_no_dataset_flag() -> None:
    assert "no `--dataset` flag" in dataset_fact("sft", "dataset?", load_catalog("0.3.1"), "en")


def test_named_flags_are_checked_both_spellings() -> None:
    catalog = load_catalog("0.6.0")
    assert "`--step-func/--step_func` is a flag" in launcher_facts("--step_func ok?", catalog, "en")
    missing = launcher_facts("can I pass --peft_scheme?", catalog, "zh")
    assert "没有 `--peft_scheme` 参数" in missing and "`--mode`" in missing


def test_listing_needs_the_launcher_and_a_flags_question() -> None:
    catalog = load_catalog("0.6.0")
    assert "`-tp`" in launcher_facts("run_recipe.py options?", catalog, "en")
    assert launcher_facts("what are the options for MoE?", catalog, "en") == ""


@pytest.mark.parametrize(
    "question",
    [
        "scripts/performance/run_script.py --cuda_graph_impl transformer_engine crashes; "
        "is --cuda_graph_scope needed?",
        "python examples/conversion/convert_checkpoints.py import --hf-model meta-llama/Llama-3.1-8B fails",
        "用 run_script.py 加 --cuda_graph_impl local 可以吗？",
    ],
)
def test_flags_of_another_named_script_are_not_judged_against_run_recipe(question: str) -> None:
    for version in ("0.3.1", "0.6.0"):
        assert launcher_facts(question, load_catalog(version), "en") == ""


def test_flags_are_still_checked_when_run_recipe_is_named_too() -> None:
    text = "scripts/training/run_recipe.py --peft_scheme lora, like in convert_checkpoints.py?"
    assert "`--peft_scheme`" in launcher_facts(text, load_catalog("0.6.0"), "en")
