"""The upstream error texts in assistant/rules/upstream.py, checked against the upstream source itself.

Each message expression is found in the Megatron-Bridge / Megatron-Core source at the commit a bundled
version uses, evaluated with the same numbers, and compared with ours character for character. The
read-only git mirrors live outside the repository: these tests are marked `mirror`, deselected with a message
when AUTORECIPE_BRIDGE_GIT / AUTORECIPE_MCORE_GIT are unset.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from math import prod
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.rules import upstream
from tests.conftest import BRIDGE_GIT, MCORE_GIT

BRIDGE, MCORE = BRIDGE_GIT, MCORE_GIT
# Bridge ref -> the Megatron-Core commit it pins as 3rdparty/Megatron-LM
PINS = {
    "v0.3.1": "55ac7082517c3878ae653c07c09c534b8aed49f6",
    "v0.5.1": "458c8d0ecafdf6d9e36771600d62ade27f2a67b7",
    "v0.6.0": "cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54",
    "067f987df03b8355b03192d88d70f1709fedf51a": "2a75ac12c54ba6a42b34024756820bf819a2e25f",
}
ALL_BRIDGE = list(PINS)
ALL_MCORE = list(PINS.values())
needs_mirrors = pytest.mark.mirror("AUTORECIPE_BRIDGE_GIT", "AUTORECIPE_MCORE_GIT")


def _source(repo: Path, ref: str, path: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        pytest.skip(f"{ref}:{path} not in mirror")
    return result.stdout


class _Names(dict):
    """Locals for eval(): known names map to values, dotted objects are SimpleNamespaces."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(key)


def _message_nodes(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            yield node.msg
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            yield node.exc.args[0]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("warn") and node.args:
            yield node.args[0]


def upstream_text(repo: Path, ref: str, path: str, anchor: str, **names: Any) -> str:
    """Evaluate the one message expression in `path` whose source contains `anchor`."""
    tree = ast.parse(_source(repo, ref, path))
    found = [node for node in _message_nodes(tree) if anchor in ast.unparse(node)]
    assert found, f"{anchor!r} not found in {ref}:{path}"
    expression = ast.Expression(found[0])
    scope = _Names(prod=prod, **names)
    return eval(compile(expression, path, "eval"), {"__builtins__": {}}, scope)  # noqa: S307


def ns(**values: Any) -> SimpleNamespace:
    return SimpleNamespace(**values)


TC = "megatron/core/transformer/transformer_config.py"
PS = "megatron/core/parallel_state.py"
CONFIG = "src/megatron/bridge/training/config.py"


@needs_mirrors
@pytest.mark.parametrize("ref", ALL_MCORE)
def test_heads_and_groups_current_text(ref):
    self = ns(num_attention_heads=32, tensor_model_parallel_size=3, num_query_groups=8)
    assert upstream_text(MCORE, ref, TC, "num_attention_heads ({self.num_attention_heads})", self=self) == (
        upstream.heads_tp(32, 3)
    )
    assert upstream_text(MCORE, ref, TC, "num_query_groups ({self.num_query_groups})", self=self) == (
        upstream.query_groups_tp(8, 3, multiple_or_divisor=True)
    )


@needs_mirrors
def test_groups_text_of_core_015_for_031_installs():
    self = ns(num_query_groups=2, tensor_model_parallel_size=8)
    text = upstream_text(MCORE, "core_v0.15.3", TC, "num_query_groups ({self.num_query_groups})", self=self)
    assert text == upstream.query_groups_tp(2, 8, multiple_or_divisor=False)


@needs_mirrors
@pytest.mark.parametrize("ref", ALL_MCORE)
def test_mcore_mesh_pipeline_and_batch_texts(ref):
    assert upstream_text(
        MCORE,
        ref,
        PS,
        "is not divisible by expert_tensor",
        world_size=8,
        expert_tensor_model_pipeline_parallel_size=16,
    ) == upstream.expert_world(8, 16)
    assert upstream_text(MCORE, ref, PS, "interleaved schedule") == upstream.VP_WITHOUT_PP
    block = "megatron/core/transformer/transformer_block.py"
    numbered = ref != PINS["v0.3.1"]
    anchor = "should be divisible by config.pipeline" if numbered else "should be divisible by pipeline"
    assert upstream_text(
        MCORE, ref, block, anchor, num_layers=30, config=ns(pipeline_model_parallel_size=4)
    ) == (upstream.layers_pp(30, 4, with_numbers=numbered))
    calculator = "megatron/core/num_microbatches_calculator.py"
    assert upstream_text(
        MCORE,
        ref,
        calculator,
        "times data parallel size",
        global_batch_size=512,
        micro_batch_size=1,
        data_parallel_size=3,
    ) == upstream.batch(512, 1, 3)
    parallel_config = "megatron/core/model_parallel_config.py"
    assert upstream_text(MCORE, ref, parallel_config, "without tensor parallelism") == upstream.SP_WITHOUT_TP
    assert upstream_text(MCORE, ref, parallel_config, "sequence parallelism must be used") == (
        upstream.EP_TP_NEEDS_SP
    )
    assert upstream_text(MCORE, ref, TC, "to use expert-parallel") == upstream.EP_NEEDS_MOE
    assert (
        upstream_text(MCORE, ref, TC, "full recompute is only supported")
        == upstream.CUDA_GRAPH_FULL_RECOMPUTE
    )
    moe = _source(MCORE, ref, "megatron/core/transformer/moe/moe_layer.py")
    assert upstream.EXPERTS_EP_ASSERT in moe


@needs_mirrors
@pytest.mark.parametrize("ref", ["v0.3.1", "v0.5.1"])
def test_packed_graph_text_of_older_pins(ref):
    layer = "megatron/core/transformer/transformer_layer.py"
    assert (
        upstream_text(MCORE, PINS[ref], layer, "packed_seq_params are excluded") == upstream.CUDA_GRAPH_PACKED
    )


@needs_mirrors
@pytest.mark.parametrize("ref", ALL_BRIDGE)
def test_bridge_config_texts(ref):
    model_cfg = ns(tensor_model_parallel_size=2, pipeline_model_parallel_size=4, context_parallel_size=2)
    dense = upstream_text(BRIDGE, ref, CONFIG, "total_model_size", world_size=12, model_cfg=model_cfg)
    assert dense.strip() == upstream.dense_world(12, 2, 4, 2)
    assert upstream_text(BRIDGE, ref, CONFIG, "2 * context parallel size") == upstream.CP_SEQ
    assert upstream_text(BRIDGE, ref, CONFIG, "calculate_per_token_loss must be True") == (
        upstream.FINETUNE_CP_PER_TOKEN
    )
    assert (
        upstream_text(BRIDGE, ref, CONFIG, "average_in_collective must be False")
        == upstream.FINETUNE_CP_AVERAGE
    )
    train = ns(micro_batch_size=4, global_batch_size=128)
    packed = upstream_text(
        BRIDGE, ref, CONFIG, "Micro batch size should be 1", self=ns(train=train), packed_sequence_size=4096
    )
    assert packed == upstream.packed_mbs(4, 128, 4096)
    mismatch = upstream_text(
        BRIDGE,
        ref,
        CONFIG,
        "Please ensure sequence length",
        self=ns(model=ns(seq_length=16384)),
        data_seq_length=8192,
    )
    assert mismatch == upstream.seq_mismatch(16384, 8192)
    assert upstream_text(BRIDGE, ref, CONFIG, "PEFT requires") == upstream.PEFT_NO_CHECKPOINT
    assert upstream_text(BRIDGE, ref, CONFIG, "check_for_nan_in_loss must be disabled") == (
        upstream.CUDA_GRAPH_NAN_CHECK
    )
    provider = "src/megatron/bridge/models/gpt_provider.py"
    assert upstream_text(BRIDGE, ref, provider, "RNG tracker is required") == upstream.CUDA_GRAPH_RNG
    assert upstream_text(BRIDGE, ref, provider, "number of model chunks") == upstream.VP_CHUNKS
    setup = "src/megatron/bridge/training/setup.py"
    cfg = ns(checkpoint=ns(pretrained_checkpoint="meta-llama/Meta-Llama-3-8B"))
    assert upstream_text(BRIDGE, ref, setup, "Invalid pretrained checkpoint directory", cfg=cfg) == (
        upstream.peft_invalid_checkpoint("meta-llama/Meta-Llama-3-8B")
    )


@needs_mirrors
@pytest.mark.parametrize("ref", ["v0.5.1", "v0.6.0", "067f987df03b8355b03192d88d70f1709fedf51a"])
def test_hierarchical_cp_texts(ref):
    assert (
        upstream_text(BRIDGE, ref, CONFIG, "must be set when cp_comm_type")
        == upstream.HIERARCHICAL_CP_MISSING
    )
    product = upstream_text(BRIDGE, ref, CONFIG, "Product of hierarchical", hcp_sizes=[2, 4], cp_size=4)
    assert product == upstream.hierarchical_cp_product([2, 4], 4)


@needs_mirrors
def test_hierarchical_cp_is_not_checked_in_031():
    assert "hierarchical_context_parallel_sizes must be set" not in _source(BRIDGE, "v0.3.1", CONFIG)


@needs_mirrors
@pytest.mark.parametrize("ref", ["v0.6.0", "067f987df03b8355b03192d88d70f1709fedf51a"])
def test_060_packing_graph_texts_and_runner(ref):
    assert upstream_text(BRIDGE, ref, CONFIG, "Offline packing with CUDA graphs") == (
        upstream.OFFLINE_PACKING_GRAPH_PAD
    )
    assert (
        upstream_text(BRIDGE, ref, CONFIG, "Packed attention CUDA graphs") == upstream.PACKED_GRAPH_CU_SEQLENS
    )
    args = ns(mode="sft", dataset="mock")
    runner = "scripts/training/run_recipe.py"
    assert upstream_text(BRIDGE, ref, runner, "is incompatible with dataset", args=args) == (
        upstream.mode_dataset("sft", "mock")
    )


def test_invalid_choice_matches_argparse():
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--dataset", choices=["mock", "squad"])
    with pytest.raises(argparse.ArgumentError) as error:
        parser.parse_args(["--dataset", "tulu"])
    assert str(error.value) == upstream.invalid_choice("--dataset", "tulu", ["mock", "squad"])


@needs_mirrors
@pytest.mark.parametrize("ref", ALL_MCORE)
def test_cpu_offloading_texts(ref):
    self = ns(num_layers=80)
    assert upstream_text(MCORE, ref, TC, "CPU offloading can be done", self=self) == upstream.offload_layers(
        80
    )
    assert upstream_text(MCORE, ref, TC, "Pipeline parallelism with CPU offloading") == upstream.OFFLOAD_PP
    assert upstream_text(MCORE, ref, TC, "activation recomputation is enabled") == upstream.OFFLOAD_RECOMPUTE
    assert upstream_text(MCORE, ref, TC, "not supported with CPU offloading") == upstream.OFFLOAD_GRAPHS


@needs_mirrors
@pytest.mark.parametrize("ref", ALL_BRIDGE)
def test_unknown_mixed_precision_text(ref):
    from ingest.mixed_precision import MODULE_PATH, extract_presets

    presets = extract_presets(_source(BRIDGE, ref, MODULE_PATH))
    registry = sorted(set(presets) | {p.replace("_", "-") for p in presets if "_" in p})
    text = upstream_text(
        BRIDGE, ref, MODULE_PATH, "Unknown mixed-precision recipe", name="bf16_with_fp8_mixed",
        valid=", ".join(registry),
    )  # fmt: skip
    assert text == upstream.unknown_mixed_precision("bf16-with-fp8-mixed", presets)
