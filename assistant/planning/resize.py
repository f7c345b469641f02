"""resize(): adapt a recipe's parallelism and batch layout to the user's cluster and sequence length.

Rules, in order of preference (from the recipe skill): keep the global batch (move gradient
accumulation instead); keep the recipe's own layout when it is valid here; CP for long sequences;
no PP unless TP alone cannot fit the model; TP divides the KV heads and stays inside the NVLink
domain; for MoE, EP before TP; VP whenever PP > 1; SP whenever TP > 1; lower MBS before changing the
global batch; one GPU trains PEFT only. Every returned plan passes validate().
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from assistant.errors import UserError
from assistant.estimate.dit import tensor_parallel_only
from assistant.estimate.hardware import GpuSpec
from assistant.estimate.memory import estimable, memory_floor
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import unmodelled_reason
from assistant.kb import KnowledgeBase
from assistant.messages import Localized, msg
from assistant.planning.cached import nearest_fit  # the search memoised per its inputs (issue 22)
from assistant.planning.fit import estimate_fit, fit_run_settings, reduces_grads_in_fp32
from assistant.planning.search import NearestFit
from assistant.records import Cluster, Finding, ModelArch, Override, Plan, RecipeRecord, Record
from assistant.rules.classify import classify
from assistant.rules.config import EffectiveConfig, build_config
from assistant.rules.findings import divisors, effective_etp, finding, next_pow2, tp_allowed
from assistant.rules.fit import FitVerdict
from assistant.rules.validate import (
    LONG_CONTEXT,
    SPLIT_LAYER_FLAGS,
    has_errors,
    has_flexible_layout,
    validate,
)
from assistant.rules.versions import traits

DEFAULT_SEQ = 4096
DEFAULT_GBS = 128


TARGET_LAYERS_PER_CHUNK = 4
MAX_VALIDATIONS = 200


class ResizeResult(Record):
    plan: Plan | None
    overrides: list[Override] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    config: EffectiveConfig | None = None
    fit: FitVerdict | None = None
    # The estimator's NearestFit when no layout fits (kept so callers need not search again).
    nearest: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": self.plan.to_json() if self.plan else None,
            "overrides": [item.to_json() for item in self.overrides],
            "findings": [item.to_json() for item in self.findings],
            "fit": self.fit.to_json() if self.fit else None,
        }


@dataclass(frozen=True)
class _Layout:
    tp: int
    pp: int
    cp: int
    ep: int
    etp: int | None
    mbs: int
    gbs: int
    rank: tuple
    # The GBS the launcher runs this layout with when none is given; None when it cannot say one (the
    # recipe sets none, or weak scaling would give a fraction and stop the launch).
    runner_gbs: int | None = None


# ---------------------------------------------------------------- benchmark weak scaling

# The names run_recipe.py resolves as benchmark recipes it weak-scales: flat names that encode the task,
# GPU count, hardware and precision (v0.6.0 scripts/training/recipe_metadata.py:40 BENCHMARK_RECIPE_PATTERN).
_FLAT_BENCHMARK = re.compile(
    r"_(?:pretrain|sft|peft)_[1-9][0-9]*gpu_[a-z0-9]+_(?:bf16|fp8cs|fp8mx|fp8sc|nvfp4)(?:_[a-z0-9_]+)?_config$"
)


@dataclass(frozen=True)
class WeakScaling:
    """A benchmark recipe's own batch: upstream's launchers keep its samples per DP rank on another world
    size (v0.6.0 scripts/common/benchmark_parallelism.py:126 weak_scaled_global_batch_size)."""

    gbs: int  # the recipe's GBS
    dp: int  # its DP on the GPU count in its name
    gpus: int  # that GPU count

    def at(self, dp: int) -> int | None:
        """The GBS the launcher sets at this DP; None when it is not whole (the launcher stops then)."""
        scaled = self.gbs * dp
        return scaled // self.dp if scaled % self.dp == 0 else None


def weak_scaling(record: RecipeRecord, version: str, user_overrides: dict[str, Any]) -> WeakScaling | None:
    """How the launcher rescales this recipe's GBS, or None when it keeps it: not a flat benchmark recipe,
    a release before weak scaling, or a GBS the user gives (which turns it off)."""
    if not traits(version).weak_scales_benchmark_gbs or record.kind != "benchmark":
        return None
    if not _FLAT_BENCHMARK.search(record.name) or not record.encoded_gpus or not record.global_batch_size:
        return None
    if {"train", "train.global_batch_size"} & set(user_overrides):
        return None
    par = record.parallelism
    model_parallel = (par.tp or 1) * (par.pp or 1) * (par.cp or 1)
    if record.encoded_gpus % model_parallel:
        return None
    return WeakScaling(record.global_batch_size, record.encoded_gpus // model_parallel, record.encoded_gpus)


# ---------------------------------------------------------------- targets


def target_cp(recipe_seq: int | None, recipe_cp: int, seq: int) -> int:
    """CP for the requested sequence: the recipe's if the length is unchanged, else ~8K tokens per rank."""
    if recipe_seq is not None and seq == recipe_seq:
        return recipe_cp
    per_rank = (
        max((recipe_seq or LONG_CONTEXT) // max(recipe_cp, 1), LONG_CONTEXT)
        if recipe_cp > 1
        else LONG_CONTEXT
    )
    if seq <= per_rank:
        return 1
    return next_pow2(seq / per_rank)


def choose_vp(
    layers: int, pp: int, recipe_vp: int | None, recipe_pp: int, split_extra: int = 0
) -> int | None:
    """VP whenever PP > 1: the recipe's if still valid, else chunks of about four layers. `split_extra` is
    the embedding and/or loss that the recipe's account_for_*_in_pipeline_split flags count as layers:
    Megatron splits them with the transformer layers (Llama 3.1 405B: 126 + 2 over PP8·VP2)."""
    counted = layers + split_extra
    if pp <= 1 or counted % pp:
        return None
    per_stage = counted // pp
    if recipe_vp and recipe_vp > 1 and pp == recipe_pp and per_stage % recipe_vp == 0:
        return recipe_vp
    options = [d for d in divisors(per_stage) if d > 1]
    if not options:
        return None
    return min(options, key=lambda d: (abs(per_stage / d - TARGET_LAYERS_PER_CHUNK), d))


def model_fits(arch: ModelArch, cluster: Cluster, run: RunSettings, gpu: GpuSpec, **layout: int) -> bool:
    """The one place resize asks whether a layout fits while it prunes candidates: the memory estimator's
    floor (estimate/memory.py memory_floor) with the run settings the full estimate reads, so only layouts
    that estimate would reject are pruned; the chosen plan's verdict comes from it (estimate_fit)."""
    need = memory_floor(arch, world=cluster.num_gpus, run=run, **layout)
    return need <= gpu.usable_bytes


# ---------------------------------------------------------------- search


def _log_distance(value: int, reference: int) -> float:
    return abs(math.log2(value) - math.log2(max(reference, 1)))


def _candidates(
    arch: ModelArch,
    cluster: Cluster,
    base: EffectiveConfig,
    seq: int,
    cp_goal: int,
    version: str,
    peft: bool,
    validated_gpus: int | None,
    floor_run: RunSettings | None,
    kb: KnowledgeBase,
    weak: WeakScaling | None = None,
) -> Iterator[_Layout]:
    """Every layout that passes the cheap arithmetic checks and fits; ranked by the resize preferences.

    The recipe's own layout at its own sequence length counts as fitting on at least the GPU count it
    was validated for (`validated_gpus`): upstream ran it, whatever the floor says. Without `floor_run`
    (the settings the memory estimate reads) nothing is pruned for memory. With `weak`, the batch kept is
    the one the launcher weak-scales to at each layout's DP.
    """
    world = cluster.num_gpus
    gpu = kb.gpu_spec(cluster.gpu_type)  # an unknown type is a UserError
    domain = gpu.nvlink_group(cluster.gpus_per_node)  # the node, or 72 on NVL72-class systems
    experts = arch.num_moe_experts or 0
    groups = arch.num_query_groups or arch.num_attention_heads
    pinned = {name: base.values[key] for name, key in _KEYS.items() if key in base.user_overrides}
    tps = [
        t
        for t in divisors(world)
        if t <= domain and (groups % t == 0 or t == base.tp) and tp_allowed(arch, t, version)
    ]
    pps = [p for p in divisors(arch.num_layers) if world % p == 0]
    if tensor_parallel_only(arch):  # FLUX: no pipeline split, no sequence split
        pps, cp_goal = [1], 1
    if has_flexible_layout(base.values):
        pps = [base.pp] if world % base.pp == 0 else []  # the recipe's own layout fixes PP
    cps = [c for c in (1, 2, 4, 8, 16, 32, 64, 128) if c <= cp_goal and seq % (2 * c) == 0 or c == 1]
    eps = [e for e in divisors(experts) if world % e == 0] if experts else [1]
    tps = [pinned["tp"]] if "tp" in pinned else tps
    pps = [pinned["pp"]] if "pp" in pinned else pps
    cps = [pinned["cp"]] if "cp" in pinned else cps
    eps = [pinned["ep"]] if "ep" in pinned else eps
    recipe_mbs = base.micro_batch_size or 1
    mbs_options = [1] if base.packed_sequence else sorted(divisors(recipe_mbs), reverse=True)
    mbs_options = [pinned["mbs"]] if "mbs" in pinned else mbs_options
    gbs0 = base.global_batch_size or DEFAULT_GBS
    recipe_layout = (base.tp, base.pp, base.cp, base.ep)
    judged = estimable(arch)  # else the plan's fit verdict says "unknown"
    for tp in tps:
        for pp in pps:
            for cp in cps:
                size = tp * pp * cp
                if world % size:
                    continue
                dp = world // size
                runner_gbs = weak.at(dp) if weak is not None else base.global_batch_size
                target = runner_gbs or gbs0
                for ep in eps:
                    etp = base.etp if experts else None
                    etp_eff = effective_etp(etp, tp, ep, version) if experts else 1
                    if experts and world % (pp * ep * etp_eff):
                        continue
                    for mbs in mbs_options:
                        trusted = (
                            (tp, pp, cp, ep) == recipe_layout
                            and seq == base.seq_length
                            and validated_gpus is not None
                            and world >= validated_gpus
                        )
                        step = mbs * dp
                        gbs = target if target % step == 0 else max(step, round(target / step) * step)
                        if (
                            judged
                            and floor_run is not None
                            and not trusted
                            and not model_fits(
                                arch, cluster, floor_run, gpu, tp=tp, pp=pp, cp=cp, ep=ep, etp=etp_eff,
                                micro_batch_size=mbs, microbatches=gbs // step,
                            )  # fmt: skip
                        ):
                            continue
                        if "gbs" in pinned and gbs != gbs0:
                            continue
                        rank = (
                            gbs != target,
                            _log_distance(cp_goal, cp),
                            (tp, pp, cp, ep) != recipe_layout,
                            pp,
                            tp,
                            _log_distance(ep, base.ep) if experts else 0,
                            -ep,
                            -mbs,
                        )
                        yield _Layout(tp, pp, cp, ep, etp, mbs, gbs, rank, runner_gbs)


# ---------------------------------------------------------------- overrides


_KEYS = {
    "tp": "model.tensor_model_parallel_size",
    "pp": "model.pipeline_model_parallel_size",
    "vp": "model.virtual_pipeline_model_parallel_size",
    "cp": "model.context_parallel_size",
    "ep": "model.expert_model_parallel_size",
    "etp": "model.expert_tensor_parallel_size",
    "sp": "model.sequence_parallel",
    "mbs": "train.micro_batch_size",
    "gbs": "train.global_batch_size",
}


def _override(key: str, value: Any, reason_key: str, **facts: Any) -> Override:
    change_class, _ = classify(key, value)
    reason = msg(f"reason.{reason_key}", value=value, **facts)
    return Override(
        key=key,
        value=value,
        reason=reason.render("en"),
        reason_zh=reason.render("zh"),
        change_class=change_class,
    )


# ---------------------------------------------------------------- resize


def resize(
    record: RecipeRecord,
    arch: ModelArch | None,
    cluster: Cluster,
    goal: str | None = None,
    seq_len: int | None = None,
    *,
    user_overrides: dict[str, Any] | None = None,
    version: str | None = None,
    kb: KnowledgeBase,
) -> ResizeResult:
    """A plan for this recipe on this cluster, or no plan and error findings that say why."""
    version = version or record.version
    base = build_config(record, user_overrides or {}, version=version)
    mode = goal or base.mode
    peft = mode == "peft" or base.is_peft
    world = cluster.num_gpus
    # The skill: one GPU runs only PEFT recipes. The code is more precise: a recipe named for one GPU
    # (gemma3_1b_pretrain_1gpu_h100_bf16_config) is validated there.
    if world == 1 and not peft and record.encoded_gpus != 1:
        return ResizeResult(
            plan=None,
            findings=[
                finding(
                    "single-gpu-needs-peft",
                    "error",
                    msg(
                        "single-gpu-needs-peft",
                        name=record.name,
                        mode=mode or msg("single-gpu-needs-peft.full"),
                    ),
                )
            ],
            config=base,
        )
    if arch is None:
        as_validated = _as_validated(record, cluster, base, seq_len, mode, version, kb)
        if as_validated is not None:
            return as_validated
        return ResizeResult(
            plan=None,
            findings=[
                finding(
                    "arch-unknown",
                    "error",
                    msg(
                        "arch-unknown",
                        value1=record.hf_model_id or record.name,
                        num_gpus=cluster.num_gpus,
                        value2=record.encoded_gpus or record.min_gpus,
                    ),
                )
            ],
            config=base,
        )
    seq = seq_len or base.seq_length or DEFAULT_SEQ
    cp_goal = target_cp(base.seq_length, base.cp, seq)
    validated = record.encoded_gpus or record.min_gpus
    floor_run = _floor_run(record, base, seq, peft, kb)
    weak = weak_scaling(record, version, base.user_overrides)
    candidates = sorted(
        _candidates(arch, cluster, base, seq, cp_goal, version, peft, validated, floor_run, kb, weak),
        key=lambda layout: layout.rank,
    )
    first_valid: ResizeResult | None = None
    for layout in candidates[:MAX_VALIDATIONS]:
        result = _finish(record, arch, cluster, base, layout, seq, version, mode, kb)
        if result is None:
            continue
        # The floor only prunes what cannot fit: the first valid layout the memory estimator does not
        # reject wins; if it rejects them all, the first valid one is kept with its fit-oom warning. The
        # recipe's own layout on the GPUs upstream validated it on is kept whatever the estimate says.
        own = (layout.tp, layout.pp, layout.cp, layout.ep) == (base.tp, base.pp, base.cp, base.ep)
        upstream_ran_it = own and seq == base.seq_length and validated and cluster.num_gpus >= validated
        if upstream_ran_it or result.fit is None or result.fit.status != "does-not-fit":
            return result
        first_valid = first_valid or result
    if first_valid is not None:
        return first_valid
    need, nearest = (
        (None, None)
        if candidates
        else _smallest_world(arch, cluster, base, seq, cp_goal, version, peft, floor_run, kb)
    )
    return ResizeResult(
        plan=None,
        findings=[_no_plan(record, cluster, seq, peft, bool(candidates), need)],
        config=base,
        nearest=nearest,
    )


def _floor_run(
    record: RecipeRecord, base: EffectiveConfig, seq: int, peft: bool, kb: KnowledgeBase
) -> RunSettings | None:
    """The run settings the memory estimate reads for this recipe, at the asked sequence and mode (None
    when the recipe's values cannot be read: then no layout is pruned for memory)."""
    try:
        run = fit_run_settings(record, base, kb=kb)
    except UserError:
        return None
    return run.but(seq_length=seq, mode="peft" if peft else run.mode)


def _as_validated(
    record: RecipeRecord,
    cluster: Cluster,
    base: EffectiveConfig,
    seq_len: int | None,
    mode: str | None,
    version: str,
    kb: KnowledgeBase,
) -> ResizeResult | None:
    """Without an architecture nothing can be checked, but a recipe run unchanged on the GPU count (and type)
    it is written for (in its name, else its minimum) needs no check: its own layout, with a warning."""
    same_gpus = record.written_for(cluster)
    unchanged = not base.user_overrides and seq_len in (None, base.seq_length)
    mbs, gbs = base.micro_batch_size, base.global_batch_size
    model_parallel = base.tp * base.pp * base.cp
    if not (same_gpus and unchanged and mbs and gbs) or cluster.num_gpus % model_parallel:
        return None
    if gbs % (mbs * (cluster.num_gpus // model_parallel)):
        return None
    overrides = _checkpoint_overrides(base, mode)
    config = build_config(record, {item.key: item.value for item in overrides}, version=version)
    findings = validate(config, None, cluster, version, gpu=kb.gpu_spec(cluster.gpu_type))
    if has_errors(findings):
        return None
    plan = Plan.sized(
        num_gpus=cluster.num_gpus, tp=base.tp, pp=base.pp, cp=base.cp, mbs=mbs, gbs=gbs, vp=base.vp,
        ep=base.ep, etp=base.etp, sp=base.sp,
    )  # fmt: skip
    name = record.hf_model_id or record.name
    warning = finding(
        "arch-unknown-validated",
        "warning",
        msg("arch-unknown-validated", name=name, num_gpus=cluster.num_gpus),
    )
    return ResizeResult(plan=plan, overrides=overrides, findings=[warning, *findings], config=config)


def _checkpoint_overrides(base: EffectiveConfig, mode: str | None) -> list[Override]:
    """A PEFT run needs the pretrained checkpoint it adapts: a placeholder for it when the recipe has none."""
    if (mode == "peft" or base.is_peft) and base.pretrained_checkpoint is None:
        return [_override("checkpoint.pretrained_checkpoint", "${PRETRAINED_CHECKPOINT}", "checkpoint")]
    return []


def _smallest_world(
    arch: ModelArch,
    cluster: Cluster,
    base: EffectiveConfig,
    seq: int,
    cp_goal: int,
    version: str,
    peft: bool,
    floor_run: RunSettings | None,
    kb: KnowledgeBase,
) -> tuple[int | None, Any]:
    """The smallest whole-node GPU count (up to 4096) on which some layout fits, for the error message:
    the memory estimator's search when it can judge the model, else the first count its floor admits."""
    nearest = _estimator_nearest(arch, cluster, base, seq, version, peft, kb)
    if nearest is not None and nearest.min_gpus:
        return nearest.min_gpus, nearest
    world = cluster.gpus_per_node
    while world <= 4096:
        if world > cluster.num_gpus:
            bigger = cluster.model_copy(update={"num_gpus": world})
            layouts = _candidates(arch, bigger, base, seq, cp_goal, version, peft, None, floor_run, kb)
            if next(layouts, None) is not None:
                return world, nearest
        world *= 2
    return None, nearest


def _estimator_nearest(
    arch: ModelArch,
    cluster: Cluster,
    base: EffectiveConfig,
    seq: int,
    version: str,
    peft: bool,
    kb: KnowledgeBase,
) -> NearestFit | None:
    if unmodelled_reason(arch):
        return None
    try:
        nearest = nearest_fit(
            arch,
            cluster,
            seq_length=seq,
            global_batch_size=base.global_batch_size or cluster.num_gpus,
            mode="peft" if peft else (base.mode or "pretrain"),
            version=version,
            hardware=kb.gpu_spec(cluster.gpu_type),
            grad_reduce_in_fp32=reduces_grads_in_fp32(base.values, version, kb),
            max_gpus=4096,
            kb=kb,
        )
    except UserError:
        return None
    return nearest


def _no_plan(record: RecipeRecord, cluster: Cluster, seq: int, peft: bool, any_fit: bool, need: int | None):
    if any_fit:
        return finding(
            "no-valid-layout",
            "error",
            msg("no-valid-layout", num_gpus=cluster.num_gpus, gpu_label=cluster.gpu_label),
        )
    fewer = bool(need) and need < cluster.num_gpus  # a valid layout fits on part of these GPUs
    more = (
        msg("does-not-fit.fits_fewer", need=need)
        if fewer
        else msg("does-not-fit.need", need=need)
        if need
        else ""
    )
    advice = (
        "does-not-fit.even_peft" if peft else "does-not-fit.other_count" if fewer else "does-not-fit.add_gpus"
    )
    return finding(
        "does-not-fit",
        "error",
        msg(
            "does-not-fit",
            name=record.name,
            num_gpus=cluster.num_gpus,
            gpu=cluster.gpu_label,
            seq=seq,
            advice=msg(advice),
            more=more,
        ),
        upstream_error=None,
        fix=f"--gpus {need}" if need else None,
    )


def _finish(
    record: RecipeRecord,
    arch: ModelArch,
    cluster: Cluster,
    base: EffectiveConfig,
    layout: _Layout,
    seq: int,
    version: str,
    mode: str | None,
    kb: KnowledgeBase,
) -> ResizeResult | None:
    """Turn one candidate layout into overrides + plan, or None if validate() rejects it."""
    recipe_pp = base.pp
    split_extra = sum(bool(base.values.get(flag)) for flag in SPLIT_LAYER_FLAGS)
    vp = choose_vp(arch.num_layers, layout.pp, base.vp, recipe_pp, split_extra)
    sp = layout.tp > 1 and not tensor_parallel_only(arch)
    wanted: dict[str, Any] = {
        "tp": layout.tp,
        "pp": layout.pp,
        "vp": vp,
        "cp": layout.cp,
        "ep": layout.ep,
        "sp": sp,
        "mbs": layout.mbs,
        "gbs": layout.gbs,
    }
    current = {
        "tp": base.tp,
        "pp": base.pp,
        "vp": base.vp,
        "cp": base.cp,
        "ep": base.ep,
        "sp": base.sp,
        "mbs": base.micro_batch_size,
        "gbs": layout.runner_gbs,
    }
    weak = weak_scaling(record, version, base.user_overrides)
    facts = {
        "groups": arch.num_query_groups or arch.num_attention_heads,
        "gpu": cluster.gpu_type,
        "seq": seq,
        "world": cluster.num_gpus,
        "experts": arch.num_moe_experts or 0,
        "old": base.global_batch_size,
        "layers": arch.num_layers,
        "pp": layout.pp,
        "dp": cluster.num_gpus // (layout.tp * layout.pp * layout.cp),
        "dp_old": weak.dp if weak else None,
        "scaled": layout.runner_gbs,
    }
    overrides: list[Override] = []
    if seq != base.seq_length:
        overrides.append(_override("dataset.seq_length", seq, "seq"))
        overrides.append(_override("model.seq_length", seq, "seq"))
    for key, value in base.user_overrides.items():
        if key not in _KEYS.values():
            overrides.append(_override(key, value, "user"))
    for name, value in wanted.items():
        if value == current[name] and _KEYS[name] not in base.user_overrides:
            continue
        reason = name
        if _KEYS[name] in base.user_overrides and value == current[name]:
            reason = "user"
        elif name == "gbs" and weak is not None and current[name] is None:
            reason = "gbs_weak_fraction"
        elif name == "gbs" and weak is not None:
            reason = "gbs_weak_uneven"  # the launcher's scaled GBS is whole, but MBS·DP does not divide it
        elif current[name] is None and name in ("mbs", "gbs"):
            reason = "unknown_batch"
        elif name == "pp" and value == 1:
            reason = "pp1"
        elif name == "vp" and value is None:
            reason = "vp_none" if layout.pp <= 1 else "vp_uneven"
        elif name == "cp" and value < target_cp(base.seq_length, base.cp, seq):
            reason = "cp_small"
        overrides.append(_override(_KEYS[name], value, reason, **facts))
    is_finetune = mode in ("sft", "peft") or base.is_peft
    config_pairs = {item.key: item.value for item in overrides}
    loss_fixed_by_runner = traits(version).runner_syncs_finetune_cp
    needs_loss_settings = not base.calculate_per_token_loss or base.average_in_collective
    if is_finetune and layout.cp > 1 and needs_loss_settings and not loss_fixed_by_runner:
        for key, value in (("model.calculate_per_token_loss", True), ("ddp.average_in_collective", False)):
            overrides.append(_override(key, value, "cp_loss"))
            config_pairs[key] = value
    for item in _checkpoint_overrides(base, mode):
        overrides.append(item)
        config_pairs[item.key] = item.value
    overrides = list({item.key: item for item in overrides}.values())
    merged = {**base.user_overrides, **config_pairs}
    config = build_config(record, merged, version=version)
    if mode and config.mode != mode and mode in ("pretrain", "sft", "peft"):
        config = config.model_copy(update={"mode": mode})
    findings = validate(config, arch, cluster, version, gpu=kb.gpu_spec(cluster.gpu_type))
    if has_errors(findings):
        return None
    plan = Plan.sized(
        num_gpus=cluster.num_gpus,
        tp=layout.tp,
        pp=layout.pp,
        cp=layout.cp,
        mbs=layout.mbs,
        gbs=layout.gbs,
        vp=vp,
        ep=layout.ep,
        etp=effective_etp(layout.etp, layout.tp, layout.ep, version) if arch.num_moe_experts else None,
        sp=sp,
    )
    fit = estimate_fit(record, arch, plan, cluster, config, kb=kb)
    if fit.status == "unknown" and not estimable(arch):
        findings.append(
            finding(
                "fit-unknown", "info", msg("fit-unknown", note=Localized(fit.note, fit.note_zh or fit.note))
            )
        )
    elif fit.status == "unknown":
        # The full estimate failed for this run: give the estimator's floor for the layout instead.
        peak = memory_floor(
            arch, tp=plan.tp, pp=plan.pp, cp=plan.cp, ep=plan.ep or 1, etp=plan.etp or plan.tp,
            world=plan.num_gpus, micro_batch_size=plan.mbs, microbatches=plan.ga,
            run=fit_run_settings(record, config, kb=kb).but(seq_length=seq),
        )  # fmt: skip
        findings.append(
            finding(
                "fit-unknown",
                "info",
                msg(
                    "fit-unknown.heuristic",
                    note=Localized(fit.note, fit.note_zh or fit.note),
                    peak_gb=peak / 1e9,
                    usable_gb=kb.gpu_spec(cluster.gpu_type).usable_bytes / 1e9,
                ),
            )
        )
    if fit.status == "does-not-fit":
        need, have = fit.peak_bytes / 1e9, fit.usable_bytes / 1e9
        lower_mbs = plan.mbs > 1
        advice = "fit-oom.lower_mbs" if lower_mbs else "fit-oom.mbs_is_one"
        fix: str | None = "train.micro_batch_size=1" if lower_mbs else "model.recompute_granularity=full"
        if tensor_parallel_only(arch):  # FLUX: recompute has no effect on its blocks
            advice, fix = "fit-oom.flux", "train.micro_batch_size=1" if lower_mbs else None
        findings.append(
            finding(
                "fit-oom",
                "warning",
                msg("fit-oom", need=need, have=have, advice=msg(advice)),
                fix=fix,
            )
        )
    return ResizeResult(plan=plan, overrides=overrides, findings=findings, config=config, fit=fit)
