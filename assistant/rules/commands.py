"""commands(): exact launch commands for one version's launcher, built only from its extracted flag table.

run_recipe.py takes named flags and then trailing KEY=VALUE overrides (parse_known_args), so every
command is `<launcher prefix> <script> --recipe NAME [--mode M] [--dataset D] 'key=value' ...`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import Any

from pydantic import Field

from assistant.errors import UserError
from assistant.records import Cluster, LauncherFlag, LauncherSpec, Override, Plan, RecipeRecord, Record
from assistant.rules.findings import render_value
from assistant.rules.versions import normalize_version, version_key

RDZV_PORT = 29500
_PRETRAIN_PREFERENCE = ("mock", "llm-pretrain-mock")
_FINETUNE_PREFERENCE = ("squad", "llm-finetune")
_VLM_PREFERENCE = ("cord-v2", "vlm-hf", "medpix", "local-vlm", "vlm-preloaded", "vlm-energon")


class Commands(Record):
    torchrun: str | None = None  # single node; None when the plan needs more than one node
    multinode: str | None = None
    slurm: str | None = None
    benchmark: str | None = None
    dataset: str | None = None
    notes: list[str] = Field(default_factory=list)


def find_flag(flags: Iterable[LauncherFlag], name: str) -> LauncherFlag | None:
    return next((flag for flag in flags if name in flag.names), None)


def _is_pretrain_only(name: str, modes: list[str]) -> bool:
    if modes:
        return set(modes) == {"pretrain"}
    return "pretrain" in name or name in {"mock", "megatron-indexed"}


def preset_serves(name: str, modes: list[str], train_mode: str) -> bool:
    """Whether a dataset preset may be used for a training loop ("pretrain" or "finetune")."""
    if modes:
        return any((mode == "pretrain") == (train_mode == "pretrain") for mode in modes)
    pretrain_only = _is_pretrain_only(name, modes)
    return pretrain_only if train_mode == "pretrain" else not pretrain_only


def choose_dataset(
    version: str, mode: str | None, launcher: LauncherSpec, *, vlm: bool = False
) -> str | None:
    """The dataset preset for this version and mode; never a pretrain-only preset for SFT/PEFT."""
    normalize_version(version)
    flag = find_flag(launcher.flags, "--dataset")
    if flag is None:
        return None
    modes = {preset.name: preset.modes for preset in launcher.dataset_presets}
    names = list(flag.choices or modes)
    train_mode = "pretrain" if mode in (None, "pretrain") else "finetune"
    usable = [name for name in names if preset_serves(name, modes.get(name, []), train_mode)]
    preference: tuple[str, ...]
    if train_mode == "pretrain":
        preference = _PRETRAIN_PREFERENCE
    else:
        preference = _VLM_PREFERENCE + _FINETUNE_PREFERENCE if vlm else _FINETUNE_PREFERENCE
    for name in preference:
        if name in usable:
            return name
    return usable[0] if usable else None


def render_override(key: str, value: Any) -> str:
    """Shell-quoted 'key=value'; values holding ${VAR} are double-quoted so the shell expands them."""
    text = f"{key}={render_value(value)}"
    if "${" in text:
        return '"' + text.replace('"', '\\"') + '"'
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _infer_mode_from_name(name: str) -> str | None:
    """What 0.3.1/0.5.1 run_recipe.py infers from the recipe name when --mode is omitted."""
    lowered = name.lower()
    pretrain = "pretrain" in lowered
    finetune = any(word in lowered for word in ("finetune", "sft", "peft"))
    if pretrain ^ finetune:
        return "pretrain" if pretrain else "finetune"
    return None


def _mode_args(launcher: LauncherSpec, record: RecipeRecord, mode: str | None, peft: str | None) -> list[str]:
    flag = find_flag(launcher.flags, "--mode")
    if flag is None or mode is None:
        return []
    choices = flag.choices or []
    if "sft" in choices:  # 0.6.0+: pretrain / sft / lora / dora
        public = (
            mode if mode in ("pretrain", "sft") else ("dora" if (peft or "").lower() == "dora" else "lora")
        )
        return ["--mode", public] if public in choices else []
    if _infer_mode_from_name(record.name) is None and choices:  # 0.3.1: pretrain / finetune
        loop = "pretrain" if mode == "pretrain" else "finetune"
        return ["--mode", loop] if loop in choices else []
    return []


def _call_args(record: RecipeRecord, mode: str | None) -> list[str]:
    """The flags that make run_recipe.py call the recipe the way `mode` needs (<= 0.5.1 passes
    --peft_scheme as peft=, default None: a LoRA run of a finetune recipe needs `--peft_scheme lora`)."""
    variant = next((v for v in record.variants if v.mode == mode), None)
    return [shlex.quote(arg) for arg in variant.launcher_args] if variant else []


def forward_step(recipe_name: str, table: Iterable[tuple[str, str]]) -> str | None:
    """The step of the first (recipe-name prefix, forward step) pair whose prefix the name starts with, as
    Bridge's RECIPE_FORWARD_STEP_PREFIXES is read; None for a text model."""
    name = recipe_name.lower()
    return next((step for prefix, step in table if name.startswith(prefix)), None)


def _step_args(launcher: LauncherSpec, record: RecipeRecord) -> list[str]:
    """A VLM, diffusion, audio or omni recipe names its forward step where the launcher would default to the
    text step (0.3.x-0.5.x run_recipe.py); 0.6.0+ infers it from the recipe name."""
    step = forward_step(record.name, launcher.forward_steps)
    return ["--step_func", step] if step else []


def _normalise_overrides(overrides: Iterable[Override] | dict[str, Any] | None) -> list[tuple[str, Any]]:
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return list(overrides.items())
    return [(item.key, item.value) for item in overrides]


def run_recipe_args(
    launcher: LauncherSpec,
    record: RecipeRecord,
    dataset: str | None,
    overrides: Iterable[Override] | dict[str, Any] | None,
    mode: str | None = None,
) -> list[str]:
    """Already shell-quoted arguments after the script path."""
    if find_flag(launcher.flags, "--recipe") is None:
        raise UserError("this version's run_recipe.py has no --recipe option; cannot build a command")
    args = ["--recipe", shlex.quote(record.name)]
    args += _mode_args(launcher, record, mode or record.mode, record.peft)
    args += _call_args(record, mode or record.mode)
    args += _step_args(launcher, record)
    if dataset is not None:
        flag = find_flag(launcher.flags, "--dataset")
        if flag is None:
            raise UserError(f"run_recipe.py in {record.version} has no --dataset option; drop --dataset")
        if flag.choices and dataset not in flag.choices:
            raise UserError(f"dataset preset {dataset!r} is not one of: {', '.join(flag.choices)}")
        args += ["--dataset", shlex.quote(dataset)]
    args += [render_override(key, value) for key, value in _normalise_overrides(overrides)]
    return args


def _long_name(flag: LauncherFlag) -> str:
    return max(flag.names, key=lambda name: (name.startswith("--"), len(name)))


def _choice(flag: LauncherFlag, value: str | None) -> str | None:
    """`value` as spelled in the flag's choices ('fp8cs' -> 'fp8_cs'), or None if it is not offered."""
    if value is None:
        return None
    if not flag.choices:
        return value
    squashed = value.replace("_", "").lower()
    return next((choice for choice in flag.choices if choice.replace("_", "").lower() == squashed), None)


def _benchmark_command(
    record: RecipeRecord, cluster: Cluster, launcher: LauncherSpec, mode: str | None
) -> str | None:
    """setup_experiment.py (the performance launcher) for a benchmark recipe, from its extracted flags."""
    bench = launcher.benchmark
    if bench is None or record.kind != "benchmark":
        return None
    prefix = "uv run python" if version_key(record.version) >= (0, 6) else "python"
    parts = [f"bash {bench.script}" if bench.script.endswith(".sh") else f"{prefix} {bench.script}"]
    stem = re.split(r"_(pretrain|sft|peft|finetune|lora|dora)(_|$)", record.name)[0]
    wanted = [
        ("--recipe", record.name),
        ("--model_family_name", record.family),
        ("--model_recipe_name", stem),
        ("--task", mode),
        ("--gpu", cluster.gpu_type),
        ("--compute_dtype", record.precision),
        ("--num_gpus", str(cluster.num_gpus)),
        ("--gpus_per_node", str(cluster.gpus_per_node)),
    ]
    has_recipe = find_flag(bench.flags, "--recipe") is not None
    for name, value in wanted:
        flag = find_flag(bench.flags, name)
        if flag is None or (has_recipe and name in ("--model_family_name", "--model_recipe_name")):
            continue
        if name == "--task" and flag.choices and value not in flag.choices:
            value = next((choice for choice in ("lora", "peft") if choice in flag.choices), None)
        chosen = _choice(flag, value)
        if chosen is not None:
            parts.append(f"{_long_name(flag)} {shlex.quote(chosen)}")
    for name, variable in (
        ("--account", "SLURM_ACCOUNT"),
        ("--partition", "SLURM_PARTITION"),
        ("--container_image", "CONTAINER_IMAGE"),
    ):
        flag = find_flag(bench.flags, name)
        if flag is not None:
            parts.append(f'{_long_name(flag)} "${variable}"')
    return " ".join(parts)


def _slurm_script(
    record: RecipeRecord, cluster: Cluster, nodes: int, per_node: int, script: str, args: list[str]
) -> str:
    needs_checkpoint = any("PRETRAINED_CHECKPOINT" in arg for arg in args)
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={record.name[:60]}",
        f"#SBATCH --nodes={nodes}",
        f"#SBATCH --ntasks-per-node={per_node}",
        f"#SBATCH --gpus-per-node={per_node}",
        "#SBATCH --exclusive",
        "#SBATCH --time=04:00:00",
        "#SBATCH --output=%x-%j.out",
        "# Add --account/--partition lines for your cluster. srun-native launch: one task per GPU;",
        "# Megatron-Bridge derives RANK, WORLD_SIZE, LOCAL_RANK and MASTER_ADDR/PORT from the SLURM_* vari"
        "ables.",
        "set -euo pipefail",
        ': "${CONTAINER_IMAGE:?set CONTAINER_IMAGE to the NeMo/Megatron-Bridge container image}"',
        ': "${CONTAINER_MOUNTS:?set CONTAINER_MOUNTS to host:container pairs for repo, data, checkpoints}"',
        ': "${MBRIDGE_DIR:?set MBRIDGE_DIR to the Megatron-Bridge checkout as seen inside the container}"',
    ]
    if needs_checkpoint:
        lines.append(
            ': "${PRETRAINED_CHECKPOINT:?set PRETRAINED_CHECKPOINT to a local checkpoint directory}"'
        )
    lines += [
        'export HF_HOME="${HF_HOME:-$MBRIDGE_DIR/.cache/huggingface}"',
        'export NEMO_HOME="${NEMO_HOME:-$MBRIDGE_DIR/.cache/nemo}"',
        'export UV_CACHE_DIR="${UV_CACHE_DIR:-$MBRIDGE_DIR/.cache/uv}"',
        "",
        'srun --container-image="$CONTAINER_IMAGE" --container-mounts="$CONTAINER_MOUNTS" \\',
        '    --container-workdir="$MBRIDGE_DIR" --export=ALL \\',
        f"    python {script} " + " ".join(args),
    ]
    return "\n".join(lines) + "\n"


def commands(
    version: str,
    record: RecipeRecord,
    plan: Plan | None,
    cluster: Cluster,
    dataset: str | None,
    launcher: LauncherSpec,
    overrides: Iterable[Override] | dict[str, Any] | None = None,
    *,
    mode: str | None = None,
) -> Commands:
    """torchrun / multi-node torchrun / sbatch / benchmark commands for this version's launcher."""
    normalize_version(version)
    if launcher.script is None:
        raise UserError(f"Megatron-Bridge {version} has no scripts/training/run_recipe.py launcher")
    num_gpus = plan.num_gpus if plan is not None else cluster.num_gpus
    nodes = max(1, -(-num_gpus // cluster.gpus_per_node))
    notes: list[str] = []
    args = run_recipe_args(launcher, record, dataset, overrides, mode)
    script = launcher.script
    prefix = "uv run python -m torch.distributed.run"
    single = None
    if nodes == 1:
        single = " ".join([prefix, f"--nproc_per_node={num_gpus}", script, *args])
    multinode = slurm = None
    if num_gpus % nodes == 0:
        per_node = num_gpus // nodes
        multinode = " ".join(
            [
                prefix,
                f"--nnodes={nodes}",
                f"--nproc_per_node={per_node}",
                "--node_rank=$NODE_RANK",
                "--rdzv_backend=c10d",
                f"--rdzv_endpoint=$MASTER_ADDR:{RDZV_PORT}",
                script,
                *args,
            ]
        )
        slurm = _slurm_script(record, cluster, nodes, per_node, script, args)
    else:
        notes.append(
            f"{num_gpus} GPUs do not split evenly over {nodes} nodes of {cluster.gpus_per_node}; "
            "use a GPU count that fills whole nodes for multi-node launches."
        )
    if nodes > 1:
        notes.append(
            "Run the multinode command on every node with NODE_RANK=0..N-1 and MASTER_ADDR of node 0."
        )
    return Commands(
        torchrun=single,
        multinode=multinode,
        slurm=slurm,
        benchmark=_benchmark_command(record, cluster, launcher, mode or record.mode),
        dataset=dataset,
        notes=notes,
    )
