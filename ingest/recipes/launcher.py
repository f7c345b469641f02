"""Read the launchers of one Megatron-Bridge version statically.

scripts/training/run_recipe.py: the argparse flags (every `add_argument` call, found by running
the parser-building functions abstractly), the `--mode` choices, the dataset presets and which
modes each preset accepts. The preset/mode relation is computed by evaluating the version's own
helpers (`infer_mode_from_dataset` up to v0.5.1, `dataset_train_mode` + `_train_mode` from
v0.6.0) on each preset, never by a hand-written table. A preset's `modes` use the `--mode` choices
when the launcher has that flag (v0.6.0+: pretrain/sft/lora/dora); before, there is no `--mode`,
so they use recipe modes (pretrain, or sft/peft for a finetune dataset).
scripts/performance/setup_experiment.py: the benchmark launcher's flags (`parse_cli_args`).
scripts/training/setup_experiment.py (v0.6.0+): the flags of the Slurm wrapper that train.sh runs.
"""

from __future__ import annotations

import ast
from typing import Any

from assistant.records import BenchmarkLauncher, DatasetPreset, LauncherFlag, LauncherSpec
from ingest.recipes.interpreter import BudgetExceeded, Interpreter, RaiseSignal, is_plain, paused_gc
from ingest.recipes.sources import SourceTree
from ingest.recipes.values import Builtin, ClassRef, Ext, Func, Module, Obj, Partial, Unknown

RUN_RECIPE = "scripts/training/run_recipe.py"
SLURM_LAUNCHER = "scripts/training/setup_experiment.py"
PERF_LAUNCHER = "scripts/performance/setup_experiment.py"
SLURM_ENTRY = "scripts/training/train.sh"  # what users run; it execs SLURM_LAUNCHER (a .sh: never read)
BENCHMARK_SELECTOR = "selected_benchmark_recipe"  # what the Slurm wrapper calls to resolve a benchmark name
PERF_ARGUMENTS = "scripts/performance/argument_parser.py"
PERF_CONFIGS = "scripts/performance/configs/"
DATASET_UTILS = "megatron.bridge.recipes.utils.dataset_utils"
# Files whose class statements define the dataset-config hierarchy `dataset_train_mode` tests.
CONFIG_CLASS_FILES = ("megatron/bridge/training/config.py", "megatron/bridge/data/builders/")
PROBE_NAMES = ("x_pretrain_config", "x_sft_config", "x_peft_config", "x_finetune_config")


def _type_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Builtin):
        return value.name
    if isinstance(value, Ext):
        return value.short
    if isinstance(value, Func | ClassRef):
        return value.name
    return None


def _dest(names: list[str], explicit: Any) -> str | None:
    """argparse's own rule: explicit dest, else the first long option, else the first option."""
    if isinstance(explicit, str):
        return explicit
    if not names:
        return None
    if not names[0].startswith("-"):
        return names[0]
    longs = [n for n in names if n.startswith("--")]
    chosen = longs[0] if longs else names[0]
    return chosen.lstrip("-").replace("-", "_")


def _flag(args: list[Any], kwargs: dict[str, Any], group: str | None, group_required: bool) -> LauncherFlag:
    names = [a for a in args if isinstance(a, str)]
    choices = kwargs.get("choices")
    choice_list = None
    if isinstance(choices, list | tuple | set | frozenset | dict):
        choice_list = [str(c) for c in (sorted(choices) if isinstance(choices, set | frozenset) else choices)]
    default = kwargs.get("default")
    action = kwargs.get("action")
    nargs = kwargs.get("nargs")
    required = kwargs.get("required")
    return LauncherFlag(
        names=names,
        dest=_dest(names, kwargs.get("dest")),
        action=action if isinstance(action, str) else _type_name(action),
        required=required is True,
        choices=choice_list,
        default=default if default is None or isinstance(default, bool | int | float | str) else None,
        nargs=nargs if isinstance(nargs, str | int) and not isinstance(nargs, bool) else None,
        type=_type_name(kwargs.get("type")),
        mutually_exclusive=group,
        group_required=group_required,
    )


def _parser_flags(interp: Interpreter, module: Module, function_names: list[str]) -> list[LauncherFlag]:
    """Flags of the largest parser built by any of the named functions."""
    best: list[LauncherFlag] = []
    for name in function_names:
        func = interp.resolve(module.namespace.get(name))
        if not isinstance(func, Func):
            continue
        interp.parsers = []
        try:
            interp.run_task(interp.limits.call_steps, lambda f=func: interp.call_function(f, [], {}))
        except (BudgetExceeded, RaiseSignal, RecursionError) as error:
            interp.warnings.append(f"{module.relpath}: {name}() only partly evaluated ({error})")
        for parser in interp.parsers:
            flags = [_flag(a, k, g, r) for a, k, g, r in parser.args]
            if len(flags) > len(best):
                best = flags
    return best


def _builder_names(module: Module) -> list[str]:
    """Top-level functions whose body calls add_argument (parse_args, _build_parser, ...)."""
    names = []
    for name, value in module.namespace.items():
        if (
            isinstance(value, Func)
            and value.module is module
            and any(isinstance(n, ast.Attribute) and n.attr == "add_argument" for n in ast.walk(value.node))
        ):
            names.append(name)
    return names


def _class_ancestors(tree: SourceTree) -> dict[str, set[str]]:
    """Class name -> names of all its bases, read from the config and dataset-builder modules."""
    direct: dict[str, set[str]] = {}
    for prefix in CONFIG_CLASS_FILES:
        for path in tree.paths_under(tree.package_prefix + prefix):
            text = tree.read_text(path)
            try:
                module = ast.parse(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError):
                module = None
            for node in module.body if module is not None else []:
                if isinstance(node, ast.ClassDef):
                    direct[node.name] = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
    ancestors: dict[str, set[str]] = {}
    for name in direct:
        seen: set[str] = set()
        stack = list(direct[name])
        while stack:
            base = stack.pop()
            if base not in seen:
                seen.add(base)
                stack.extend(direct.get(base, ()))
        ancestors[name] = seen
    return ancestors


def _call(interp: Interpreter, func: Any, *args: Any) -> Any:
    try:
        return interp.run_task(interp.limits.call_steps, lambda: interp.call(func, list(args), {}))
    except (BudgetExceeded, RaiseSignal, RecursionError):
        return Unknown("launcher helper not evaluable")


def _return_class(func: Any) -> str | None:
    while isinstance(func, Partial):
        func = func.func
    if isinstance(func, Func) and isinstance(func.node, ast.FunctionDef) and func.node.returns is not None:
        return ast.unparse(func.node.returns).rsplit(".", 1)[-1].strip("'\"")
    return None


def _presets_v06(interp: Interpreter, run_module: Module, modes: list[str]) -> list[DatasetPreset]:
    utils = interp.load_module(DATASET_UTILS)
    if utils is None:
        return []
    presets = interp.resolve(utils.namespace.get("DATASET_PRESETS"))
    train_mode_of_dataset = utils.namespace.get("dataset_train_mode")
    train_mode_of_mode = run_module.namespace.get("_train_mode")
    if not isinstance(presets, dict):
        return []
    loop_of_mode = {m: _call(interp, train_mode_of_mode, m) for m in modes}
    result = []
    for name, builder in presets.items():
        cls = _return_class(interp.resolve(builder))
        required = _call(interp, train_mode_of_dataset, Obj(cls=cls or "?", kind="config")) if cls else None
        if required is None and cls is not None:
            allowed = list(modes)  # mode-agnostic data (e.g. Energon at HEAD)
        elif isinstance(required, str):
            allowed = [m for m in modes if loop_of_mode.get(m) == required]
        else:
            allowed = []
        result.append(
            DatasetPreset(name=str(name), modes=allowed, description=f"built as {cls}" if cls else None)
        )
    return result


def _presets_v04(interp: Interpreter, run_module: Module) -> list[DatasetPreset]:
    utils = interp.load_module(DATASET_UTILS)
    if utils is None:
        return []
    types = interp.resolve(utils.namespace.get("DATASET_TYPES"))
    infer = utils.namespace.get("infer_mode_from_dataset")
    finetune_presets = interp.resolve(utils.namespace.get("LLM_FINETUNE_PRESETS"))
    if not isinstance(types, list | tuple):
        return []
    result = []
    for name in types:
        loop = _call(interp, infer, name)
        modes = ["pretrain"] if loop == "pretrain" else ["sft", "peft"] if loop == "finetune" else []
        description = f"training loop {loop}" if isinstance(loop, str) else None
        if name == "llm-finetune" and isinstance(finetune_presets, dict):
            description = f"{description}; dataset.dataset_name selects one of {', '.join(finetune_presets)}"
        result.append(DatasetPreset(name=str(name), modes=modes, description=description))
    return result


def _mode_inference(interp: Interpreter, modules: list[Module]) -> str | None:
    """What each probe name maps to under the version's own inference helper."""
    for module in modules:
        for helper in ("infer_recipe_mode", "infer_train_mode"):
            func = module.namespace.get(helper)
            if func is None:
                continue
            outcomes = []
            for probe in PROBE_NAMES:
                value = _call(interp, func, probe)
                outcomes.append(f"{probe} -> {value if is_plain(value) else 'error'}")
            return f"{module.name}.{helper}: " + "; ".join(outcomes)
    return None


def read_launcher(tree: SourceTree) -> tuple[LauncherSpec, list[str]]:
    """LauncherSpec of a checkout (script None when it has no run_recipe.py) and warnings."""
    with paused_gc():
        return _read_launcher(tree)


def _read_launcher(tree: SourceTree) -> tuple[LauncherSpec, list[str]]:
    warnings: list[str] = []
    if not tree.has(RUN_RECIPE):
        return LauncherSpec(script=None, benchmark=_benchmark(tree, warnings)), warnings
    interp = Interpreter(tree, extra_roots=("scripts/training/",))
    interp.class_ancestors = _class_ancestors(tree)
    module = interp.load_module("run_recipe")
    assert module is not None
    flags = _parser_flags(interp, module, _builder_names(module))
    mode_flag = next((f for f in flags if "--mode" in f.names), None)
    modes = mode_flag.choices if mode_flag else None
    if "DATASET_PRESETS" in module.namespace:
        presets = _presets_v06(interp, module, modes or [])
    elif any("--dataset" in f.names for f in flags):
        presets = _presets_v04(interp, module)
    else:
        presets = []
    helpers = [m for m in (interp.load_module("recipe_metadata"), module) if m is not None]
    spec = LauncherSpec(
        script=RUN_RECIPE,
        flags=flags,
        modes=modes,
        dataset_presets=presets,
        mode_inference=_mode_inference(interp, helpers),
        benchmark=_benchmark(tree, warnings),
        slurm=_slurm_wrapper(interp),
    )
    warnings.extend(interp.warnings)
    return spec, warnings


def _slurm_wrapper(interp: Interpreter) -> BenchmarkLauncher | None:
    """v0.6.0+ `train.sh` -> scripts/training/setup_experiment.py: Slurm resources, container, mounts."""
    if not interp.tree.has(SLURM_LAUNCHER):
        return None
    module = interp.load_module("setup_experiment")
    if module is None:
        return None
    flags = _parser_flags(interp, module, _builder_names(module))
    notes = (
        "scripts/training/train.sh runs this on the login node and submits run_recipe.py through Slurm; "
        "it owns nodes, GPUs, container, mounts and environment, and passes recipe flags through."
    )
    # It resolves an exact benchmark recipe name itself (recipe_metadata.selected_benchmark_recipe).
    runs_benchmarks = BENCHMARK_SELECTOR in module.namespace
    if runs_benchmarks:
        notes += (
            " An exact benchmark recipe (kind=benchmark) launches through it by its exported name "
            "(train.sh --recipe NAME), on the GPU count encoded in the name."
        )
    return BenchmarkLauncher(
        script=SLURM_LAUNCHER, flags=flags, notes=notes, entry=SLURM_ENTRY, benchmark_recipes=runs_benchmarks
    )


def _benchmark(tree: SourceTree, warnings: list[str]) -> BenchmarkLauncher | None:
    if not tree.has(PERF_ARGUMENTS):
        return None
    interp = Interpreter(tree, extra_roots=("scripts/performance/",))
    module = interp.load_module("argument_parser")
    if module is None:
        return None
    flags = _parser_flags(interp, module, ["parse_cli_args"])
    warnings.extend(interp.warnings)
    if tree.paths_under(tree.package_prefix + "megatron/bridge/perf_recipes/"):
        notes = (
            "Benchmark recipes are functions in megatron.bridge.perf_recipes (kind=benchmark). "
            "setup_experiment.py selects one from --model_family_name/--model_recipe_name/--task/--gpu/"
            "--compute_dtype/--num_gpus; scripts/training/run_recipe.py --recipe NAME also runs it, and a "
            "name exported by both packages loads the benchmark one."
        )
    elif any(path.endswith("/workload_base_configs.py") for path in tree.paths_under(PERF_CONFIGS)):
        notes = (
            "setup_experiment.py looks up the WorkloadBaseConfig constant "
            "<model_name>_<model_size>_<gpu>[_<task>]_<compute_dtype>_BASE_CONFIG (upper case; the task only "
            "for sft and lora) in scripts/performance/configs/<model_name>/workload_base_configs.py and "
            "applies it on top of the library recipe."
        )
    else:
        notes = (
            "setup_experiment.py looks up the WorkloadBaseConfig constant "
            "<model_recipe_name>_<task>_CONFIG_<gpu>_<compute_dtype>_<config_variant> (upper case) in "
            "scripts/performance/configs/<model_family_name>, falls back from V2 to V1 and then to the name "
            "without variant, and applies it on top of the library recipe."
        )
    return BenchmarkLauncher(script=PERF_LAUNCHER, flags=flags, notes=notes)
