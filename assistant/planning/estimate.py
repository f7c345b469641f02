"""The estimate of one run as the `estimate` command reports it: its own layout's memory, speed and rule
findings, and on request the ranked layouts (or the nearest fit).

`EstimateRun` is the run the command builds from a recipe record or a spec file (ui/commands/estimate.py);
the estimators get it as one RunSettings record, the data from the KnowledgeBase.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assistant.errors import UserError
from assistant.estimate.features import RunFeatures
from assistant.estimate.hardware import GpuSpec
from assistant.estimate.memory import estimate_memory
from assistant.estimate.memory_dit import estimate_dit_memory
from assistant.estimate.run import LORA_RANK, PipelineSplit, RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.kb import KnowledgeBase
from assistant.planning.search import layout_config, layout_findings, nearest_fit, search_layouts
from assistant.records import Cluster, ModelArch, Plan
from assistant.rules.config import EffectiveConfig


@dataclass(frozen=True)
class EstimateRun:
    """One run to estimate: the architecture, the cluster, the recipe's (or spec's) layout and the memory
    and speed settings, as read from a catalog record with overrides or from a spec file."""

    arch: ModelArch
    cluster: Cluster
    mode: str
    precision: str
    seq_length: int
    tp: int
    pp: int
    vp: int | None
    cp: int
    ep: int
    etp: int | None
    sp: bool
    mbs: int
    gbs: int
    recompute: str | None
    recompute_modules: list[str] | None
    recompute_num_layers: int | None
    recompute_method: str | None
    unfused_attention: bool
    grad_reduce_in_fp32: bool
    distributed_optimizer: bool
    fp8_param: bool
    fsdp: bool
    offload_layers: int
    cuda_graphs: bool
    features: RunFeatures
    mtp_layers: int
    lora_rank: int | None
    lora_targets: list[str] | None
    notes: list[str] = field(default_factory=list)
    optimizer_bytes: float | None = None  # None: the estimator's default (Adam, fp32 states)
    config: EffectiveConfig | None = None  # the resolved recipe config; None for a spec file
    recipe: str | None = None
    recipe_resolution: str | None = None
    version: str | None = None
    pipeline_split: PipelineSplit | None = None  # the recipe's uneven first/last stage layers, if any
    attention_dropout: float = 0.0
    hidden_dropout: float = 0.0
    fp4_param: bool = False  # NVFP4 weights (fp4_param_gather); fp8_param is FP8's


def estimate_run(
    run: EstimateRun,
    *,
    kb: KnowledgeBase,
    search: bool = False,
    top_k: int = 5,
    tokens: float | None = None,
) -> dict[str, Any]:
    """The estimate JSON of one run (from a recipe record or a spec)."""

    cluster: Cluster = run.cluster
    if cluster.num_gpus < 1:
        raise UserError("--gpus must be at least 1")
    hw = kb.gpu_spec(cluster.gpu_type)
    cluster = cluster.model_copy(update={"gpu_type": hw.key})
    result: dict[str, Any] = {
        "model": run.arch.hf_model_id,
        "recipe": run.recipe,
        "recipe_resolution": run.recipe_resolution,
        "version": run.version,
        "cluster": {"num_gpus": cluster.num_gpus, "gpu_type": hw.key, "gpus_per_node": cluster.gpus_per_node},
        "mode": run.mode,
        "precision": run.precision,
        "seq_length": run.seq_length,
        "recompute": run.recompute,
    }
    try:
        plan = _plan(run, cluster.num_gpus)
    except UserError as error:
        if not search:
            raise UserError(f"{error} (or add --search to find layouts that work)") from error
        result["plan_error"] = str(error)
        plan = None
    if plan is not None:
        result.update(_estimate_plan(run, plan, hw, cluster, kb))
        if tokens and result["throughput"]:
            seconds = tokens / (result["throughput"]["tokens_per_sec_per_gpu"] * cluster.num_gpus)
            result["time_to_train_s"] = seconds
    if search:
        result.update(_search(run, cluster, hw, top_k, kb))
    track = kb.track_record(run.arch.hf_model_id, run.precision)
    if track is not None:
        result["track_record"] = track.to_json()  # how the estimate did on this model's published runs
    return result


def _estimate_plan(
    run: EstimateRun, plan: Plan, hw: GpuSpec, cluster: Cluster, kb: KnowledgeBase
) -> dict[str, Any]:
    """Memory, throughput and rule findings of the run's own layout."""

    arch: ModelArch = run.arch
    features = run.features
    settings = RunSettings(
        seq_length=run.seq_length,
        gpus_per_node=cluster.gpus_per_node,
        mode=run.mode,
        precision=run.precision,
        recompute=run.recompute,
        recompute_modules=run.recompute_modules,
        recompute_num_layers=run.recompute_num_layers,
        recompute_method=run.recompute_method,
        distributed_optimizer=run.distributed_optimizer,
        grad_reduce_in_fp32=run.grad_reduce_in_fp32,
        optimizer_bytes=run.optimizer_bytes,
        fp8_param=run.fp8_param,
        fp4_param=run.fp4_param,
        fsdp=run.fsdp,
        cuda_graphs=run.cuda_graphs,
        unfused_attention=run.unfused_attention,
        pipeline_split=run.pipeline_split,
        attention_dropout=run.attention_dropout,
        hidden_dropout=run.hidden_dropout,
        lora_rank=run.lora_rank or LORA_RANK,
        offload_layers=run.offload_layers,
        features=features.model_copy(update={"mtp_layers": run.mtp_layers, "lora_targets": run.lora_targets}),
    )
    memory_of = estimate_dit_memory if arch.diffusion is not None else estimate_memory
    memory = memory_of(arch, plan, hw, settings, overheads=kb.memory_overheads)
    out = {
        "plan": plan.to_json(),
        "memory": memory.model_dump(mode="json", exclude={"assumptions"}),
        "throughput": None,
        "findings": [f.to_json() for f in _findings(run, plan, cluster, hw)],
        "assumptions": memory.assumptions + run.notes,
    }
    if hw.peaks_unknown:  # memory needs only the HBM size; speed needs a published tensor-core peak
        out["throughput_error"] = f"throughput not estimated on {hw.name}: {hw.peaks_unknown}"
        return out
    if arch.diffusion is not None:
        out["throughput_error"] = (
            "throughput not estimated: the speed model is fitted on language models only, and no published "
            "diffusion-transformer row is in the fit"
        )
        return out
    # The speed estimate reads the features as extracted (without the memory-only MTP/LoRA fields set
    # above) and selective recompute's default modules.
    speed_settings = settings.but(features=features, recompute_modules=None)
    speed = estimate_throughput(arch, plan, hw, speed_settings, calibration=kb.calibration)
    out["throughput"] = speed.model_dump(mode="json", exclude={"assumptions"})
    out["assumptions"] = memory.assumptions + speed.assumptions + run.notes
    return out


def _findings(run: EstimateRun, plan: Plan, cluster: Cluster, hw: GpuSpec) -> list:
    """The rule module's errors and warnings about this layout (data and checkpoint rules left out)."""

    config = run.config or layout_config(
        plan, run.seq_length, mode=run.mode, precision=run.precision, recipe="spec"
    )
    found = layout_findings(config, run.arch, cluster, gpu=hw)
    return [f for f in found if f.severity != "info"]


def _search(run: EstimateRun, cluster: Cluster, hw: GpuSpec, top_k: int, kb: KnowledgeBase) -> dict[str, Any]:
    """Best layouts here; when none fits, how far off the leanest one is and the fewest GPUs that fit."""

    common = {
        "seq_length": run.seq_length,
        "global_batch_size": run.gbs,
        "mode": run.mode,
        "precision": run.precision,
        "hardware": hw,
        "version": run.version,
        "grad_reduce_in_fp32": run.grad_reduce_in_fp32,
        "kb": kb,
    }
    ranked = search_layouts(run.arch, cluster, top_k=top_k, features=run.features, **common)
    out: dict[str, Any] = {"search": [r.to_json() for r in ranked]}
    if not ranked:
        out["nearest_fit"] = nearest_fit(run.arch, cluster, features=run.features, **common).to_json()
    return out


def _plan(run: EstimateRun, gpus: int) -> Plan:
    tp, pp, cp = run.tp, run.pp, run.cp
    if min(tp, pp, cp, run.ep, run.mbs, run.gbs, run.seq_length) < 1:
        raise UserError("parallel sizes, batch sizes and seq_length must be positive integers")
    if gpus % (tp * pp * cp):
        raise UserError(
            f"{gpus} GPUs are not divisible by TP·PP·CP = {tp}·{pp}·{cp}; change --gpus or the sizes"
        )
    dp = gpus // (tp * pp * cp)
    if run.gbs % (run.mbs * dp):
        raise UserError(
            f"global batch {run.gbs} is not divisible by micro batch {run.mbs} × DP {dp}; "
            f"set gbs= to a multiple of {run.mbs * dp}"
        )
    return Plan.sized(
        num_gpus=gpus,
        tp=tp,
        pp=pp,
        cp=cp,
        mbs=run.mbs,
        gbs=run.gbs,
        vp=run.vp,
        ep=run.ep,
        etp=run.etp,
        sp=run.sp,
    )
