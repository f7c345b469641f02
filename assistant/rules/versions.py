"""What differs between the bundled Megatron-Bridge versions, as far as the rules care.

Each trait was read from the Bridge tag and from the Megatron-Core commit that tag pins as
3rdparty/Megatron-LM (v0.3.1 -> 55ac708, v0.5.1 -> 458c8d0, v0.6.0 -> cd4afff, main 067f987 -> 2a75ac1).

num_query_groups vs TP: Megatron-Core accepts groups that are "a multiple or divisor" of TP since
core_v0.16.0; core_v0.15.x still demands "a multiple of". The v0.3.1 wheel declares
megatron-core>=0.15.0a0,<0.17.0, so an install of 0.3.1 may run core 0.15.x: we apply the strict rule
and its text there (it is also correct on 0.16). v0.5.1 and later pin 0.16-era or newer cores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.errors import UserError

BUNDLED_VERSIONS = ("0.3.1", "0.5.1", "0.6.0", "main")  # the one list (tests/test_one_version_list.py)
DEFAULT_VERSION = "0.6.0"  # answers use it when none is named or detected (Settings.default_version)


_RELEASE = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:(?:rc|a|b|\.dev|\.post)\d*)?(?:\+[\w.]+)?")
MAIN_KEY = (999, 0, 0)


def normalize_version(version: str) -> str:
    """'v0.6.0' / '0.6' / '0.7.0rc1' / 'HEAD' -> '0.6.0' / '0.6.0' / '0.7.0' / 'main'; else a UserError."""
    text = version.strip().lower().removeprefix("v")
    if text in {"main", "head", "master", "dev"}:
        return "main"
    match = _RELEASE.fullmatch(text)
    if not match:
        raise UserError(
            f"unknown Megatron-Bridge version {version!r}; use one of {', '.join(BUNDLED_VERSIONS)}"
        )
    return ".".join(part or "0" for part in match.groups())


def version_key(version: str) -> tuple[int, int, int]:
    """Sortable (major, minor, patch); 'main' sorts after every release."""
    text = normalize_version(version)
    if text == "main":
        return MAIN_KEY
    major, minor, patch = (int(part) for part in text.split("."))
    return major, minor, patch


# Where run_recipe.py repairs a config after the overrides, per rule it would otherwise fail (verified in the
# Bridge mirror: git show main:scripts/training/recipe_runner.py; git log --grep=5581).
RUNNER_SYNC_SOURCES = {
    "pp-uneven": "scripts/training/recipe_runner.py:391 at main, PR #5581",
    "pp-layout": "scripts/training/recipe_runner.py:373, v0.6.0+",
}


@dataclass(frozen=True)
class VersionTraits:
    version: str
    query_groups_multiple_or_divisor: bool  # False: groups must be a multiple of TP
    full_iteration_impl: bool  # full-iteration graphs via cuda_graph_impl="full_iteration" (else local+scope)
    checks_hierarchical_cp: bool  # Bridge asserts a2a+p2p needs hierarchical_context_parallel_sizes
    runner_syncs_finetune_cp: bool  # run_recipe.py sets per-token loss / average_in_collective for CP SFT
    offline_packing_graph_checks: bool  # Bridge validates packed + CUDA graph padding itself
    runner_syncs_seq_length: bool  # run_recipe.py copies dataset.seq_length into model.seq_length
    layers_pp_message_has_numbers: bool  # Megatron-Core >= 0.17 prints num_layers and PP in the assert
    etp_defaults_to_one: bool  # Bridge sets an unset ETP to 1 when EP > 1 (models/transformer_config.py)
    # run_recipe.py rebuilds a recipe-owned pipeline layout after -pp/-vp, through the builder the recipe
    # registers as model._pipeline_model_parallel_layout_builder (scripts/training/recipe_runner.py:373,
    # v0.6.0)
    runner_rebuilds_layout: bool
    # run_recipe.py clears recipe-owned num_layers_in_first/last_pipeline_stage that a -pp override makes
    # incompatible (recipe_runner.py:391 main, PR 5581 after v0.6.0)
    runner_clears_edge_counts: bool
    # Megatron-Core raises "Mismatch: N middle layers remaining but M middle PP stages available."
    # (core 0.16+, transformer_config.py); the v0.3.1 pin may still run core 0.15, which does not
    checks_middle_stage_mismatch: bool
    # Bridge checks EnergonDatasetConfig.micro_batch_size against train.micro_batch_size
    # (src/megatron/bridge/training/config.py:1196 v0.6.0; absent in v0.5.1)
    checks_energon_micro_batch: bool
    # run_recipe.py and setup_experiment.py rescale a benchmark recipe's GBS by the DP ratio when it runs on
    # another world size, unless the GBS is given (v0.6.0 scripts/training/run_recipe.py:343
    # _apply_benchmark_weak_scaling, scripts/common/benchmark_parallelism.py:126; absent from v0.5.1)
    weak_scales_benchmark_gbs: bool


def traits(version: str) -> VersionTraits:
    key = version_key(version)
    return VersionTraits(
        version=normalize_version(version),
        query_groups_multiple_or_divisor=key >= (0, 5),
        full_iteration_impl=key >= (0, 5),
        checks_hierarchical_cp=key >= (0, 5),
        runner_syncs_finetune_cp=key >= (0, 6),
        offline_packing_graph_checks=key >= (0, 6),
        runner_syncs_seq_length=key >= (0, 5),
        layers_pp_message_has_numbers=key >= (0, 5),
        etp_defaults_to_one=key >= (0, 6),
        runner_rebuilds_layout=key >= (0, 6),
        runner_clears_edge_counts=key > (0, 6, 0),
        checks_middle_stage_mismatch=key >= (0, 5),
        checks_energon_micro_batch=key >= (0, 6),
        weak_scales_benchmark_gbs=key >= (0, 6),
    )
