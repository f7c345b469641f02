"""Turn a Megatron-Bridge source tree into recipe records, one per exported name.

Library recipes: every name reachable as `megatron.bridge.recipes.<name>` (the star-import
closure, honouring `__all__`), plus names listed in some `recipes/**/__init__.py` `__all__` that
the top level does not reach (recorded with reachable=False, survey H7).
Benchmark recipes: v0.6.0+ the names exported by `megatron.bridge.perf_recipes.<family>`;
up to v0.5.1 the `WorkloadBaseConfig` constants exported by
`scripts/performance/configs/<family>` (record name = the constant name lower-cased, e.g.
`llama3_70b_pretrain_config_gb300_bf16_v1`, or in v0.2.0 `llama3_70b_gb300_bf16_base_config`; aliases
`X = Y` share the object and name the constant that created it as canonical).

Record conventions: `fields` maps every statically known write to its final value by dotted path
("model.use_te_rng_tracker": true); an object built by a constructor also gets "<path>._target_"
(its class or preset name, e.g. "peft._target_": "LoRA", "mixed_precision._target_":
"bf16_with_mxfp8_mixed"); imported constants are recorded by dotted name ("torch.bfloat16").
`unknown` maps a path (or a record key such as "parallelism.tp") to the reason it is not known;
"*" means the recipe could not be evaluated at all (e.g. it raises); "env:NAME" notes a value an
environment variable can override. Old benchmark records (WorkloadBaseConfig constants) hold that
dataclass's own field names ("num_gpus", "tensor_model_parallel_size", ...), not ConfigContainer paths.
"""

from __future__ import annotations

import ast
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from assistant.records import CudaGraph, EnvValue, Parallelism, RecipeRecord, RecipeVariant, SourceRef
from ingest.recipes.environments import DEFAULT_GPU, environments
from ingest.recipes.interpreter import BudgetExceeded, Interpreter, McoreFacts, RaiseSignal, paused_gc
from ingest.recipes.names import (
    FIRST_PERF_NAME,
    MIXED_PRECISION_TO_TOKEN,
    OLD_PERF_NAME,
    decode_name,
    mode_of,
)
from ingest.recipes.sources import SourceTree
from ingest.recipes.values import Builtin, ClassRef, EnvDependent, Ext, Func, Module, Obj, Partial, Unknown

RECIPES = "megatron.bridge.recipes"
PERF_RECIPES = "megatron.bridge.perf_recipes"
DIFFUSION_RECIPES = "megatron.bridge.diffusion.recipes"
PERF_SCRIPTS_ROOT = "scripts/performance/"
MAX_FLATTEN_DEPTH = 6
RECURSION_LIMIT = 6000


@dataclass
class Export:
    """One exported name and the value it is bound to."""

    name: str
    value: Any
    kind: str
    family: str
    reachable: bool
    reason: str | None = None  # why the launcher cannot reach it (reachable=False)


@dataclass
class Extraction:
    records: list[RecipeRecord]
    warnings: list[str] = field(default_factory=list)


def is_recipe_name(name: str) -> bool:
    return "config" in name and name == name.lower() and not name.startswith(("_", "set_", "apply_"))


def _family_of(module_name: str) -> str:
    parts = module_name.split(".")
    if "recipes" in parts:
        rest = parts[parts.index("recipes") + 1 :]
    elif "perf_recipes" in parts:
        rest = parts[parts.index("perf_recipes") + 1 :]
    elif "configs" in parts:
        rest = parts[parts.index("configs") + 1 :]
    else:
        rest = []
    return rest[0] if rest else module_name.rsplit(".", 1)[-1]


def _package_modules(tree: SourceTree, interp: Interpreter, package: str) -> list[Module]:
    """Every package (dir with __init__.py) under `package`, loaded."""
    base = tree.package_prefix + package.replace(".", "/") + "/"
    modules = []
    for path in tree.paths_under(base):
        if path.endswith("/__init__.py"):
            name = path[len(tree.package_prefix) : -len("/__init__.py")].replace("/", ".")
            module = interp.load_module(name)
            if module is not None:
                modules.append(module)
    return modules


def library_exports(tree: SourceTree, interp: Interpreter) -> list[Export]:
    exports: dict[str, Export] = {}
    top = interp.load_module(RECIPES)
    if top is not None:
        for name, value in list(top.namespace.items()):
            value = interp.resolve(value)
            if is_recipe_name(name) and isinstance(value, Func | Partial):
                exports[name] = Export(name, value, "library", _family_of(_func_module(value)), True)
    for module in _package_modules(tree, interp, RECIPES):
        for name in module.all_names or []:
            if name in exports or not is_recipe_name(name):
                continue
            value = interp.resolve(module.namespace.get(name))
            if isinstance(value, Func | Partial):
                reason = f"listed in {module.name}.__all__ but not exported by {RECIPES}, {LIBRARY_LOOKUP}"
                exports[name] = Export(name, value, "library", _family_of(module.name), False, reason)
    return list(exports.values())


LIBRARY_LOOKUP = "where run_recipe.py looks up --recipe"


def _defines_here(bound: str, value: Any, module: Module) -> bool:
    """A `def ..._config` of this module, or a public alias its __all__ lists (gpt3_175b_pretrain_config)."""
    if not (bound.endswith("_config") and bound == bound.lower()):
        return False
    func = value
    while isinstance(func, Partial):
        func = func.func
    if not isinstance(func, Func) or func.name == "<lambda>":
        return False
    if func.name == bound:
        return func.module is module
    return not bound.startswith("_") and bound in (module.all_names or [])


CONFIG_CLASSES = {"ConfigContainer"}


def defined_exports(
    tree: SourceTree, interp: Interpreter, known: list[Export], cache: dict[int, Evaluated]
) -> list[Export]:
    """Every other name bound to a function that returns a ConfigContainer in any module of the recipe
    packages (a `def ..._config`, a private helper, an import alias such as gpt3_175b_pretrain_config):
    recorded with reachable=False and the reason, since nothing exports it where the launcher looks."""
    taken = {(e.kind, e.name) for e in known}
    found: list[Export] = []
    for package in (RECIPES, PERF_RECIPES, DIFFUSION_RECIPES):
        base = tree.package_prefix + package.replace(".", "/") + "/"
        for path in tree.paths_under(base):
            if not path.endswith(".py"):
                continue
            name = path[len(tree.package_prefix) : -3].replace("/", ".").removesuffix(".__init__")
            module = interp.load_module(name)
            if module is None:
                continue
            for bound, value in list(module.namespace.items()):
                value = interp.resolve(value)
                if not _defines_here(bound, value, module):
                    continue
                kind = "benchmark" if _func_module(value).startswith(PERF_RECIPES) else "library"
                if (kind, bound) in taken:
                    continue
                if id(value) not in cache:
                    cache[id(value)] = evaluate(interp, value)
                result = cache[id(value)].result
                if not (isinstance(result, Obj) and result.cls in CONFIG_CLASSES):
                    continue
                where = f"{'a private helper' if bound.startswith('_') else 'defined'} in {name}"
                top = RECIPES if kind == "library" else f"{PERF_RECIPES}.<family>"
                lookup = LIBRARY_LOOKUP if kind == "library" else "where the benchmark launcher looks it up"
                taken.add((kind, bound))
                reason = f"{where}, not exported by {top}, {lookup}"
                found.append(Export(bound, value, kind, _family_of(name), False, reason))
    return found


def _func_module(value: Any) -> str:
    while isinstance(value, Partial):
        value = value.func
    return value.module.name if isinstance(value, Func) else ""


def perf_exports(tree: SourceTree, interp: Interpreter) -> list[Export]:
    exports: dict[str, Export] = {}
    for module in _package_modules(tree, interp, PERF_RECIPES):
        if module.name == PERF_RECIPES:
            continue
        for name in interp.star_names(module):
            value = interp.resolve(module.namespace.get(name))
            if is_recipe_name(name) and isinstance(value, Func | Partial) and name not in exports:
                exports[name] = Export(name, value, "benchmark", _family_of(module.name), True)
    return list(exports.values())


def old_perf_exports(tree: SourceTree, interp: Interpreter) -> list[Export]:
    """WorkloadBaseConfig constants exported by scripts/performance/configs/<family> (<= v0.5.1)."""
    exports: dict[str, Export] = {}
    paths = tree.paths_under(PERF_SCRIPTS_ROOT + "configs/")
    # What the launcher's getattr lookup can reach first: the family package, or in v0.2.0 the module
    # named workload_base_configs.py (utils.get_workload_base_config imports it by that name). Then
    # constants only defined in a <family>_workload_base_configs.py module (reachable=False).
    for wanted, reachable in (
        ("/__init__.py", True),
        ("/workload_base_configs.py", True),
        ("_workload_base_configs.py", False),
    ):
        for path in paths:
            parts = path[len(PERF_SCRIPTS_ROOT) :].split("/")
            if len(parts) != 3 or not ("/" + parts[2]).endswith(wanted):
                continue
            module = interp.load_module(
                path[len(PERF_SCRIPTS_ROOT) : -3].replace("/", ".").removesuffix(".__init__")
            )
            for name, value in list(module.namespace.items()) if module is not None else []:
                value = interp.resolve(value)
                public = not name.startswith("_")
                if (
                    public
                    and (OLD_PERF_NAME.match(name) or FIRST_PERF_NAME.match(name))
                    and isinstance(value, Obj)
                    and value.cls == "WorkloadBaseConfig"
                ):
                    reason = (
                        None
                        if reachable
                        else (f"defined in {path} but not imported by the family package the launcher reads")
                    )
                    exports.setdefault(
                        name.lower(), Export(name.lower(), value, "benchmark", parts[1], reachable, reason)
                    )
    return list(exports.values())


# ---------------------------------------------------------------------------- flattening


def to_json(value: Any, depth: int = 0) -> Any:
    """JSON form of an interpreter value; raises ValueError(reason) for unknown parts."""
    if isinstance(value, Unknown):
        raise ValueError(value.reason)
    if depth > MAX_FLATTEN_DEPTH:
        raise ValueError("nested too deeply to record")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [to_json(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        items = [to_json(v, depth + 1) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, dict):
        return {str(k): to_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, Ext):
        return value.dotted
    if isinstance(value, Func):
        return f"{value.module.name}.{value.name}"
    if isinstance(value, ClassRef):
        return f"{value.module.name}.{value.name}"
    if isinstance(value, Module):
        return value.name
    if isinstance(value, Builtin):
        return value.name
    if isinstance(value, Partial):
        return {"_target_": "functools.partial", "func": to_json(value.func, depth + 1)}
    if isinstance(value, Obj):
        if value.kind == "vivified":
            raise ValueError("read before being set; value comes from upstream defaults")
        body = {"_target_": value.cls}
        body.update({k: to_json(v, depth + 1) for k, v in value.attrs.items() if not k.startswith("_")})
        return body
    raise ValueError(f"value of type {type(value).__name__} cannot be recorded")


def flatten(
    value: Any,
    prefix: str,
    fields: dict[str, Any],
    unknown: dict[str, str],
    seen: set[int],
    dependent: dict[str, EnvDependent] | None = None,
) -> None:
    """Dotted path -> JSON value for every statically known write below `value`; environment-dependent
    values go to `dependent` (build_record picks the record's GPU)."""
    if isinstance(value, EnvDependent):
        if dependent is not None:
            dependent[prefix] = value
        else:
            unknown[prefix] = f"depends on the environment ({value.rule})"
        return
    if isinstance(value, Obj):
        if id(value) in seen or prefix.count(".") >= MAX_FLATTEN_DEPTH:
            return
        seen.add(id(value))
        if value.kind != "vivified" and prefix:
            fields[f"{prefix}._target_"] = value.cls
        for key, item in value.attrs.items():
            if key.startswith("_"):
                continue
            flatten(item, f"{prefix}.{key}" if prefix else key, fields, unknown, seen, dependent)
        seen.discard(id(value))
        return
    try:
        fields[prefix] = to_json(value)
    except ValueError as reason:
        unknown[prefix] = str(reason)


# ---------------------------------------------------------------------------- record building


@dataclass
class Evaluated:
    """What one call of a recipe function produced."""

    result: Any
    fields: dict[str, Any]
    unknown: dict[str, str]
    failure: str | None = None
    dependent: dict[str, EnvDependent] = field(default_factory=dict)


def evaluate(interp: Interpreter, value: Any, call: dict[str, Any] | None = None) -> Evaluated:
    """One call of a recipe (with keyword arguments `call`, default none), flattened."""
    interp.notes = {}
    failure = None
    result: Any = None
    if isinstance(value, Obj):
        result = value
    else:
        try:
            file = value.module.relpath if isinstance(value, Func) else None
            result = interp.run_task(
                interp.limits.call_steps, lambda: interp.call(value, [], dict(call or {})), file=file
            )
        except BudgetExceeded as error:
            failure = f"not evaluated: {error}"
        except RaiseSignal as error:
            failure = f"the recipe raises {error}"
        except RecursionError:
            failure = "not evaluated: recursion too deep"
    fields: dict[str, Any] = {}
    unknown: dict[str, str] = dict(interp.notes)
    dependent: dict[str, EnvDependent] = {}
    if failure is None:
        if isinstance(result, Obj):
            flatten(result, "", fields, unknown, set(), dependent)
        elif isinstance(result, Unknown):
            failure = f"result not known statically: {result.reason}"
        else:
            failure = "the recipe does not return a config object"
    if failure is not None:
        unknown["*"] = failure
    return Evaluated(result, fields, unknown, failure, dependent)


def _get(ev: Evaluated, *paths: str) -> tuple[Any, str | None]:
    """First path that is known; (None, reason) when the first set path is unknown."""
    for path in paths:
        if path in ev.fields:
            return ev.fields[path], None
        if path in ev.unknown:
            return None, ev.unknown[path]
    return None, None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class VersionSemantics:
    """ETP=None means ETP=1 when EP>1 since v0.6.0 (#4579), ETP=TP before (survey H12)."""

    etp_one_with_ep: bool


def min_gpus(par: Parallelism, semantics: VersionSemantics) -> int:
    tp, pp, cp, ep = (v or 1 for v in (par.tp, par.pp, par.cp, par.ep))
    etp = par.etp
    if etp is None:
        etp = 1 if (semantics.etp_one_with_ep and ep > 1) else tp
    return pp * max(tp * cp, ep * etp)


def build_record(
    export: Export, canonical: str, ev: Evaluated, version: str, semantics: VersionSemantics, prefix: str
) -> RecipeRecord:
    old_perf = isinstance(export.value, Obj)
    model = "" if old_perf else "model."
    decoded = decode_name(export.name)
    if decoded.gpu_type is None and decode_name(canonical).gpu_type is not None:
        decoded = decode_name(canonical)
    ev, gpu_dependent = _for_gpu(ev, decoded.gpu_type or DEFAULT_GPU)
    unknown = dict(ev.unknown)

    def pick(record_key: str, *paths: str) -> Any:
        value, reason = _get(ev, *paths)
        if reason is not None:
            unknown[record_key] = reason
        return value

    par = Parallelism(
        tp=_int(pick("parallelism.tp", f"{model}tensor_model_parallel_size")),
        pp=_int(pick("parallelism.pp", f"{model}pipeline_model_parallel_size")),
        vp=_int(pick("parallelism.vp", f"{model}virtual_pipeline_model_parallel_size")),
        cp=_int(pick("parallelism.cp", f"{model}context_parallel_size")),
        ep=_int(pick("parallelism.ep", f"{model}expert_model_parallel_size")),
        etp=_int(pick("parallelism.etp", f"{model}expert_tensor_parallel_size")),
    )
    sp = pick("parallelism.sp", f"{model}sequence_parallel")
    if old_perf and isinstance(export.value, Obj) and par.tp is not None:
        sp = par.tp > 1  # WorkloadBaseConfig.sequence_parallel is the property TP > 1
    par.sp = sp if isinstance(sp, bool) else None

    # A name's own hardware encoding wins (a b200 name may be bound to the gb200 function, survey H6);
    # legacy names encode nothing, so they take their canonical function's encoding (decoded above).
    encoded_gpus = decoded.gpus
    if old_perf:
        encoded_gpus = _int(ev.fields.get("num_gpus"))
    precision = decoded.precision
    if precision is None and not old_perf:
        precision = _precision(ev, unknown)

    peft = _peft_scheme(ev, old_perf, unknown)
    mode = mode_of(decoded.task)
    if decoded.task == "finetune":
        mode = "peft" if peft else ("sft" if "peft" not in unknown else None)
    if mode is None and peft:
        mode = "peft"

    seq = _int(pick("seq_length", "dataset.seq_length", "dataset.sequence_length"))
    model_seq = None if old_perf else _int(pick("model_seq_length", "model.seq_length"))
    recompute = pick("recompute", f"{model}recompute_granularity")
    modules = pick("recompute_modules", f"{model}recompute_modules")

    impl = pick("cuda_graph", f"{model}cuda_graph_impl")
    scope = pick("cuda_graph", f"{model}cuda_graph_scope")
    if scope is None and isinstance(ev.fields.get(f"{model}cuda_graph_modules"), list):
        scope = ev.fields[f"{model}cuda_graph_modules"]  # Megatron Core's newer name for the scope
    cuda_graph = None
    if impl is not None or scope is not None:
        scope_list = [scope] if isinstance(scope, str) else scope if isinstance(scope, list) else None
        cuda_graph = CudaGraph(
            impl=impl if isinstance(impl, str) else None,
            scope=[str(s) for s in scope_list] if scope_list is not None else None,
        )

    fsdp = pick("fsdp", "use_megatron_fsdp" if old_perf else "ddp.use_megatron_fsdp")
    if not old_perf and fsdp is not True and ev.fields.get("dist.use_torch_fsdp2") is True:
        fsdp = True
    packed = None if old_perf else _packed(ev, unknown)
    hf_id = _hf_model_id(ev)

    record_min = None
    if not ev.failure and not any(k.startswith("parallelism.") and k != "parallelism.sp" for k in unknown):
        record_min = min_gpus(par, semantics)
    elif not ev.failure:
        unknown["min_gpus"] = "a parallel size is not known statically"

    func = export.value
    while isinstance(func, Partial):
        func = func.func
    if isinstance(func, Func):
        source = SourceRef(path=func.module.relpath, line=getattr(func.node, "lineno", 0))
        module_name = func.module.name
    else:
        origin = export.value.origin if isinstance(export.value, Obj) else None
        source = SourceRef(path=origin[1], line=origin[2]) if origin else SourceRef(path="", line=0)
        module_name = origin[1][len(PERF_SCRIPTS_ROOT) : -3].replace("/", ".") if origin else ""

    return RecipeRecord(
        name=export.name,
        canonical=canonical,
        version=version,
        kind=export.kind,  # type: ignore[arg-type]
        family=export.family,
        mode=mode,  # type: ignore[arg-type]
        hf_model_id=hf_id,
        parallelism=par,
        seq_length=seq,
        model_seq_length=model_seq,
        global_batch_size=_int(
            pick("global_batch_size", "train.global_batch_size" if not old_perf else "global_batch_size")
        ),
        micro_batch_size=_int(
            pick("micro_batch_size", "train.micro_batch_size" if not old_perf else "micro_batch_size")
        ),
        min_gpus=record_min,
        encoded_gpus=encoded_gpus,
        gpu_type=decoded.gpu_type,
        gpu_variant=decoded.variant,
        precision=precision,
        peft=peft,
        recompute=recompute if isinstance(recompute, str) else None,
        recompute_modules=[str(m) for m in modules] if isinstance(modules, list) else None,
        cuda_graph=cuda_graph,
        fsdp=fsdp if isinstance(fsdp, bool) else None,
        packed_sequence=packed,
        module=module_name,
        reachable=export.reachable,
        unreachable_reason=export.reason,
        source=SourceRef(path=prefix + source.path if source.path else "", line=source.line),
        fields=ev.fields,
        unknown=unknown,
        gpu_dependent=gpu_dependent,
    )


def _for_gpu(ev: Evaluated, gpu: str) -> tuple[Evaluated, dict[str, EnvValue]]:
    """`ev` with each environment-dependent field set to its value on `gpu`, and those values per GPU."""
    if not ev.dependent:
        return ev, {}
    gpus = {e.name for e in environments() if e.cuda}
    fields, unknown = dict(ev.fields), dict(ev.unknown)
    recorded: dict[str, EnvValue] = {}
    for path, value in ev.dependent.items():
        by_env: dict[str, Any] = {}
        for env, item in value.by_env.items():
            try:
                by_env[env] = to_json(item)
            except ValueError as reason:
                by_env[env] = f"<not known statically: {reason}>"
        if gpu in by_env and not str(by_env[gpu]).startswith("<not known"):
            fields[path] = by_env[gpu]
        else:
            unknown[path] = f"depends on the GPU ({value.rule}); not known for {gpu}"
        relpath, _, line = value.source.rpartition(":")
        recorded[path] = EnvValue(
            by_gpu={k: v for k, v in by_env.items() if k in gpus},
            environments={k: v for k, v in by_env.items() if k not in gpus},
            raises=dict(value.raises),
            assumed=gpu,
            rule=value.rule,
            source=SourceRef(path=relpath, line=int(line or 0)),
        )
    return Evaluated(ev.result, fields, unknown, ev.failure, ev.dependent), recorded


FP8_RECIPE_TO_TOKEN = {"tensorwise": "fp8cs", "delayed": "fp8ds", "mxfp8": "fp8mx", "blockwise": "fp8sc"}


def _precision(ev: Evaluated, unknown: dict[str, str]) -> str | None:
    """Precision token (bf16, fp8cs, ...) from a preset name or an explicit MixedPrecisionConfig."""
    mixed, reason = _get(ev, "mixed_precision._target_", "mixed_precision")
    if reason is not None:
        unknown["precision"] = reason
        return None
    if not isinstance(mixed, str):
        return None
    for preset, token in MIXED_PRECISION_TO_TOKEN.items():
        if mixed == preset or mixed.endswith("_" + preset):  # model-specific presets: nanov2_bf16_..._mixed
            return token
    if mixed != "MixedPrecisionConfig":
        return mixed
    if ev.fields.get("mixed_precision.fp4"):
        return "nvfp4"
    if ev.fields.get("mixed_precision.fp8"):
        recipe = ev.fields.get("mixed_precision.fp8_recipe")
        return FP8_RECIPE_TO_TOKEN.get(recipe, "fp8") if isinstance(recipe, str) else "fp8"
    if ev.fields.get("mixed_precision.bf16"):
        return "bf16"
    if ev.fields.get("mixed_precision.fp16"):
        return "fp16"
    return None


def _peft_scheme(ev: Evaluated, old_perf: bool, unknown: dict[str, str]) -> str | None:
    target, _ = _get(ev, "peft._target_")
    if isinstance(target, str):
        return target.lower().removeprefix("vlm").removeprefix("canonical")
    value, reason = _get(ev, "peft")
    if reason is not None:
        unknown["peft"] = reason
        return None
    if isinstance(value, str) and value.lower() != "none":
        return value.lower()
    return None


def _packed(ev: Evaluated, unknown: dict[str, str]) -> bool | None:
    size, reason = _get(ev, "dataset.packed_sequence_specs.packed_sequence_size")
    if isinstance(size, int) and not isinstance(size, bool):
        return size > 0
    if reason is not None:
        unknown["packed_sequence"] = reason
        return None
    flag, reason = _get(ev, "dataset.packed_sequence")
    if isinstance(flag, bool):
        return flag
    if "dataset.packed_sequence_specs._target_" in ev.fields:
        return False
    return None


def _hf_model_id(ev: Evaluated) -> str | None:
    result = ev.result
    if isinstance(result, Obj):
        model = result.attrs.get("model")
        if isinstance(model, Obj) and model.hf_model_id:
            return model.hf_model_id
    value = ev.fields.get("model.hf_model_id")
    return value if isinstance(value, str) else None


# ---------------------------------------------------------------------------- driver


# The calls a finetune recipe that takes `peft` is recorded under: full SFT, LoRA and DoRA. Up to 0.5.1 the
# launcher passes its --peft_scheme (default None) as peft= to such a recipe (catalog_build links them).
PEFT_CALLS = ({"peft": None}, {"peft": "lora"}, {"peft": "dora"})


def _accepts_peft(value: Any) -> bool:
    func = value
    while isinstance(func, Partial):
        func = func.func
    if not isinstance(func, Func) or isinstance(func.node, ast.Lambda):
        return False
    spec = func.node.args
    names = {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
    return "peft" in names or spec.kwarg is not None


def _peft_variants(
    interp: Interpreter,
    export: Export,
    canonical: str,
    record: RecipeRecord,
    version: str,
    semantics: VersionSemantics,
) -> list[RecipeVariant]:
    """The recipe called with peft=None and peft="lora", when it is a finetune recipe that takes `peft`."""
    if export.kind != "library" or record.mode not in {"sft", "peft"} or not _accepts_peft(export.value):
        return []
    variants = []
    for call in PEFT_CALLS:
        ev = evaluate(interp, export.value, call)
        if ev.failure:
            continue
        other = build_record(export, canonical, ev, version, semantics, "")
        variants.append(
            RecipeVariant(
                mode="peft" if call["peft"] else "sft",
                call=dict(call),
                parallelism=other.parallelism,
                min_gpus=other.min_gpus,
                global_batch_size=other.global_batch_size,
                micro_batch_size=other.micro_batch_size,
                peft=other.peft,
                changed={k: v for k, v in other.fields.items() if record.fields.get(k, _MISSING) != v},
            )
        )
    return variants if any(v.changed for v in variants) else []


_MISSING = object()


def _canonical_name(export: Export) -> str:
    value = export.value
    while isinstance(value, Partial):
        value = value.func
    if isinstance(value, Func):
        return value.name
    if isinstance(value, Obj) and value.origin is not None:
        return value.origin[0].lower()
    return export.name


def extract(
    tree: SourceTree,
    version: str,
    semantics: VersionSemantics | None = None,
    path_prefix: str = "",
    mcore: McoreFacts | None = None,
) -> Extraction:
    """Records for every exported library and benchmark recipe of `tree`; `mcore` (the pinned Megatron
    Core) decides the branches of upstream's cuda_graph helpers."""
    semantics = semantics or VersionSemantics(etp_one_with_ep=version_at_least(version, (0, 6, 0)))
    interp = Interpreter(tree, extra_roots=(PERF_SCRIPTS_ROOT,), mcore=mcore)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        with paused_gc():
            exports = (
                library_exports(tree, interp) + perf_exports(tree, interp) + old_perf_exports(tree, interp)
            )
            cache: dict[int, Evaluated] = {}
            exports += defined_exports(tree, interp, exports, cache)
            records = []
            for export in exports:
                key = id(export.value)
                if key not in cache:
                    cache[key] = evaluate(interp, export.value)
                canonical = _canonical_name(export)
                record = build_record(export, canonical, cache[key], version, semantics, path_prefix)
                record.variants = _peft_variants(interp, export, canonical, record, version, semantics)
                records.append(record)
    finally:
        sys.setrecursionlimit(limit)
    _link_aliases(records)
    records.sort(key=lambda r: (r.kind, r.name))
    return Extraction(records=records, warnings=list(dict.fromkeys(interp.warnings)))


def _link_aliases(records: list[RecipeRecord]) -> None:
    by_canonical: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if record.name != record.canonical:
            by_canonical.setdefault((record.kind, record.canonical), []).append(record.name)
    for record in records:
        if record.name == record.canonical:
            record.aliases = sorted(by_canonical.get((record.kind, record.name), []))


def version_at_least(version: str, floor: tuple[int, int, int]) -> bool:
    if version == "main":
        return True
    numbers = [int(n) for n in re.findall(r"\d+", version)[:3]]
    return tuple(numbers + [0] * (3 - len(numbers))) >= floor
