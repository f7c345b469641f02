"""`autorecipe estimate`: memory, throughput and the best layouts for a recipe or any architecture.

One typer command reads the command line, and its click parser each line of `--batch`, so a batch line
accepts exactly what the command accepts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assistant.bounds import check_gpus, check_tokens, check_top_k
from assistant.errors import UserError
from assistant.estimate.features import FROZEN_PARTS, features_from_fields
from assistant.estimate.run import PipelineSplit
from assistant.kb import knowledge_base
from assistant.messages import user_language
from assistant.records import Cluster, ModelArch, RecipeRecord
from assistant.rules.versions import DEFAULT_VERSION
from assistant.spec_input import load_spec

if TYPE_CHECKING:  # the estimators load only when an estimate runs, so the CLI's other commands start fast
    from assistant.planning.estimate import EstimateRun

GB = 1e9  # every front end prints memory in GB (10^9 bytes), as the chat and GPU datasheets do
MODES = ("pretrain", "sft", "peft")
SPEC_RUN_FIELDS = (
    "seq_length",
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "virtual_pipeline_model_parallel_size",
    "context_parallel_size",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
    "sequence_parallel",
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "recompute_modules",
    "fp8_param",
    "mtp_num_layers",
    "moe_layer_freq",
    "untie_embeddings_and_output_weights",
    "share_embeddings_and_output_weights",
    "cuda_graph_impl",
    "cuda_graph_scope",
    "overlap_moe_expert_parallel_comm",
    "fp8_dot_product_attention",
    "moe_token_dispatcher_type",
    "cpu_offloading",
    "cpu_offloading_num_layers",
    "cpu_offloading_weights",
    "cross_entropy_loss_fusion",
    "cross_entropy_fusion_impl",
    "attention_backend",
    "transformer_impl",
    "attention_dropout",
    "hidden_dropout",
    "fp8_param_gather",
    "fp4_param",
    "fp4_param_gather",
    "use_transformer_engine_op_fuser",
    "moe_mlp_glu_interleave_size",
    "freeze_language_model",
    "freeze_vision_model",
    "freeze_vision_projection",
)
# Dropout where the spec does not say: TransformerConfig's own defaults (Bridge's model providers set 0).
TRANSFORMER_CONFIG_DROPOUT = 0.1


class Kind(StrEnum):
    """Which catalog a recipe name means when both have it."""

    library = "library"
    benchmark = "benchmark"


@dataclass(frozen=True)
class EstimateArgs:
    """One `estimate` call as parsed, from the command line or from a line of `--batch`."""

    recipe: str | None = None
    spec: Path | None = None
    batch: Path | None = None
    version: str | None = None
    kind: str | None = None
    gpus: int | None = None
    gpu_type: str | None = None
    gpus_per_node: int | None = None
    tokens: float | None = None
    search: bool = False
    top_k: int = 5
    as_json: bool = False
    overrides: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        given = [name for name in ("recipe", "spec", "batch") if getattr(self, name) is not None]
        if len(given) > 1:
            raise UserError(f"estimate: argument --{given[1]}: not allowed with argument --{given[0]}")


def estimate(
    recipe: Annotated[
        str | None, typer.Option(help="Recipe name from the catalog (see `autorecipe recipes list`).")
    ] = None,
    spec: Annotated[
        Path | None, typer.Option(help="JSON file with Megatron TransformerConfig field names.")
    ] = None,
    batch: Annotated[
        Path | None, typer.Option(help='JSONL file: one {"id", "args": [...]} per line.')
    ] = None,
    version: Annotated[
        str | None,
        typer.Option(help=f"Megatron-Bridge version of the recipe catalog (default {DEFAULT_VERSION})."),
    ] = None,
    kind: Annotated[
        Kind | None,
        typer.Option(
            help="Which recipe, when a library and a benchmark recipe share the name (or write KIND:NAME)."
        ),
    ] = None,
    gpus: Annotated[int | None, typer.Option(help="Number of GPUs.")] = None,
    gpu_type: Annotated[
        str | None,
        typer.Option(
            help="h100 (default), a100, a100_40g, h200, b200, b300, gb200, gb300, or a DGX system name."
        ),
    ] = None,
    gpus_per_node: Annotated[int | None, typer.Option(help="GPUs per node (default 8).")] = None,
    tokens: Annotated[
        float | None, typer.Option(help="Token budget: also report the time to train it.")
    ] = None,
    search: Annotated[bool, typer.Option("--search", help="Also rank the best parallel layouts.")] = False,
    top_k: Annotated[int, typer.Option(help="How many layouts --search returns.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    overrides: Annotated[
        list[str] | None, typer.Argument(metavar="KEY=VALUE", help="Recipe overrides, e.g. tp=4 mbs=2.")
    ] = None,
) -> None:
    """Will it fit, how fast, and which layout is best (run `autorecipe estimate --help`).

    Memory, throughput and the best layouts for a recipe or any architecture.
    """
    args = EstimateArgs(
        recipe=recipe, spec=spec, batch=batch, version=version, kind=kind.value if kind else None,
        gpus=gpus, gpu_type=gpu_type, gpus_per_node=gpus_per_node, tokens=tokens, search=search, top_k=top_k,
        as_json=as_json, overrides=tuple(overrides or ()),
    )  # fmt: skip
    if args.batch:
        for line in run_batch(args.batch, user_language(os.environ)):
            typer.echo(json.dumps(line))
        return
    result = run_estimate(args)
    if result.get("version_note"):
        typer.secho(f"note: {result['version_note']}", fg=typer.colors.YELLOW, err=True)
    typer.echo(json.dumps(result, indent=1) if args.as_json else render_text(result))


CONTEXT = {"help_option_names": ["-h", "--help"]}


def register(app: typer.Typer) -> None:
    """Add `estimate` to the root app."""
    app.command("estimate", context_settings=CONTEXT)(estimate)


@cache
def _click_command():  # noqa: ANN202 - typer returns its vendored click Command
    """The `estimate` command as click sees it (without --help), so that a batch line is parsed as the
    command line is; built once, as building it costs more than parsing a line."""
    single = typer.Typer(add_completion=False, context_settings={"help_option_names": []})
    single.command("estimate")(estimate)
    return typer.main.get_command(single)


def parse_args(argv: list[str]) -> EstimateArgs:
    """One call's arguments as `estimate` reads them; a bad flag is a UserError, not an exit."""
    try:
        ctx = _click_command().make_context("autorecipe estimate", list(argv))
    except typer.TyperException as error:  # a bad flag or value, in click's words
        raise UserError(f"estimate: {error.format_message()}") from error
    params = dict(ctx.params)
    params["overrides"] = tuple(params.get("overrides") or ())
    params["kind"] = params["kind"].value if params.get("kind") else None
    return EstimateArgs(**params)


# ---------------------------------------------------------------- the work


def run_batch(path: Path, lang: str = "en") -> list[dict[str, Any]]:
    """Each line's estimate plus its id; a bad line yields {"id", "error"} in `lang` and the batch goes on."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UserError(f"cannot read batch file {path}: {error.strerror}") from error
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        item = None
        try:
            try:
                item = json.loads(raw)
            except json.JSONDecodeError as error:
                raise UserError.keyed("bounds.batch_line_json", number=number, reason=error.msg) from error
            if not isinstance(item, dict) or not isinstance(item.get("args"), list):
                raise UserError.keyed("bounds.batch_line_estimate_shape", number=number)
            args = parse_args([str(a) for a in item["args"]])
            if args.batch:
                raise UserError.keyed("bounds.batch_nested", number=number)
            out.append({"id": item.get("id"), **run_estimate(args)})
        except UserError as error:
            row_id = item.get("id") if isinstance(item, dict) else None
            out.append({"id": row_id, "error": error.in_language(lang)})
    return out


def run_estimate(args: EstimateArgs, record: RecipeRecord | None = None) -> dict[str, Any]:
    """The estimate JSON for one parsed call; `record` stands for --recipe when it comes from a catalog
    that is not bundled (`skill export --from`)."""
    kb = knowledge_base()  # the command's one knowledge base, from the settings
    note = None
    if args.version and record is None:
        # the same resolver as ask, plan and check: between two bundled releases, the earlier one with a note
        from assistant.version_resolve import selected_choice

        choice = selected_choice(args.version, kb)
        args, note = replace(args, version=choice.version), choice.note_en
    if args.spec:
        run = _run_from_spec(args)
    elif args.recipe or record is not None:
        run = _run_from_recipe(args, record)
    else:
        raise UserError("give --recipe NAME, --spec FILE.json or --batch FILE.jsonl")
    # deferred so that the CLI's other commands start without loading the estimators
    from assistant.planning.estimate import estimate_run

    check_top_k(args.top_k)
    check_tokens(args.tokens)
    result = estimate_run(run, search=args.search, top_k=args.top_k, tokens=args.tokens, kb=kb)
    return {**result, "version_note": note} if note else result


def _cluster(args: EstimateArgs, spec: dict[str, Any] | None = None) -> Cluster:
    spec = spec or {}
    gpus = args.gpus or spec.get("gpus") or spec.get("num_gpus")
    if not gpus:
        raise UserError("say how many GPUs: --gpus N")
    per_node = next((n for n in (args.gpus_per_node, spec.get("gpus_per_node")) if n is not None), 8)
    check_gpus(int(gpus), int(per_node))
    return Cluster(
        num_gpus=int(gpus), gpu_type=args.gpu_type or spec.get("gpu_type") or "h100", gpus_per_node=per_node
    )


def _run_from_recipe(args: EstimateArgs, record: RecipeRecord | None = None) -> EstimateRun:
    # deferred so that the CLI's other commands start without loading the estimators
    from assistant.catalog import on_gpu, resolve_recipe

    record = record or resolve_recipe(args.recipe, version=args.version, kind=args.kind)
    return run_from_record(on_gpu(record, (args.gpu_type or "h100").lower()), args)


def run_from_record(record: RecipeRecord, args: EstimateArgs) -> EstimateRun:
    """The run of one catalog record (library or benchmark) with the call's overrides and cluster."""
    # deferred so that the CLI's other commands start without loading the estimators
    from assistant.catalog import load_catalog, resolution_note
    from assistant.models import architecture_gap, recipe_arch
    from assistant.override_keys import check_override_keys
    from assistant.planning.estimate import EstimateRun
    from assistant.planning.fit import reduces_grads_in_fp32, stores_fp4_weights, stores_fp8_weights
    from assistant.rules.config import build_config
    from assistant.rules.fit import optimizer_state_bytes, shards_optimizer_state

    kb = knowledge_base()
    config = build_config(record, list(args.overrides), version=args.version or record.version)
    check_override_keys(config.user_overrides, load_catalog(record.version))
    arch = recipe_arch(record, kb)
    if arch is None:
        gap = architecture_gap(record, kb)
        if gap:
            model = record.hf_model_id or str(record.fields.get("model._target_"))
            raise UserError(f"not estimated: {model}: {gap}; describe it with --spec FILE.json")
        if record.hf_model_id:
            raise UserError(
                f"no bundled architecture for {record.hf_model_id}; describe it with --spec FILE.json"
            )
        raise UserError(
            f"recipe {record.name} names no Hugging Face model and does not define its architecture "
            "statically; describe it with --spec FILE.json"
        )
    values = config.values
    if config.seq_length is None or config.global_batch_size is None or config.micro_batch_size is None:
        raise UserError(
            f"recipe {record.name} does not set seq_length/gbs/mbs statically; pass seq_length=, "
            "gbs= and mbs= overrides"
        )
    seq_length, notes = config.seq_length, []
    if arch.diffusion is not None:  # a DiT's tokens are latent patches, packed by whole samples
        # deferred: only this command loads it, so the CLI's other commands start fast
        from assistant.estimate.dit import micro_batch_tokens

        seq_length, note = micro_batch_tokens(arch.diffusion, config.seq_length, values)
        notes.append(note)
    return EstimateRun(
        config=config,
        recipe=record.name,
        recipe_resolution=resolution_note(args.recipe or record.name, record, getattr(args, "kind", None)),
        version=config.version,
        arch=arch,
        cluster=_cluster(args),
        mode=(config.mode or "pretrain") if not config.peft else "peft",
        precision=config.precision or "bf16",
        seq_length=seq_length,
        tp=config.tp,
        pp=config.pp,
        vp=config.vp,
        cp=config.cp,
        ep=config.ep,
        etp=config.etp,
        sp=config.sp,
        mbs=config.micro_batch_size,
        gbs=config.global_batch_size,
        recompute=_recompute(config.recompute_granularity),
        recompute_modules=values.get("model.recompute_modules"),
        recompute_num_layers=values.get("model.recompute_num_layers"),
        recompute_method=values.get("model.recompute_method"),
        unfused_attention=materialises_scores(values.get("model.attention_backend")),
        **_dropouts(*(_number(values.get(f"model.{k}_dropout")) for k in ("attention", "hidden")), 0.0),
        grad_reduce_in_fp32=reduces_grads_in_fp32(values, config.version, kb),
        distributed_optimizer=shards_optimizer_state(values),
        optimizer_bytes=optimizer_state_bytes(values),
        fp8_param=stores_fp8_weights(values, config.version, kb),
        fp4_param=stores_fp4_weights(values, config.version, kb),
        fsdp=config.fsdp,
        offload_layers=(config.cpu_offloading_num_layers or 0) if config.cpu_offloading else 0,
        cuda_graphs=config.cuda_graph_impl not in (None, "none"),
        features=features_from_fields(values),
        mtp_layers=int(values.get("model.mtp_num_layers") or 0),
        pipeline_split=_recipe_split(values, arch, config),
        **_lora_fields(values.get("peft.dim"), values.get("peft.target_modules")),
        notes=notes,
    )


def _recipe_split(values: dict[str, Any], arch: ModelArch, config) -> PipelineSplit | None:
    """The recipe's own pipeline split (explicit layout or uneven first/last stage), else None."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.estimate.memory import pipeline_chunks

    layout = values.get("model.pipeline_model_parallel_layout")
    first = values.get("model.num_layers_in_first_pipeline_stage")
    last = values.get("model.num_layers_in_last_pipeline_stage")
    if (config.pp or 1) < 2 or not (
        isinstance(layout, list) or isinstance(first, int) or isinstance(last, int)
    ):
        return None
    layers = (
        len(arch.hybrid_layer_pattern) if arch.is_hybrid and arch.hybrid_layer_pattern else arch.num_layers
    )
    chunks = pipeline_chunks(
        layers,
        config.pp,
        config.vp or 1,
        first=first if isinstance(first, int) else None,
        last=last if isinstance(last, int) else None,
        layout=layout if isinstance(layout, list) else None,
    )
    return PipelineSplit(config.pp, config.vp or 1, chunks) if chunks else None


def _run_from_spec(args: EstimateArgs) -> EstimateRun:
    # deferred so that the CLI's other commands start without loading the estimators
    from assistant.models import TRANSFORMER_ARCH_FIELDS, arch_from_transformer_config
    from assistant.planning.estimate import EstimateRun
    from assistant.rules.fit import optimizer_state_bytes, shards_optimizer_state

    spec = load_spec(args.spec)
    model, train = spec["model"], spec.get("train") or {}
    missing = [
        k
        for k in ("num_layers", "hidden_size", "num_attention_heads", "vocab_size", "seq_length")
        if k not in model
    ]
    if missing:
        raise UserError(f"spec model is missing {', '.join(missing)}")
    unknown = sorted(set(model) - set(TRANSFORMER_ARCH_FIELDS) - set(SPEC_RUN_FIELDS))
    try:
        arch = arch_from_transformer_config(
            model, hf_model_id=str(spec.get("name", args.spec.stem)), family="spec", source=str(args.spec)
        )
    except UserError as error:
        raise UserError(f"spec {error}") from error
    ddp = {f"ddp.{k}": v for k, v in (spec.get("ddp") or {}).items()}
    optimizer = {f"optimizer.{k}": _torch_dtype(k, v) for k, v in (spec.get("optimizer") or {}).items()}
    tp = int(model.get("tensor_model_parallel_size", 1))
    notes = [f"spec fields not used by the estimator: {', '.join(unknown)}"] if unknown else []
    return EstimateRun(
        arch=arch,
        cluster=_cluster(args, spec.get("cluster")),
        mode=spec.get("mode", "pretrain"),
        precision=str(spec.get("mixed_precision") or "bf16"),
        seq_length=int(model["seq_length"]),
        tp=tp,
        pp=int(model.get("pipeline_model_parallel_size", 1)),
        vp=model.get("virtual_pipeline_model_parallel_size"),
        cp=int(model.get("context_parallel_size", 1)),
        ep=int(model.get("expert_model_parallel_size", 1)),
        etp=model.get("expert_tensor_parallel_size"),
        sp=bool(model.get("sequence_parallel", tp > 1)),
        mbs=int(train.get("micro_batch_size", 1)),
        gbs=int(train.get("global_batch_size", 1)),
        recompute=_recompute(model.get("recompute_granularity")),
        recompute_modules=model.get("recompute_modules"),
        recompute_num_layers=model.get("recompute_num_layers"),
        recompute_method=model.get("recompute_method"),
        unfused_attention=materialises_scores(model.get("attention_backend"), model.get("transformer_impl")),
        **_dropouts(model.get("attention_dropout"), model.get("hidden_dropout"), TRANSFORMER_CONFIG_DROPOUT),
        grad_reduce_in_fp32=bool(ddp.get("ddp.grad_reduce_in_fp32", True)),
        distributed_optimizer=shards_optimizer_state({**optimizer, **ddp}),
        optimizer_bytes=optimizer_state_bytes(optimizer),
        fp8_param=bool(model.get("fp8_param") or model.get("fp8_param_gather")),
        fp4_param=bool(model.get("fp4_param") or model.get("fp4_param_gather")),
        fsdp=bool(ddp.get("ddp.use_megatron_fsdp", False)),
        offload_layers=int(model.get("cpu_offloading_num_layers") or 0) if model.get("cpu_offloading") else 0,
        cuda_graphs=model.get("cuda_graph_impl") not in (None, "none"),
        features=features_from_fields(
            {
                "model.cuda_graph_impl": model.get("cuda_graph_impl"),
                "model.cuda_graph_scope": model.get("cuda_graph_scope"),
                "comm_overlap.overlap_moe_expert_parallel_comm": model.get(
                    "overlap_moe_expert_parallel_comm"
                ),
                "mixed_precision.fp8_dot_product_attention": model.get("fp8_dot_product_attention"),
                "model.moe_token_dispatcher_type": model.get("moe_token_dispatcher_type"),
                "model.cross_entropy_loss_fusion": bool(model.get("cross_entropy_loss_fusion", False)),
                "model.cross_entropy_fusion_impl": model.get("cross_entropy_fusion_impl"),
                "model.use_transformer_engine_op_fuser": model.get("use_transformer_engine_op_fuser"),
                "model.moe_mlp_glu_interleave_size": model.get("moe_mlp_glu_interleave_size"),
                **{f"model.freeze_{part}": model.get(f"freeze_{part}") for part in FROZEN_PARTS},
            }
        ),
        mtp_layers=int(model.get("mtp_num_layers") or 0),
        **_lora_fields((spec.get("peft") or {}).get("dim"), (spec.get("peft") or {}).get("target_modules")),
        notes=notes,
    )


def materialises_scores(backend: Any, transformer_impl: Any = None) -> bool:
    """Megatron's AttnBackend "unfused" (TE's unfused path) and "local" (Megatron's own core attention)
    keep the s×s softmax output; flash, fused and auto do not. transformer_impl="local" builds the layers
    from Megatron's own modules, whose core attention is DotProductAttention (unfused)."""
    return str(backend or "").rsplit(".", 1)[-1] in ("unfused", "local") or transformer_impl == "local"


# Spellings of the optimizer-state dtypes (OptimizerConfig main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype)
TORCH_DTYPES = {
    "torch.float32": ("fp32", "float32"),
    "torch.float16": ("fp16", "float16"),
    "torch.bfloat16": ("bf16", "bfloat16"),
    "torch.uint8": ("uint8", "fp8"),
}


def _torch_dtype(key: str, value: Any) -> Any:
    """An optimizer dtype field as torch names it ("bf16" -> "torch.bfloat16"); other fields unchanged."""
    if not key.endswith("_dtype"):
        return value
    for name, spellings in TORCH_DTYPES.items():
        if str(value).lower() in (name, *spellings):
            return name
    raise UserError(f"optimizer {key} must be one of fp32, fp16, bf16, uint8, not {value!r}")


def _number(value: Any) -> float | None:
    """A statically known number of a recipe field, else None (the provider's value is not extracted)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dropouts(attention: Any, hidden: Any, default: float) -> dict[str, float]:
    """Dropout probabilities as numbers (`default` where unset); a bad value is the user's to fix."""
    out = {}
    for name, value in (("attention_dropout", attention), ("hidden_dropout", hidden)):
        try:
            out[name] = default if value is None else float(value)
        except (TypeError, ValueError) as error:
            raise UserError(f"{name} must be a number between 0 and 1, not {value!r}") from error
        if not 0.0 <= out[name] < 1.0:
            raise UserError(f"{name} must be a number between 0 and 1, not {value!r}")
    return out


def _lora_fields(dim: Any, targets: Any) -> dict[str, Any]:
    """LoRA rank and adapted linear layers (Bridge's `LoRA` defaults when the run does not set them)."""
    if targets is not None and not (isinstance(targets, list) and all(isinstance(t, str) for t in targets)):
        raise UserError('peft target_modules must be a list of linear layer names, e.g. ["linear_qkv"]')
    return {"lora_rank": int(dim) if dim else None, "lora_targets": targets}


def _recompute(value: Any) -> str | None:
    if value in (None, "none", "None", ""):
        return None
    if value not in ("selective", "full"):
        raise UserError(f"recompute_granularity must be selective, full or null, not {value!r}")
    return value


# ---------------------------------------------------------------- text output


def render_text(result: dict[str, Any]) -> str:
    title = (
        f"{result['model']} {result['mode']} {result['precision']} on {result['cluster']['num_gpus']}× "
        f"{result['cluster']['gpu_type']} (seq {result['seq_length']})"
    )
    lines = [title] + (
        _render_plan(result) if "plan" in result else [f"recipe layout: {result['plan_error']}"]
    )
    for item in result.get("search", []):
        p = item["plan"]
        lines.append(
            f"#{item['rank']} TP{p['tp']} PP{p['pp']} VP{p['vp'] or '-'} CP{p['cp']} EP{p['ep']} "
            f"MBS{p['mbs']} recompute={item['recompute']}: " + "; ".join(item["reasons"])
        )
    near = result.get("nearest_fit")
    if near:
        lean = near["leanest"]
        if lean:
            lines.append(
                f"no layout fits: the leanest needs {lean['memory']['peak_bytes'] / GB:.1f} GB per GPU "
                f"of {lean['memory']['usable_bytes'] / GB:.1f} GB"
            )
        if near["min_gpus"]:
            p = near["min_gpus_layout"]["plan"]
            lines.append(
                f"fewest GPUs that fit: {near['min_gpus']} (TP{p['tp']} PP{p['pp']} VP{p['vp'] or '-'} "
                f"CP{p['cp']} EP{p['ep']})"
            )
    return "\n".join(lines)


def _render_plan(result: dict[str, Any]) -> list[str]:
    mem, speed, plan = result["memory"], result["throughput"], result["plan"]
    verdict = "fits" if mem["fits"] else "does NOT fit"
    if mem["tight"]:
        verdict += " (tight: within the estimator's ~10% error)"
    lines = [
        f"layout: TP{plan['tp']} PP{plan['pp']} VP{plan['vp'] or '-'} CP{plan['cp']} EP{plan['ep']} "
        f"DP{plan['dp']} MBS{plan['mbs']} GBS{plan['gbs']} GA{plan['ga']} recompute={result['recompute']}",
        f"memory: {mem['peak_bytes'] / GB:.1f} GB peak of {mem['usable_bytes'] / GB:.1f} GB usable "
        f"-> {verdict} "
        f"(margin {mem['margin_bytes'] / GB:+.1f} GB, {mem['stage']} pipeline stage)",
        "  " + ", ".join(f"{k} {v / GB:.1f}" for k, v in mem["breakdown"].items()) + " GB",
        f"throughput: {speed['tokens_per_sec_per_gpu']:,.0f} tokens/s/GPU, "
        f"{speed['model_tflops_per_gpu']:,.0f} "
        f"TFLOP/s/GPU, MFU {speed['mfu']:.1%}, step {speed['step_time_s']:.2f} s"
        if speed
        else result["throughput_error"],
    ]
    for finding in result.get("findings", []):
        lines.append(f"{finding['severity']}: {finding['message']}")
    if "time_to_train_s" in result:
        lines.append(f"time to train: {result['time_to_train_s'] / 86400:.1f} days")
    return lines
