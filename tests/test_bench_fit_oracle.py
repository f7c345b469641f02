"""The fit oracle's categories: a recipe whose own layout breaks a rule is not a missing architecture."""

from __future__ import annotations

from assistant.catalog import load_catalog
from benchmarks.bench_fit_oracle import estimate_record, missing_piece, reason_class


def _record(name: str):
    return next(r for r in load_catalog("main").recipes if r.name == name and r.kind == "benchmark")


def test_broken_recipe_names_its_rule_and_is_estimated_at_the_fix():
    # The 256-GPU BF16 recipe keeps the 64-GPU global batch 192: it does not divide over 128 DP ranks.
    record = _record("nemotronh_56b_pretrain_256gpu_gb300_bf16_config")
    outcome = estimate_record(record, "main")
    assert outcome["status"] == "not estimated"
    assert outcome["rule"] == "batch-divisible"
    assert outcome["fix"] == "train.global_batch_size=256"
    assert outcome["repaired"]["status"] in ("fits", "does not fit")
    reason = reason_class(outcome["reason"], record)
    assert reason == "the recipe's own layout fails rule batch-divisible"
    assert "architecture" not in missing_piece(outcome["reason"], record)
