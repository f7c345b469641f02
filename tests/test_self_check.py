"""The recipe self-check stored on every bundled catalog record (ingest/self_check.py, rules/repair.py)."""

from __future__ import annotations

import pytest

from assistant import catalog as catalogs
from assistant.kb import knowledge_base
from assistant.models import recipe_arch
from assistant.rules.repair import errors_of, own_cluster, self_check
from ingest.self_check import annotate, broken

VERSIONS = ("0.3.1", "0.5.1", "0.6.0", "main")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_bundled_self_checks_are_what_the_rule_module_says_now(version):
    """Regenerate with `python -m ingest.catalog_build` when the rules change and this fails."""
    catalog = catalogs.load_catalog(version)
    assert annotate(catalog).recipes == catalog.recipes
    assert sum(r.self_check is not None for r in catalog.recipes) > 0.9 * len(catalog.recipes)


@pytest.mark.parametrize(
    ("version", "recipe", "rule", "fix"),
    [
        ("0.6.0", "glm45_355b_pretrain_config", "pp-layers", {"model.pipeline_model_parallel_size": 4}),
        (
            "main",
            "nemotronh_56b_pretrain_256gpu_b200_bf16_config",
            "batch-divisible",
            {"train.global_batch_size": 256},
        ),
        (
            "main",
            "nemotronh_56b_pretrain_256gpu_gb300_bf16_config",
            "batch-divisible",
            {"train.global_batch_size": 256},
        ),
    ],
)
def test_known_broken_recipes(version, recipe, rule, fix):
    record = catalogs.resolve_recipe(recipe, version)
    check = record.self_check
    assert not check.passes and check.failing_rules == [rule] and check.fix == fix
    arch = recipe_arch(record, knowledge_base())
    assert errors_of(
        record, {}, arch, own_cluster(record), version, hardware=knowledge_base().hardware
    )  # broken at its defaults
    assert not errors_of(
        record, check.fix, arch, own_cluster(record), version, hardware=knowledge_base().hardware
    )  # the fix re-validates


def test_the_gpu_count_is_the_one_in_the_name_else_the_minimum():
    named = catalogs.resolve_recipe("nemotronh_56b_pretrain_256gpu_b200_bf16_config", "main")
    assert named.self_check.gpus == 256 and named.min_gpus == 2
    unnamed = catalogs.resolve_recipe("llama3_8b_pretrain_config", "main")
    assert unnamed.self_check.gpus == (unnamed.encoded_gpus or unnamed.min_gpus)


def test_fixed_at_main_and_passing_recipes():
    assert catalogs.resolve_recipe("glm45_355b_pretrain_config", "main").self_check.passes
    assert catalogs.resolve_recipe("qwen3_30b_a3b_sft_config", "0.6.0").self_check.passes
    assert "glm45_355b_pretrain_config" in broken(catalogs.load_catalog("0.6.0"))


def test_a_peft_recipe_is_not_broken_for_lacking_the_users_checkpoint():
    record = catalogs.resolve_recipe("llama3_8b_peft_config", "0.6.0")
    check = self_check(
        record, recipe_arch(record, knowledge_base()), "0.6.0", hardware=knowledge_base().hardware
    )
    assert check.passes and "peft-checkpoint" not in check.failing_rules
