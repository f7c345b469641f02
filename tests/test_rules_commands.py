"""commands() and choose_dataset(): every generated command parses with that version's own arguments.

The run_recipe.py / setup_experiment.py parsers are rebuilt from the catalog's extracted flag tables
(parse_known_args, as run_recipe.py does); the torchrun part is parsed by torch's own torchrun parser.
"""

from __future__ import annotations

import shlex

import pytest

from assistant.errors import UserError
from assistant.kb import knowledge_base
from assistant.planning.resize import resize
from assistant.records import Cluster, LauncherSpec, Override
from assistant.rules.commands import choose_dataset, commands, render_override
from assistant.rules.findings import render_value
from tests.test_rules_fixtures import (
    HAND_LAUNCHERS,
    LLAMA3_8B,
    QWEN3_30B_A3B,
    VERSIONS,
    catalog_launcher,
    make_record,
    parser_from_flags,
)

ENV = {"$NODE_RANK": "1", "$MASTER_ADDR": "10.0.0.1", "${PRETRAINED_CHECKPOINT}": "/ckpt/base"}


def launchers() -> list[tuple[str, str, LauncherSpec]]:
    found = [("hand", version, HAND_LAUNCHERS[version]) for version in VERSIONS]
    for version in VERSIONS:
        spec = catalog_launcher(version)
        if spec is not None:
            found.append(("catalog", version, spec))
    return found


LAUNCHERS = launchers()
IDS = [f"{source}-{version}" for source, version, _ in LAUNCHERS]


def expand(text: str) -> list[str]:
    for variable, value in ENV.items():
        text = text.replace(variable, value)
    return shlex.split(text)


def parse_run_recipe(spec: LauncherSpec, args: list[str]):
    parsed, unknown = parser_from_flags(spec.flags).parse_known_args(args)
    assert all("=" in item and not item.startswith("-") for item in unknown), unknown
    return parsed, dict(item.split("=", 1) for item in unknown)


def parse_torchrun(command: str, spec: LauncherSpec):
    tokens = expand(command)
    assert tokens[:5] == ["uv", "run", "python", "-m", "torch.distributed.run"]
    from torch.distributed.run import (
        get_args_parser,  # torch costs seconds to import: only the slow test pays
    )

    torchrun = get_args_parser().parse_args(tokens[5:])
    assert torchrun.training_script == spec.script
    return torchrun, *parse_run_recipe(spec, torchrun.training_script_args)


RECIPES = {
    "pretrain": make_record(cp=2, encoded_gpus=2),
    "sft": make_record(name="llama3_8b_sft_config", mode="sft", tp=2, cp=1, seq=4096, gbs=128),
    "peft": make_record(name="llama3_8b_peft_config", mode="peft", peft="lora", cp=1, seq=4096, gbs=32),
}


@pytest.mark.slow  # torchrun's own parser (torch)
@pytest.mark.parametrize(("source", "version", "spec"), LAUNCHERS, ids=IDS)
@pytest.mark.parametrize("mode", ["pretrain", "sft", "peft"])
@pytest.mark.parametrize("gpus", [8, 16])
def test_commands_parse_with_the_versions_own_flags(source, version, spec, mode, gpus):
    record = RECIPES[mode].model_copy(update={"version": version})
    cluster = Cluster(num_gpus=gpus)
    result = resize(record, LLAMA3_8B, cluster, None, None, version=version, kb=knowledge_base())
    assert result.plan is not None
    dataset = choose_dataset(version, mode, spec)
    cmds = commands(version, record, result.plan, cluster, dataset, spec, result.overrides)
    overrides = {item.key: item for item in result.overrides}

    def check_run_recipe(parsed, trailing):
        assert parsed.recipe == record.name
        assert getattr(parsed, "dataset", None) == dataset
        for key, item in overrides.items():
            expected = ENV.get(str(item.value), render_value(item.value))
            assert trailing[key] == expected
        if getattr(parsed, "mode", None) is not None:
            assert parsed.mode in (spec.modes or [])
        if mode == "peft":
            assert trailing["checkpoint.pretrained_checkpoint"] == "/ckpt/base"

    if gpus <= cluster.gpus_per_node:
        torchrun, parsed, trailing = parse_torchrun(cmds.torchrun, spec)
        assert (torchrun.nproc_per_node, torchrun.nnodes) == (str(gpus), "1:1")
        check_run_recipe(parsed, trailing)
    else:
        assert cmds.torchrun is None
    torchrun, parsed, trailing = parse_torchrun(cmds.multinode, spec)
    nodes = -(-gpus // 8)
    assert (torchrun.nnodes, torchrun.nproc_per_node, torchrun.node_rank) == (
        str(nodes),
        str(gpus // nodes),
        1,
    )
    assert torchrun.rdzv_backend == "c10d" and torchrun.rdzv_endpoint == "10.0.0.1:29500"
    check_run_recipe(parsed, trailing)
    script = cmds.slurm
    assert script.startswith("#!/bin/bash\n")
    assert f"#SBATCH --nodes={nodes}\n" in script and "#SBATCH --ntasks-per-node=8\n" in script
    assert "#SBATCH --gpus-per-node=8\n" in script and "torch.distributed.run" not in script
    joined = script.replace("\\\n", " ")
    srun = next(line for line in joined.splitlines() if line.startswith("srun "))
    tokens = expand(srun)
    assert "--container-image=$CONTAINER_IMAGE" in " ".join(shlex.split(srun))
    start = tokens.index("python")
    assert tokens[start + 1] == spec.script
    check_run_recipe(*parse_run_recipe(spec, tokens[start + 2 :]))


@pytest.mark.parametrize(("source", "version", "spec"), LAUNCHERS, ids=IDS)
def test_dataset_choice_never_pairs_pretrain_only_presets_with_finetuning(source, version, spec):
    pretrain_only = {preset.name for preset in spec.dataset_presets if set(preset.modes) == {"pretrain"}}
    for mode in ("sft", "peft"):
        for vlm in (False, True):
            choice = choose_dataset(version, mode, spec, vlm=vlm)
            assert choice not in pretrain_only
    if not any("--dataset" in flag.names for flag in spec.flags):
        assert choose_dataset(version, "pretrain", spec) is None


@pytest.mark.parametrize(
    ("version", "mode", "vlm", "expected"),
    [
        ("0.3.1", "pretrain", False, None),
        ("0.5.1", "pretrain", False, "llm-pretrain-mock"),
        ("0.5.1", "sft", False, "llm-finetune"),
        ("0.5.1", "peft", True, "vlm-hf"),
        ("0.6.0", "pretrain", False, "mock"),
        ("0.6.0", "sft", False, "squad"),
        ("0.6.0", "peft", False, "squad"),
        ("0.6.0", "sft", True, "cord-v2"),
        ("main", "sft", False, "squad"),
    ],
)
def test_choose_dataset_per_version(version, mode, vlm, expected):
    spec = catalog_launcher(version) or HAND_LAUNCHERS[version]
    assert choose_dataset(version, mode, spec, vlm=vlm) == expected


def test_031_has_no_dataset_flag():
    record = make_record(version="0.3.1")
    with pytest.raises(UserError, match="no --dataset"):
        commands("0.3.1", record, None, Cluster(num_gpus=8), "mock", HAND_LAUNCHERS["0.3.1"])


def test_060_mode_flag_uses_public_names():
    record = RECIPES["peft"]
    cmds = commands("0.6.0", record, None, Cluster(num_gpus=1), "squad", HAND_LAUNCHERS["0.6.0"], {})
    assert " --mode lora " in cmds.torchrun
    sft = commands("0.6.0", RECIPES["sft"], None, Cluster(num_gpus=2), "squad", HAND_LAUNCHERS["0.6.0"], {})
    assert " --mode sft " in sft.torchrun


def test_031_mode_only_when_the_name_does_not_tell():
    odd = make_record(name="vanilla_gpt_config", version="0.3.1")
    cmds = commands("0.3.1", odd, None, Cluster(num_gpus=8), None, HAND_LAUNCHERS["0.3.1"], {})
    assert "--mode pretrain" in cmds.torchrun
    named = commands(
        "0.3.1", make_record(version="0.3.1"), None, Cluster(num_gpus=8), None, HAND_LAUNCHERS["0.3.1"], {}
    )
    assert "--mode" not in named.torchrun


def test_single_node_command_shape():
    record = make_record()
    overrides = [
        Override(key="model.tensor_model_parallel_size", value=2, reason="r", change_class="execution")
    ]
    cmds = commands("0.6.0", record, None, Cluster(num_gpus=8), "mock", HAND_LAUNCHERS["0.6.0"], overrides)
    assert cmds.torchrun == (
        "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py "
        "--recipe llama3_8b_pretrain_config --mode pretrain --dataset mock "
        "'model.tensor_model_parallel_size=2'"
    )


def test_render_override_quoting():
    assert render_override("model.hierarchical_context_parallel_sizes", [2, 2]) == (
        "'model.hierarchical_context_parallel_sizes=[2,2]'"
    )
    assert render_override("model.sequence_parallel", True) == "'model.sequence_parallel=true'"
    assert render_override("model.virtual_pipeline_model_parallel_size", None) == (
        "'model.virtual_pipeline_model_parallel_size=null'"
    )
    assert render_override("checkpoint.pretrained_checkpoint", "${PRETRAINED_CHECKPOINT}") == (
        '"checkpoint.pretrained_checkpoint=${PRETRAINED_CHECKPOINT}"'
    )


def test_uneven_multinode_split_is_explained():
    cmds = commands("0.6.0", make_record(), None, Cluster(num_gpus=13), None, HAND_LAUNCHERS["0.6.0"], {})
    assert cmds.torchrun is None and cmds.multinode is None and cmds.slurm is None
    assert cmds.notes


@pytest.mark.parametrize(("source", "version", "spec"), LAUNCHERS, ids=IDS)
def test_benchmark_command_parses_with_the_performance_launcher(source, version, spec):
    if spec.benchmark is None:
        pytest.skip("no performance launcher in this table")
    record = make_record(
        name="qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config",
        family="qwen3",
        kind="benchmark",
        version=version,
        hf_model_id="Qwen/Qwen3-30B-A3B",
        ep=16,
        cp=1,
        seq=4096,
        gbs=512,
        precision="bf16",
        encoded_gpus=16,
    )
    cluster = Cluster(num_gpus=16)
    result = resize(record, QWEN3_30B_A3B, cluster, None, None, version=version, kb=knowledge_base())
    cmds = commands(version, record, result.plan, cluster, None, spec, result.overrides)
    tokens = shlex.split(
        cmds.benchmark.replace("$SLURM_ACCOUNT", "acct")
        .replace("$SLURM_PARTITION", "batch")
        .replace("$CONTAINER_IMAGE", "nvcr.io/nvidia/nemo:dev")
    )
    start = tokens.index(spec.benchmark.script)
    parsed, unknown = parser_from_flags(spec.benchmark.flags).parse_known_args(tokens[start + 1 :])
    assert unknown == []
    if hasattr(parsed, "model_recipe_name"):
        assert parsed.model_recipe_name == "qwen3_30b_a3b"
        assert parsed.num_gpus == 16 and parsed.gpu == "h100"
    library = commands(version, make_record(version=version), None, cluster, None, spec, {})
    assert library.benchmark is None


@pytest.mark.parametrize(
    ("version", "recipe", "step"),
    [
        ("0.5.1", "qwen3_vl_8b_sft_config", "qwen3_vl_step"),  # 0.5.1 would run it with gpt_step
        ("0.5.1", "wan_1_3b_pretrain_config", "wan_step"),
        ("0.5.1", "llama3_8b_pretrain_config", None),  # text recipes keep the default
        ("0.6.0", "qwen3_vl_8b_sft_config", None),  # 0.6.0 infers the step from the recipe name
    ],
)
def test_non_text_recipes_name_their_forward_step_where_the_launcher_does_not_infer_it(version, recipe, step):
    from assistant.catalog import load_catalog

    catalog = load_catalog(version)
    record = next(r for r in catalog.recipes if r.name == recipe)
    cmd = commands(version, record, None, Cluster(num_gpus=8, gpu_type="h100"), None, catalog.launcher)
    args = shlex.split(cmd.torchrun)
    if step is None:
        assert "--step_func" not in args
    else:
        assert args[args.index("--step_func") + 1] == step
        flag = next(f for f in catalog.launcher.flags if "--step_func" in f.names)
        assert step in flag.choices


def test_forward_step_table_is_read_from_source_without_running_it():
    from ingest.forward_steps import extract_forward_steps

    source = (
        "import torch\n"
        'RECIPE_FORWARD_STEP_PREFIXES = (("qwen3_vl_", "qwen3_vl_step"), ("wan_", "wan_step"))\n'
    )
    assert extract_forward_steps(source) == [("qwen3_vl_", "qwen3_vl_step"), ("wan_", "wan_step")]
    with pytest.raises(ValueError):
        extract_forward_steps("X = 1\n")
