"""The config a question states, in every form users write it (assistant/config_text.py)."""

from __future__ import annotations

import pytest

from assistant.config_text import read_config_text
from assistant.understand import understand

TP = "model.tensor_model_parallel_size"
PP = "model.pipeline_model_parallel_size"
VP = "model.virtual_pipeline_model_parallel_size"
EP = "model.expert_model_parallel_size"
ETP = "model.expert_tensor_parallel_size"
CP = "model.context_parallel_size"
MBS = "train.micro_batch_size"
GBS = "train.global_batch_size"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TP=4", {TP: "4"}),
        ("TP 4", {TP: "4"}),
        ("tp4", {TP: "4"}),
        ("tensor_model_parallel_size=4", {TP: "4"}),
        ("PP=8, VP=12", {PP: "8", VP: "12"}),
        ("EP8", {EP: "8"}),
        ("ETP 1", {ETP: "1"}),
        ("CP=2", {CP: "2"}),
        ("MBS 1", {MBS: "1"}),
        ("GBS 192", {GBS: "192"}),
        ("vpp 4 with tp2pp4", {VP: "4", TP: "2", PP: "4"}),
        ("EP 设成 6", {EP: "6"}),
        ("TP为2", {TP: "2"}),
    ],
)
def test_every_size_spelling(text, expected):
    assert read_config_text(text).overrides == expected


@pytest.mark.parametrize(
    "text",
    [
        "EP 8 GPUs",  # a count of GPUs, not an expert-parallel size
        "qwen3_30b_a3b_ep8_config on 8 gpus",  # a recipe name, not EP 8
        "bf16_2nodes_tp1_pp2_cp1_vp24_ep2_etp1_1mbs_512gbs",  # a run name from a log
        "Llama 3 8B on 16 H100",
    ],
)
def test_words_that_are_not_sizes(text):
    assert read_config_text(text).overrides == {}


def test_a_recipe_default_is_not_an_override():
    stated = read_config_text("the recipe default is TP=1")
    assert stated.overrides == {} and stated.defaults == {TP: "1"}
    stated = read_config_text("recipe default TP=1, but I set TP=4 and PP 2")
    assert stated.overrides == {TP: "4", PP: "2"} and stated.defaults == {TP: "1"}
    stated = read_config_text("TP=1 (the default) and PP=4")
    assert stated.overrides == {PP: "4"} and stated.defaults == {TP: "1"}
    stated = read_config_text("默认 TP=1，我改成 TP=2")
    assert stated.overrides == {TP: "2"}


def test_a_pasted_command_line():
    command = (
        "torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
        "--dataset mock model.tensor_model_parallel_size=2 train.global_batch_size=64 "
        "mixed_precision=bf16_mixed 'model.cuda_graph_scope=[attn,mlp]'"
    )
    assert read_config_text(command).overrides == {
        TP: "2",
        GBS: "64",
        "mixed_precision": "bf16_mixed",
        "model.cuda_graph_scope": "[attn,mlp]",
    }


def test_a_yaml_dump():
    dump = """Here is my config:
```yaml
model:
  tensor_model_parallel_size: 4
  pipeline_model_parallel_size: 8   # from the recipe
  sequence_parallel: true
train:
  global_batch_size: 192
  micro_batch_size: 1
```
"""
    assert read_config_text(dump).overrides == {
        TP: "4",
        PP: "8",
        "model.sequence_parallel": "true",
        GBS: "192",
        MBS: "1",
    }


def test_the_config_lines_of_a_log_and_a_stack_trace():
    log = """[rank0]: ------------------------ arguments ------------------------
[rank0]:   tensor_model_parallel_size ...................... 2
[rank0]:   expert_model_parallel_size ...................... 8
Traceback (most recent call last):
  File "train.py", line 19, in <module>
    model_provider.pipeline_model_parallel_size = 2
    cfg.model.expert_tensor_parallel_size = 1
RuntimeError: world_size (8) is not divisible by expert_tensor_model_pipeline_parallel size (16)"""
    assert read_config_text(log).overrides == {TP: "2", EP: "8", PP: "2", ETP: "1"}


def test_an_error_message_repeats_the_run_value():
    text = "fails: num_layers=92 should be divisible by config.pipeline_model_parallel_size=8"
    assert read_config_text(text).overrides == {PP: "8"}


def test_understand_reads_sizes_from_prose_and_keeps_defaults_out():
    slots = understand("Llama3 8B pretraining on 16 H100 with TP 2 and GBS 128", known_stems=["llama3_8b"])
    assert slots.overrides == {TP: "2", GBS: "128"}
    slots = understand(
        "Llama3 8B pretraining on 16 H100; the recipe default is TP=1", known_stems=["llama3_8b"]
    )
    assert slots.overrides == {} and slots.intent == "recommend"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "fails: Micro batch size should be 1 when training with packed sequence, "
            "but your micro batch size is 4.",
            {"train.micro_batch_size": "4"},
        ),
        (
            "global batch size (192) is not divisible by micro batch size (2) times data parallel size (128)",
            {"train.global_batch_size": "192", "train.micro_batch_size": "2"},
        ),
        (
            "num_query_groups (4) must be a multiple of tensor_model_parallel_size (16).",
            {"model.tensor_model_parallel_size": "16"},
        ),
    ],
)
def test_the_values_an_upstream_error_prints_are_the_run_settings(text, expected):
    assert read_config_text(text).overrides == expected


def test_chinese_punctuation_ends_a_value_and_a_bare_length_is_the_runs():
    stated = read_config_text("开 CP=4、seq_length=10000（TP=2）").overrides
    assert stated["model.context_parallel_size"] == "4"
    assert stated["model.seq_length"] == stated["dataset.seq_length"] == "10000"
    assert stated["model.tensor_model_parallel_size"] == "2"
    # a dotted key is only that field: a model/dataset mismatch is the user's to see
    assert read_config_text("model.seq_length=4096").overrides == {"model.seq_length": "4096"}
