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
