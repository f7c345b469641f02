"""Override parsing and the effective config."""

from __future__ import annotations

import pytest

from assistant.errors import UserError
from assistant.records import CudaGraph
from assistant.rules.config import build_config, parse_overrides, parse_value
from tests.test_rules_fixtures import make_record


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2", 2),
        ("-3", -3),
        ("1_000", 1000),
        ("1e-4", 1e-4),
        ("0.5", 0.5),
        ("inf", float("inf")),
        ("true", True),
        ("False", False),
        ("null", None),
        # Hydra has one null, `null`: `none`/`None` are strings (Bridge's cuda_graph_impl=none is one).
        ("None", "None"),
        ("none", "none"),
        ("[2,2]", [2, 2]),
        ("[attn, moe_router]", ["attn", "moe_router"]),
        ("[1,[2,3]]", [1, [2, 3]]),
        ("[]", []),
        ("{a:1,b:[x]}", {"a": 1, "b": ["x"]}),
        ("'a b'", "a b"),
        ('"0.5"', "0.5"),
        ("''", ""),
        ("a b", "a b"),
        (" 7 ", 7),
        ("a2a+p2p", "a2a+p2p"),
        ("/data/ckpt", "/data/ckpt"),
        ("${model.seq_length}", "${model.seq_length}"),
        ("int(3.0)", 3),
    ],
)
def test_parse_value_like_hydra(text, value):
    assert parse_value(text) == value


def test_values_agree_with_hydras_own_parser():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    items = ["a=null", "b=none", "c=[1,'x y']", "d=1e3", "e=${x.y}", "f= True ", "g={k:[1,2]}", "h="]
    upstream = {o.key_or_group: o.value() for o in OverridesParser.create().parse_overrides(items)}
    assert parse_overrides(items) == upstream


def test_shortcuts_expand_to_dotted_keys():
    parsed = parse_overrides(["tp=2", "gbs=64", "seq_length=16384", "train.micro_batch_size=2"])
    assert parsed == {
        "model.tensor_model_parallel_size": 2,
        "train.global_batch_size": 64,
        "model.seq_length": 16384,
        "dataset.seq_length": 16384,
        "train.micro_batch_size": 2,
    }


def test_add_force_add_and_delete_prefixes():
    parsed = parse_overrides(["+model.new_key=1", "++train.train_iters=10", "tp=2", "~tp", "gbs=8", "~gbs=8"])
    # `~key` removes the key from the overrides, as Bridge deletes it, so the recipe's value stands.
    assert parsed == {"model.new_key": 1, "train.train_iters": 10}


@pytest.mark.parametrize(
    "item",
    [
        "tp2",
        "=3",
        "a..b=1",
        "1abc=2",
        "x=[1,2",
        "model x=1",
        "key =1",
        "x='open",
        "x=${a",
        "x= 'a' b",
        "model@pkg=1",
        "group/option=x",
        "tp=1,2",
        "tp=choice(1,2)",
        "tp=range(1,4)",
    ],
)
def test_malformed_overrides_are_user_errors(item):
    with pytest.raises(UserError) as caught:
        parse_overrides([item])
    message = str(caught.value)
    assert repr(item) in message and "Traceback" not in message and "\n" not in message


def test_a_grammar_error_names_the_character():
    with pytest.raises(UserError, match=r"unexpected character ' ' at position 6"):
        parse_overrides(["model x=1"])


def test_an_empty_value_is_the_empty_string_as_in_hydra():
    assert parse_overrides(["model.x="]) == {"model.x": ""}
    with pytest.raises(UserError, match="integer"):
        build_config(make_record(), ["tp="])


def test_non_integer_parallel_size_is_a_user_error():
    with pytest.raises(UserError, match="integer"):
        build_config(make_record(), ["tp=two"])


def test_recipe_values_then_user_overrides():
    record = make_record(tp=2, pp=4, vp=5, cp=2, sp=True, fields={"ddp.overlap_grad_reduce": True})
    config = build_config(record, ["pp=2", "model.cuda_graph_impl=transformer_engine"])
    assert (config.tp, config.pp, config.vp, config.cp, config.sp) == (2, 2, 5, 2, True)
    assert config.overlap_grad_reduce is True
    assert config.graphs_enabled and config.cuda_graph_impl == "transformer_engine"
    assert config.user_overrides == {
        "model.pipeline_model_parallel_size": 2,
        "model.cuda_graph_impl": "transformer_engine",
    }


def test_defaults_when_the_recipe_sets_nothing():
    config = build_config(make_record(tp=None, pp=None, cp=None, gbs=None, mbs=None), [])
    assert (config.tp, config.pp, config.cp, config.ep, config.vp) == (1, 1, 1, 1, None)
    assert config.average_in_collective is True and config.calculate_per_token_loss is False
    assert not config.graphs_enabled and not config.packed_sequence


def test_cuda_graph_scope_enum_strings_and_packing_flags():
    record = make_record(cuda_graph=CudaGraph(impl="local", scope=["CudaGraphScope.full_iteration"]))
    config = build_config(record, ["dataset.enable_offline_packing=true"])
    assert config.cuda_graph_scope == ["full_iteration"] and config.packed_sequence


def test_unevaluated_recipe_expressions_do_not_blame_the_user():
    record = make_record(fields={"model.tensor_model_parallel_size": "<expr: tp_size>"})
    assert build_config(record, []).tp == 1


def test_a_mixed_precision_override_sets_the_precision():
    from assistant.rules.features import PRESET_OF_PRECISION, feature_overrides, precision_of_preset

    record = make_record()
    assert build_config(record, ["mixed_precision=bf16_with_mxfp8_mixed"]).precision == "fp8mx"
    assert build_config(record, ["mixed_precision=bf16-with-fp8-current-scaling-mixed"]).precision == "fp8cs"
    assert build_config(record, []).precision == record.precision
    assert all(precision_of_preset(name) == code for code, name in PRESET_OF_PRECISION.items())
    presets = ("bf16_mixed", "bf16_with_fp8_current_scaling_mixed")
    asked = feature_overrides([], is_moe=False, precision="fp8cs", recipe_precision="bf16", presets=presets)
    assert asked == {"mixed_precision": "bf16_with_fp8_current_scaling_mixed"}
    # Nothing to switch: the recipe already trains in it, or the release has no such preset.
    assert not feature_overrides(
        [], is_moe=False, precision="fp8cs", recipe_precision="fp8cs", presets=presets
    )
    assert not feature_overrides(
        [], is_moe=False, precision="fp8mx", recipe_precision="bf16", presets=presets
    )


@pytest.mark.parametrize("override", ["train.micro_batch_size=0", "model.tensor_model_parallel_size=-2"])
def test_a_size_below_one_is_refused_with_its_key(override):
    with pytest.raises(UserError, match=override.split("=")[0] + " must be at least 1"):
        build_config(make_record(), [override])


_IMPORT_UNDER_LOCK = """
import sys, threading, time
from assistant.rules import config
with config._HYDRA_LOCK:
    worker = threading.Thread(target=config.parse_overrides, args=(["tp=2"],))
    worker.start()
    time.sleep(0.5)
    imported_while_locked = any(name == "hydra" or name.startswith("hydra.") for name in sys.modules)
worker.join(30)
print(imported_while_locked, any(name.startswith("hydra.") for name in sys.modules), worker.is_alive())
"""


def test_hydra_is_imported_and_used_only_under_one_lock():
    """Two threads importing Hydra at once deadlock in its import cycle (bench_load saw
    `_DeadlockError ... hydra.core.override_parser` under 20 chat sessions): the first parse in a fresh
    process must wait for the lock before it touches Hydra, then succeed."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_UNDER_LOCK], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "True", "False"], done.stderr
