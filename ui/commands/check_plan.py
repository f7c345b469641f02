"""`autorecipe check` / `autorecipe plan`: validate a recipe on a cluster, or resize it and print commands."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console

from assistant import catalog
from assistant.bounds import check_gpus, check_seq_len
from assistant.kb import KnowledgeBase, knowledge_base
from assistant.models import recipe_arch
from assistant.override_keys import check_override_keys
from assistant.planning.fit import estimate_fit
from assistant.planning.resize import resize
from assistant.records import Cluster, Finding, ModelArch, Plan, RecipeRecord
from assistant.rules.commands import choose_dataset, commands
from assistant.rules.config import EffectiveConfig, build_config, parse_overrides
from assistant.rules.validate import has_errors, validate
from assistant.version_resolve import VersionChoice, selected_choice
from ui.tables import Column, print_rows

FINDING_COLUMNS = (
    Column("severity", identifier=True),
    Column("id", identifier=True),
    Column("message"),
    Column("upstream error"),
    Column("fix", identifier=True),
)

CONFIG_FIELDS = (
    "recipe",
    "version",
    "kind",
    "mode",
    "hf_model_id",
    "tp",
    "pp",
    "vp",
    "cp",
    "ep",
    "etp",
    "sp",
    "seq_length",
    "global_batch_size",
    "micro_batch_size",
    "precision",
    "peft",
    "recompute_granularity",
    "cuda_graph_impl",
    "cuda_graph_scope",
    "use_te_rng_tracker",
    "fsdp",
    "packed_sequence",
    "calculate_per_token_loss",
    "average_in_collective",
    "pretrained_checkpoint",
    "dataset",
    "user_overrides",
)


def _inputs(
    recipe: str,
    version: str | None,
    gpus: int,
    gpu_type: str,
    gpus_per_node: int,
    seq_len: int | None,
    kind: str | None,
    kb: KnowledgeBase,
):
    """Every bound on the command's numbers is checked here, once, before any work."""
    check_gpus(gpus, gpus_per_node)
    check_seq_len(seq_len)
    kb.gpu_spec(gpu_type)
    choice = selected_choice(version, kb)
    version = choice.version
    record: RecipeRecord = catalog.resolve_recipe(recipe, version=version, kind=kind, kb=kb)
    launcher = catalog.load_catalog(version, kb).launcher
    cluster = Cluster(num_gpus=gpus, gpu_type=gpu_type.lower(), gpus_per_node=gpus_per_node)
    record = catalog.on_gpu(record, cluster.gpu_type)
    return choice, record, launcher, cluster, recipe_arch(record, kb)


def _user_overrides(items: list[str] | None, seq_len: int | None) -> dict[str, Any]:
    overrides = parse_overrides(list(items or []))
    if seq_len is not None:
        overrides["dataset.seq_length"] = seq_len
        overrides["model.seq_length"] = seq_len
    return overrides


def _arch_note(record: RecipeRecord, arch: ModelArch | None) -> list[Finding]:
    if arch is not None:
        return []
    model = record.hf_model_id or "this recipe's model"
    return [
        Finding(
            id="arch-unknown",
            severity="info",
            message=f"Architecture of {model} is not bundled; head, layer and expert checks were skipped.",
            message_zh=f"未收录 {model} 的模型结构，已跳过注意力头、层数和专家数的检查。",
        )
    ]


def config_json(config: EffectiveConfig, cluster: Cluster) -> dict[str, Any]:
    data = config.to_json()
    out = {name: data[name] for name in CONFIG_FIELDS}
    size = config.tp * config.pp * config.cp
    out.update(
        num_gpus=cluster.num_gpus,
        gpu_type=cluster.gpu_type,
        gpus_per_node=cluster.gpus_per_node,
        dp=cluster.num_gpus // size if cluster.num_gpus % size == 0 else None,
    )
    return out


def _findings_table(console: Console, findings: list[Finding]) -> None:
    colours = {"error": "red", "warning": "yellow", "info": "cyan"}
    rows = [(f"{item.severity}", item.id, item.message, item.upstream_error, item.fix) for item in findings]
    print_rows(console, "Findings", FINDING_COLUMNS, rows)
    if findings:
        worst = next((s for s in colours if any(f.severity == s for f in findings)), "info")
        console.print(f"[{colours[worst]}]{sum(f.severity == worst for f in findings)} {worst}(s)[/]")


def run_check(
    recipe, version, gpus, gpu_type, gpus_per_node, seq_len, dataset, overrides, kind=None
) -> dict[str, Any]:
    kb = knowledge_base()  # the command's one knowledge base, from the settings
    choice, record, launcher, cluster, arch = _inputs(
        recipe, version, gpus, gpu_type, gpus_per_node, seq_len, kind, kb
    )
    version = choice.version
    user = _user_overrides(overrides, seq_len)
    check_override_keys(user, catalog.load_catalog(version, kb))
    config = build_config(record, user, version=version, dataset=dataset)
    findings = validate(
        config, arch, cluster, version, launcher, gpu=kb.gpu_spec(cluster.gpu_type)
    ) + _arch_note(record, arch)
    out = {
        "config": config_json(config, cluster),
        "findings": [item.to_json() for item in findings],
        "valid": not has_errors(findings),
        "fit": _fit(record, arch, config, cluster, kb),
        "recipe_resolution": catalog.resolution_note(recipe, record, kind, kb),
    }
    return _with_version_note(out, choice)


def _with_version_note(out: dict[str, Any], choice: VersionChoice) -> dict[str, Any]:
    """A --version answered from another bundled release says so, under the key `ask --json` uses."""
    if choice.note_en:
        out["version_note"] = choice.note_en
    return out


def _fit(
    record: RecipeRecord, arch: ModelArch | None, config: EffectiveConfig, cluster: Cluster, kb: KnowledgeBase
):
    """The memory verdict `plan` gives, for the layout as checked; None when the layout does not divide."""
    size = config.tp * config.pp * config.cp
    mbs, gbs = config.micro_batch_size, config.global_batch_size
    if cluster.num_gpus % size or not mbs or not gbs or gbs % (mbs * (cluster.num_gpus // size)):
        return None
    plan = Plan.sized(num_gpus=cluster.num_gpus, tp=config.tp, pp=config.pp, cp=config.cp, mbs=mbs, gbs=gbs,
                      vp=config.vp, ep=config.ep, etp=config.etp, sp=bool(config.sp))  # fmt: skip
    return estimate_fit(record, arch, plan, cluster, config, kb=kb).to_json()


def run_plan(
    recipe, version, gpus, gpu_type, gpus_per_node, seq_len, dataset, overrides, search, kind=None
) -> dict[str, Any]:
    kb = knowledge_base()  # the command's one knowledge base, from the settings
    choice, record, launcher, cluster, arch = _inputs(
        recipe, version, gpus, gpu_type, gpus_per_node, seq_len, kind, kb
    )
    version = choice.version
    user = _user_overrides(overrides, None)
    check_override_keys(user, catalog.load_catalog(version, kb))
    result = resize(record, arch, cluster, None, seq_len, user_overrides=user, version=version, kb=kb)
    chosen = dataset or choose_dataset(version, record.mode, launcher, vlm=bool(arch and arch.is_vlm))
    findings = list(result.findings)
    if result.config is not None and dataset is not None:
        dataset_config = result.config.model_copy(update={"dataset": dataset})
        findings += [
            f
            for f in validate(
                dataset_config,
                arch,
                cluster,
                version,
                launcher,
                gpu=kb.gpu_spec(cluster.gpu_type),
            )
            if f.id.startswith(("dataset", "mode-dataset", "vlm-no-images"))
        ]
    findings += _arch_note(record, arch)
    cmds = None
    if result.plan is not None:
        cmds = commands(version, record, result.plan, cluster, chosen, launcher, result.overrides)
    out: dict[str, Any] = {
        "plan": result.plan.to_json() if result.plan else None,
        "overrides": [item.to_json() for item in result.overrides],
        "findings": [item.to_json() for item in findings],
        "commands": {
            "torchrun": cmds.torchrun if cmds else None,
            "multinode": cmds.multinode if cmds else None,
            "slurm": cmds.slurm if cmds else None,
            "benchmark": cmds.benchmark if cmds else None,
            "dataset": chosen,
            "notes": cmds.notes if cmds else [],
        },
        "fit": result.fit.to_json() if result.fit else None,
        "recipe_resolution": catalog.resolution_note(recipe, record, kind, kb),
    }
    if not record.reachable:
        out["commands"]["notes"].append(f"not launchable: {record.unreachable_reason}")
        for key in ("torchrun", "multinode", "slurm", "benchmark"):
            out["commands"][key] = None
    if search:
        out["search"] = _search(arch, cluster, record, result, seq_len, kb)
    _with_version_note(out, choice)
    return out


def _search(arch, cluster, record, result, seq_len, kb: KnowledgeBase) -> dict[str, Any]:
    if arch is None:
        return {
            "available": False,
            "message": "layout search needs the model architecture, which is not bundled",
        }
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.planning.search import search_layouts

    config = result.config
    layouts = search_layouts(
        arch,
        cluster,
        seq_length=seq_len or (config.seq_length if config else None) or 4096,
        global_batch_size=(result.plan.gbs if result.plan else None) or record.global_batch_size or 128,
        mode=record.mode or "pretrain",
        precision=(config.precision if config else None) or record.precision or "bf16",
        top_k=5,
        kb=kb,
    )
    return {"available": True, "layouts": [layout.to_json() for layout in layouts]}


def _print_check(data: dict[str, Any]) -> None:
    console = Console()
    config = data["config"]
    title = f"{config['recipe']} ({config['version']}) on {config['num_gpus']} × {config['gpu_type']}"
    keys = ("mode", "tp", "pp", "vp", "cp", "ep", "etp", "sp", "dp", "seq_length", "global_batch_size",
            "micro_batch_size", "dataset")  # fmt: skip
    columns = (Column("setting", identifier=True), Column("value", identifier=True))
    print_rows(console, title, columns, [(key, config.get(key)) for key in keys])
    _findings_table(console, [Finding.model_validate(item) for item in data["findings"]])
    fit = data.get("fit")
    if fit:
        console.print(f"memory: {_fit_line(fit)}")
    console.print("[green]valid[/]" if data["valid"] else "[red]not valid: fix the errors above[/]")


def _fit_line(fit: dict[str, Any]) -> str:
    """The fit verdict in one line, in GB (10^9 bytes, the unit every front end uses)."""
    if fit.get("peak_bytes") and fit.get("usable_bytes"):
        tight = " (tight: inside the estimator's error)" if fit.get("tight") else ""
        peak, usable = fit["peak_bytes"] / 1e9, fit["usable_bytes"] / 1e9
        return f"{fit['status']}{tight}: peak ≈ {peak:.1f} GB of {usable:.1f} GB usable"
    return f"{fit['status']}" + (f": {fit['note']}" if fit.get("note") else "")


def _print_plan(data: dict[str, Any]) -> None:
    console = Console()
    plan = data["plan"]
    if plan:
        print_rows(console, "Plan", [Column(key, identifier=True) for key in plan], [list(plan.values())])
    columns = (
        Column("key", identifier=True),
        Column("value", identifier=True),
        Column("class", identifier=True),
        Column("reason"),
    )
    rows = [(i["key"], json.dumps(i["value"]), i["class"], i["reason"]) for i in data["overrides"]]
    if rows:
        print_rows(console, "Overrides", columns, rows)
    _findings_table(console, [Finding.model_validate(item) for item in data["findings"]])
    if data.get("fit"):
        console.print(f"memory: {_fit_line(data['fit'])}")
    for name in ("torchrun", "multinode", "benchmark", "slurm"):
        command = data["commands"].get(name)
        if command:
            console.rule(name)
            console.print(command, markup=False, highlight=False, soft_wrap=True)
    for note in data["commands"].get("notes", []):
        console.print(f"note: {note}")
    if "search" in data:
        console.rule("search")
        console.print_json(json.dumps(data["search"]))


KIND_HELP = "library or benchmark, when both have this name (or write library:NAME / benchmark:NAME)."


def _say_resolution(data: dict[str, Any]) -> None:
    """Say on stderr which release answers a --version that is not bundled itself, and, when two records
    share the name, which one was used and how to get the other."""
    if data.get("version_note"):
        typer.secho(f"note: {data['version_note']}", fg=typer.colors.YELLOW, err=True)
    resolution = data["recipe_resolution"]
    if resolution["ambiguous"]:
        typer.secho(f"note: {resolution['note']}", fg=typer.colors.YELLOW, err=True)


def register(app: typer.Typer) -> None:
    """Add `check` and `plan` to the root app."""

    @app.command("check")
    def check_command(
        recipe: str = typer.Option(
            ..., "--recipe", help="Recipe function name, e.g. llama3_8b_pretrain_config."
        ),
        gpus: int = typer.Option(..., "--gpus", help="Total number of GPUs."),
        version: str | None = typer.Option(
            None, "--version", help="Megatron-Bridge version (0.3.1, 0.5.1, ...)."
        ),
        gpu_type: str = typer.Option("h100", "--gpu-type", help="GPU type, e.g. h100, b200, gb200."),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node", help="GPUs per node (8; 4 on GB200/GB300)."),
        seq_len: int | None = typer.Option(None, "--seq-len", help="Sequence length to check."),
        dataset: str | None = typer.Option(None, "--dataset", help="run_recipe.py dataset preset."),
        kind: str | None = typer.Option(None, "--kind", help=KIND_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
        overrides: list[str] | None = typer.Argument(None, help="KEY=VALUE config overrides."),
    ) -> None:
        """Check a recipe plus overrides against Megatron's rules before launching it."""
        data = run_check(recipe, version, gpus, gpu_type, gpus_per_node, seq_len, dataset, overrides, kind)
        _say_resolution(data)
        if as_json:
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            _print_check(data)
        if not data["valid"]:
            raise typer.Exit(1)

    @app.command("plan")
    def plan_command(
        recipe: str = typer.Option(..., "--recipe", help="Recipe function name."),
        gpus: int = typer.Option(..., "--gpus", help="Total number of GPUs."),
        version: str | None = typer.Option(
            None, "--version", help="Megatron-Bridge version (0.3.1, 0.5.1, ...)."
        ),
        gpu_type: str = typer.Option("h100", "--gpu-type", help="GPU type, e.g. h100, b200, gb200."),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node", help="GPUs per node (8; 4 on GB200/GB300)."),
        seq_len: int | None = typer.Option(None, "--seq-len", help="Sequence length to plan for."),
        dataset: str | None = typer.Option(None, "--dataset", help="run_recipe.py dataset preset."),
        search: bool = typer.Option(False, "--search", help="Also rank layouts with the estimator."),
        kind: str | None = typer.Option(None, "--kind", help=KIND_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
        overrides: list[str] | None = typer.Argument(None, help="KEY=VALUE overrides to keep fixed."),
    ) -> None:
        """Resize a recipe to your GPUs and print the overrides and launch commands."""
        data = run_plan(
            recipe, version, gpus, gpu_type, gpus_per_node, seq_len, dataset, overrides, search, kind
        )
        _say_resolution(data)
        if as_json:
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            _print_plan(data)
        if data["plan"] is None:
            raise typer.Exit(1)
