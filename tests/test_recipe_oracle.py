"""Upstream's recipe unit tests as an oracle for the bundled catalogs.

knowledge_base/recipe_oracle.json holds the literal assertions of Megatron-Bridge's recipe tests, extracted
statically per bundled version (ingest/recipes/oracle.py), so this needs no upstream mirror. Every
assertion the catalog can answer must agree, fields set by post-construction helpers included, and the
value compared is the one the catalog records for the environment the test sets up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.catalog import load_catalog
from assistant.settings import KNOWLEDGE_BASE
from ingest.recipes.oracle import extract_tests
from ingest.recipes.oracle_compare import compare

ORACLE = json.loads((KNOWLEDGE_BASE / "recipe_oracle.json").read_text(encoding="utf-8"))
# At least this many assertions are compared per version (the table is not vacuous).
FLOOR = {"0.3.1": 450, "0.5.1": 1100, "0.6.0": 2300, "main": 2700}


@pytest.mark.parametrize("version", sorted(FLOOR))
def test_every_comparable_assertion_agrees_with_the_catalog(version: str) -> None:
    rows = ORACLE["versions"][version]["assertions"]
    result = compare(rows, load_catalog(version))
    assert result.disagreements == []
    assert result.agreed == result.compared >= FLOOR[version]
    assert ORACLE["versions"][version]["left_out"]["made after the test changed the config"] > 0


def test_fields_set_by_helpers_and_test_environments_are_compared() -> None:
    result = compare(ORACLE["versions"]["main"]["assertions"], load_catalog("main"))
    assert result.on_mutated_fields >= 2
    assert result.by_environment["no_cuda"] >= 1  # test_qwen3_moe_peft_recipe_builds_without_cuda


def test_the_ministral3_full_sft_default_is_in_the_oracle_and_agrees() -> None:
    rows = [
        r
        for r in ORACLE["versions"]["0.3.1"]["assertions"]
        if r["recipe"] == "ministral3_8b_finetune_config"
        and r["path"] == "model.tensor_model_parallel_size"
        and (r["call"] or {}).get("peft", "lora") is None
    ]
    assert rows and all(r["expected"] == 2 for r in rows)
    result = compare(rows, load_catalog("0.3.1"))
    assert result.compared == result.agreed == len(rows)


def test_a_wrong_catalog_value_is_caught() -> None:
    catalog = load_catalog("main")
    rows = [
        r
        for r in ORACLE["versions"]["main"]["assertions"]
        if r["recipe"] == "qwen3_30b_a3b_peft_config" and r["path"] == "model.moe_token_dispatcher_type"
    ]
    assert rows
    broken = catalog.model_copy(deep=True)
    for record in broken.recipes:
        if record.name == "qwen3_30b_a3b_peft_config":
            record.gpu_dependent.clear()
            record.fields["model.moe_token_dispatcher_type"] = "alltoall"  # what the catalog said before
    assert compare(rows, broken).disagreements


TEST_MODULE = """
import pytest
import torch
from megatron.bridge.recipes.qwen import qwen3_8b_sft_config
from megatron.bridge.recipes import ministral3 as m3

FUNCS = [m3.ministral3_8b_finetune_config]

def _assert_layout(cfg, tp):
    assert cfg.model.tensor_model_parallel_size == tp
    assert cfg.train.global_batch_size >= 1

def _overrides(name):
    overrides = {"name": f"unit_{name}", "tensor_model_parallel_size": 1}
    if "8b" in name:
        overrides.update({"sequence_parallel": False})
    return overrides

@pytest.mark.parametrize("recipe_func, tp", [(qwen3_8b_sft_config, 4), (FUNCS[0], 2)])
def test_table(recipe_func, tp, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = recipe_func()
    _assert_layout(cfg, tp)
    assert cfg.model.pipeline_dtype == torch.bfloat16
    cfg.model.tensor_model_parallel_size = 8
    assert cfg.model.tensor_model_parallel_size == 8

def test_kwargs():
    overrides = _overrides("ministral3_8b_finetune_config")
    overrides["peft"] = None
    overrides.pop("tensor_model_parallel_size")
    cfg = m3.ministral3_8b_finetune_config(**overrides)
    assert isinstance(cfg.peft, type(None)) or cfg.peft is None
    assert cfg.peft is None
"""


def test_the_extractor_reads_tables_helpers_calls_and_mutations() -> None:
    walk = extract_tests({"tests/unit_tests/recipes/test_x.py": TEST_MODULE})
    found = {(r["recipe"], r["path"], json.dumps(r["expected"]), json.dumps(r["call"])) for r in walk.rows}
    assert ("qwen3_8b_sft_config", "model.tensor_model_parallel_size", "4", "{}") in found
    assert ("ministral3_8b_finetune_config", "model.tensor_model_parallel_size", "2", "{}") in found
    assert ("qwen3_8b_sft_config", "model.pipeline_dtype", '"torch.bfloat16"', "{}") in found
    kwargs = next(r["call"] for r in walk.rows if r["test"] == "test_kwargs")
    assert kwargs == {"name": "unit_ministral3_8b_finetune_config", "sequence_parallel": False, "peft": None}
    assert all(r["env"] == ["no_cuda"] for r in walk.rows if r["test"] == "test_table")
    assert walk.left_out["made after the test changed the config"] == 2  # one per table row
    assert walk.left_out["not a comparison of a field with a literal"] >= 2  # `>= 1` and the `or`


def test_the_bundled_table_is_what_the_extractor_writes() -> None:
    text = (KNOWLEDGE_BASE / "recipe_oracle.json").read_text(encoding="utf-8")
    from ingest.recipes.oracle import dumps

    assert dumps(ORACLE) == text
    assert Path(KNOWLEDGE_BASE / "recipe_oracle.json").stat().st_size < 4_000_000
