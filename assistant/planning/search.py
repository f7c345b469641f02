"""Parallelism search: enumerate valid layouts, drop those that do not fit, rank by estimated speed.

The rules gate the candidates and the estimators rank them; the GPU, calibration and overheads come from
the caller or its KnowledgeBase.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import fields
from itertools import product
from operator import attrgetter
from typing import Any

from pydantic import Field

from assistant.catalog import default_version
from assistant.estimate.features import RunFeatures
from assistant.estimate.hardware import GIB, GpuSpec
from assistant.estimate.memory import (
    MemoryEstimate,
    MemoryOverheads,
    chunk_sizes,
    estimate_memory,
    weight_bytes,
)
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import dims_of, mix_params, whole_model
from assistant.estimate.throughput import Calibration, ThroughputEstimate, estimate_throughput, precision_key
from assistant.kb import KnowledgeBase
from assistant.records import Cluster, Finding, ModelArch, Plan, Record
from assistant.rules.config import EffectiveConfig
from assistant.rules.findings import mamba_tp_allowed
from assistant.rules.validate import (
    EMBEDDING_SPLIT_FLAG,
    FIRST_STAGE_LAYERS,
    FLEXIBLE_LAYOUT_KEYS,
    LAST_STAGE_LAYERS,
    LOSS_SPLIT_FLAG,
    PIPELINE_LAYOUT,
    validate,
)

# Rule findings about data, checkpoints or flags that a layout change cannot cause or cure.
NOT_LAYOUT_FINDINGS = frozenset(
    {
        "peft-checkpoint",
        "dataset-flag",
        "dataset-unknown",
        "mode-dataset",
        "override-section",
        "finetune-cp-loss",
        "seq-length-sync",
    }
)
MICRO_BATCHES = (1, 2, 4, 8)
BLOCK_SCALED = frozenset({"mxfp8", "nvfp4"})  # precision_key values with per-block scaling factors
LAYOUT_VP_SIZES = (
    2,
    3,
    4,
    6,
    8,
    12,
    16,
)  # VP sizes tried with an explicit layout when no flag evens the split
FSDP_FLAGS = {
    "ddp.use_megatron_fsdp": True,
    "dist.use_megatron_fsdp": True,
    "ddp.data_parallel_sharding_strategy": "optim_grads_params",
    "checkpoint.ckpt_format": "fsdp_dtensor",
}


def recompute_options(arch: ModelArch) -> list[tuple[str | None, list[str] | None]]:
    """Recompute settings from cheapest to most memory-saving. The selective module lists follow what the
    Megatron-Bridge perf recipes use: norms, MLA up-projections and MoE activations first (cheap to redo),
    then the dense MLP or the whole MoE block, then full recompute."""
    light = ["layernorm"] + (["mla_up_proj"] if arch.multi_latent_attention else [])
    light += ["moe_act"] if arch.num_moe_experts else []
    heavy = light + (["moe"] if arch.num_moe_experts else ["mlp"])
    return [(None, None), ("selective", light), ("selective", heavy), ("full", None)]


class RankedLayout(Record):
    rank: int
    plan: Plan
    fsdp: bool = False  # Megatron-FSDP shards parameters, gradients and optimizer state over DP·CP
    recompute: str | None
    recompute_modules: list[str] | None = None
    offload_layers: int = 0  # layers whose activations wait in host memory (Megatron's CPU offloading)
    overrides: dict[str, Any] = Field(default_factory=dict)
    memory: MemoryEstimate
    throughput: ThroughputEstimate
    reasons: list[str] = Field(default_factory=list)


def _powers_of_two(limit: int) -> list[int]:
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def _pipeline_splits(layers: int, limit: int, hybrid: bool = False) -> list[tuple[int, int | None]]:
    """(PP, VP) pairs to try: every split Megatron makes even (with the account_for_* flags or first/last
    stage sizes), plus the usual VP sizes through an explicit pipeline layout. A Mamba hybrid gets only the
    splits that need none of those settings (they describe transformer layers, not a hybrid pattern)."""
    pairs: list[tuple[int, int | None]] = [(1, None)]
    for pp in _powers_of_two(min(limit, layers + 2)):
        if pp == 1:
            continue
        for vp in range(1, (layers + 2) // pp + 1):
            split = split_overrides(layers, pp, vp if vp > 1 else None)
            if split is None or (hybrid and split):
                continue
            if PIPELINE_LAYOUT not in split or vp in LAYOUT_VP_SIZES:
                pairs.append((pp, vp if vp > 1 else None))
    return pairs


def split_overrides(layers: int, pp: int, vp: int | None) -> dict[str, Any] | None:
    """The settings that split `layers` over PP stages of VP chunks each (sizes from memory.chunk_sizes):
    {} when even; the account_for_* flags when counting the embedding and/or loss as a layer evens it;
    without VP, explicit first/last stage sizes when the inner stages are equal; otherwise an explicit
    pipeline layout. None when there are more chunks than layers (plus embedding and loss)."""
    chunks = pp * (vp or 1)
    if chunks > layers + 2:
        return None
    if layers % chunks == 0:
        return {}
    if (layers + 1) % chunks == 0:
        return {EMBEDDING_SPLIT_FLAG: True}
    if (layers + 2) % chunks == 0:
        return {EMBEDDING_SPLIT_FLAG: True, LOSS_SPLIT_FLAG: True}
    sizes = chunk_sizes(layers, chunks)
    if vp is None and pp > 2 and len(set(sizes[1:-1])) == 1:
        return {FIRST_STAGE_LAYERS: sizes[0], LAST_STAGE_LAYERS: sizes[-1]}
    return {PIPELINE_LAYOUT: pipeline_layout(layers, chunks)}


def pipeline_layout(layers: int, chunks: int) -> str:
    """An explicit Megatron pipeline_model_parallel_layout: `chunks` model chunks separated by "|", the
    embedding (E) in the first and the loss (L) in the last, transformer layers (t) as memory.chunk_sizes
    spreads them."""
    parts = [f"t*{n}" if n > 1 else "t" * n for n in chunk_sizes(layers, chunks)]
    parts[0] = "E" + parts[0]
    parts[-1] = parts[-1] + "L"
    return "|".join(parts)


def layout_overrides(
    plan: Plan,
    arch: ModelArch,
    recompute: str | None,
    modules: list[str] | None = None,
    fsdp: bool = False,
    offload_layers: int = 0,
) -> dict[str, Any]:
    """The Megatron-Bridge config keys that select this layout (what a user passes as overrides)."""
    out: dict[str, Any] = {
        "model.tensor_model_parallel_size": plan.tp,
        "model.pipeline_model_parallel_size": plan.pp,
        "model.virtual_pipeline_model_parallel_size": plan.vp,
        "model.context_parallel_size": plan.cp,
        "model.sequence_parallel": plan.sp,
        "train.micro_batch_size": plan.mbs,
        "train.global_batch_size": plan.gbs,
        "model.recompute_granularity": recompute,
    }
    if modules:
        out["model.recompute_modules"] = modules
    if arch.num_moe_experts:
        out["model.expert_model_parallel_size"] = plan.ep
        out["model.expert_tensor_parallel_size"] = plan.etp
    out.update(split_overrides(arch.num_layers, plan.pp, plan.vp) or {})
    if fsdp:
        out.update(FSDP_FLAGS)
    if offload_layers:
        out.update(
            {
                "model.cpu_offloading": True,
                "model.cpu_offloading_weights": False,
                "model.cpu_offloading_num_layers": offload_layers,
            }
        )
    return out


def layout_config(
    plan: Plan,
    seq_length: int,
    *,
    mode: str,
    precision: str,
    version: str | None = None,
    values: dict[str, Any] | None = None,
    recipe: str = "parallelism-search",
) -> EffectiveConfig:
    """The effective config the rule module checks for a layout that no recipe spells out."""
    return EffectiveConfig(
        recipe=recipe,
        version=version or default_version(),
        mode=mode,
        tp=plan.tp,
        pp=plan.pp,
        vp=plan.vp,
        cp=plan.cp,
        ep=plan.ep,
        etp=plan.etp,
        sp=plan.sp,
        seq_length=seq_length,
        global_batch_size=plan.gbs,
        micro_batch_size=plan.mbs,
        precision=precision,
        values=values or {},
    )


def layout_findings(
    config: EffectiveConfig, arch: ModelArch, cluster: Cluster, *, gpu: GpuSpec
) -> list[Finding]:
    """The rule module's findings about a layout on these GPUs, without the data and checkpoint rules a
    layout change cannot cause or cure."""
    found = validate(config, arch, cluster, config.version, gpu=gpu)
    return [f for f in found if f.id not in NOT_LAYOUT_FINDINGS]


def is_valid_layout(
    plan: Plan,
    arch: ModelArch,
    cluster: Cluster,
    seq_length: int,
    *,
    mode: str = "pretrain",
    precision: str = "bf16",
    version: str | None = None,
    gpu: GpuSpec,
) -> bool:
    """True when the rule module's validate() finds no error for this layout (the one gate for candidates)."""
    if plan.tp * plan.pp * plan.cp * plan.dp != cluster.num_gpus or plan.gbs != plan.mbs * plan.dp * plan.ga:
        return False
    key = (
        _fields(plan),
        _content(arch),
        _fields(cluster),
        seq_length,
        mode,
        precision,
        version,
        _content(gpu),
    )
    found = _VALID_MEMO.get(key)
    if found is None:
        splits = {k: v for k, v in layout_overrides(plan, arch, None).items() if k in FLEXIBLE_LAYOUT_KEYS}
        config = layout_config(
            plan, seq_length, mode=mode, precision=precision, version=version, values=splits
        )
        found = not any(f.severity == "error" for f in layout_findings(config, arch, cluster, gpu=gpu))
        _remember(_VALID_MEMO, key, found)
    return found


def memory_of(
    arch: ModelArch, plan: Plan, hw: GpuSpec, run: RunSettings, overheads: MemoryOverheads
) -> MemoryEstimate:
    """estimate_memory, memoised for identical inputs (a pure function the search calls thousands of
    times; a long-running front end asks the same layouts again)."""
    key = (_content(arch), _fields(plan), _content(hw), _settings(run), _content(overheads))
    found = _MEMORY_MEMO.get(key)
    if found is None:
        found = estimate_memory(arch, plan, hw, run, overheads=overheads)
        _remember(_MEMORY_MEMO, key, found)
    return found


def speed_of(
    arch: ModelArch, plan: Plan, hw: GpuSpec, run: RunSettings, calibration: Calibration
) -> ThroughputEstimate:
    """estimate_throughput, memoised like memory_of."""
    key = (_content(arch), _fields(plan), _content(hw), _settings(run), _content(calibration))
    found = _SPEED_MEMO.get(key)
    if found is None:
        found = estimate_throughput(arch, plan, hw, run, calibration=calibration)
        _remember(_SPEED_MEMO, key, found)
    return found


# Bounded memo tables of is_valid_layout, memory_of and speed_of (a dict keeps insertion order: the oldest
# entry goes first). Keys hold the inputs' contents, so equal inputs built anew still hit.
_VALID_MEMO: dict[tuple, bool] = {}
_MEMORY_MEMO: dict[tuple, MemoryEstimate] = {}
_SPEED_MEMO: dict[tuple, ThroughputEstimate] = {}
MEMO_SIZE = 32768
_CONTENT: dict[int, tuple[weakref.ref, str]] = {}


def _remember(memo: dict, key: tuple, value: object) -> None:
    if len(memo) >= MEMO_SIZE:
        del memo[next(iter(memo))]
    memo[key] = value


def _fields(record: Plan | Cluster) -> tuple:
    """A small record's field values (pydantic keeps them in __dict__), cheaper than its JSON."""
    return tuple(record.__dict__.values())


def _content(record: Record) -> str:
    """The full repr of a long-lived record (architecture, GPU, calibration, features), computed once per
    object: records are never changed in place here (model_copy makes a new one). repr, not JSON: it keeps
    the fields a dump excludes (RunFeatures.te_cross_entropy, lora_targets), which change the memory."""
    known = _CONTENT.get(id(record))
    if known is not None and known[0]() is record:
        return known[1]
    if len(_CONTENT) >= MEMO_SIZE:
        _CONTENT.clear()
    text = repr(record)
    _CONTENT[id(record)] = (weakref.ref(record), text)
    return text


def _settings(run: RunSettings) -> tuple:
    """RunSettings as a hashable key: its module list becomes a tuple, its features their repr (a field of
    another unhashable type would fail loudly here, not be confused)."""
    values = list(_SETTING_VALUES(run))
    if values[_MODULES] is not None:
        values[_MODULES] = tuple(values[_MODULES])
    values[_FEATURES] = _content(values[_FEATURES])
    return tuple(values)


_SETTING_NAMES = tuple(f.name for f in fields(RunSettings))
_SETTING_VALUES = attrgetter(*_SETTING_NAMES)
_MODULES, _FEATURES = _SETTING_NAMES.index("recompute_modules"), _SETTING_NAMES.index("features")


def static_floor_bytes(arch: ModelArch, run: RunSettings, num_gpus: int, overheads: MemoryOverheads) -> float:
    """A peak no layout on `num_gpus` GPUs goes below: the non-expert weights, their gradients and optimizer
    state spread perfectly over every GPU, with the fixed overheads (estimate_memory never shards them
    finer: TP·PP·CP·DP = the GPU count; expert weights, activations and logits only add). The fewest-GPUs
    loop skips the counts whose floor already exceeds the usable memory without enumerating a layout."""
    d = dims_of(arch)
    dense = mix_params(d, whole_model(d))
    params = dense.tp_sharded + dense.replicated + d.hidden * d.vocab
    state = weight_bytes(run)
    if run.mode != "peft":  # LoRA trains adapters only: the frozen weights have no gradient or state
        state += 4.0 if run.grad_reduce_in_fp32 else 2.0
        state += run.optimizer_bytes or (8.0 if run.precision_aware_optimizer else 12.0)
    allocated = state * params / num_gpus
    return allocated * (1 + overheads.fragmentation) + overheads.non_torch_gib * GIB


def _candidates(
    arch: ModelArch,
    cluster: Cluster,
    hw: GpuSpec,
    *,
    seq_length: int,
    global_batch_size: int,
    mode: str,
    precision: str,
    version: str | None,
    max_tp: int,
    worth: Callable[[Plan], bool] | None = None,
) -> Iterator[Plan]:
    """Every layout the rule module accepts for this model, GPU count, sequence length and global batch.
    `worth`, when given, is asked before the (dearer) rule module, and a layout it turns down goes
    unvalidated; its micro-batch sizes are tried smallest first and the larger ones skipped once one is
    turned down (memory only grows with the micro batch)."""
    d = dims_of(arch)
    gpus = cluster.num_gpus
    rules_cluster = cluster.model_copy(update={"gpu_type": hw.key})
    tps = [
        t
        for t in _powers_of_two(min(max_tp, gpus, hw.nvlink_domain))
        if d.heads % t == 0 and (d.other is None or d.other.heads % t == 0) and mamba_tp_allowed(arch, t)
    ]
    cps = [c for c in _powers_of_two(min(16, gpus)) if c == 1 or seq_length >= 4096 * c]
    eps = _powers_of_two(min(d.experts, gpus)) if d.experts else [1]
    splits = _pipeline_splits(d.layers, gpus, hybrid=arch.is_hybrid)
    for (pp, vp), tp, cp in product(splits, tps, cps):
        if gpus % (tp * pp * cp):
            continue
        dp = gpus // (tp * pp * cp)
        turned_down: set[int] = set()
        for ep, mbs in product(eps, MICRO_BATCHES):
            if global_batch_size % (mbs * dp) or ep in turned_down:
                continue
            plan = Plan.sized(
                num_gpus=gpus,
                tp=tp,
                pp=pp,
                cp=cp,
                mbs=mbs,
                gbs=global_batch_size,
                vp=vp,
                ep=ep,
                etp=(1 if ep > 1 else tp) if d.experts else None,
                sp=tp > 1,
            )
            if worth is not None and not worth(plan):
                turned_down.add(ep)
                continue
            if is_valid_layout(
                plan, arch, rules_cluster, seq_length, mode=mode, precision=precision, version=version, gpu=hw
            ):
                yield plan


def _defaults(
    cluster: Cluster,
    kb: KnowledgeBase,
    hardware: GpuSpec | None,
    calibration: Calibration | None,
    overheads: MemoryOverheads | None,
) -> tuple[GpuSpec, Calibration, MemoryOverheads]:
    """The data the caller did not pass, from the knowledge base."""
    return (
        hardware or kb.gpu_spec(cluster.gpu_type),
        calibration or kb.calibration,
        overheads or kb.memory_overheads,
    )


def search_layouts(
    arch: ModelArch,
    cluster: Cluster,
    *,
    seq_length: int,
    global_batch_size: int,
    mode: str = "pretrain",
    precision: str = "bf16",
    top_k: int = 5,
    hardware: GpuSpec | None = None,
    version: str | None = None,
    calibration: Calibration | None = None,
    overheads: MemoryOverheads | None = None,
    grad_reduce_in_fp32: bool = True,
    max_tp: int = 8,
    features: RunFeatures | None = None,
    kb: KnowledgeBase,
) -> list[RankedLayout]:
    """The `top_k` fastest distinct (TP, PP, CP, EP, FSDP) layouts that fit, each with its best VP,
    micro-batch size and recompute setting, under the given performance features. Empty when nothing fits
    (see `nearest_fit`)."""
    hardware, calibration, overheads = _defaults(cluster, kb, hardware, calibration, overheads)
    run = RunSettings(
        seq_length=seq_length,
        mode=mode,
        precision=precision,
        grad_reduce_in_fp32=grad_reduce_in_fp32,
        gpus_per_node=cluster.gpus_per_node,
        features=features or RunFeatures(),
    )
    best: dict[tuple, tuple[float, RankedLayout]] = {}
    for plan in _candidates(
        arch,
        cluster,
        hardware,
        seq_length=seq_length,
        global_batch_size=global_batch_size,
        mode=mode,
        precision=precision,
        version=version,
        max_tp=max_tp,
    ):
        _try_recompute(arch, plan, hardware, run, calibration, overheads, best)
    candidates = without_idle_splits([item[1] for item in best.values()], calibration.median_error)
    found = fsdp_only_as_last_resort(candidates, precision)
    layouts = rank_with_ties(found, calibration.median_error)[:top_k]
    explained = [_explain(i, x, layouts[0], calibration.median_error) for i, x in enumerate(layouts)]
    if explained and len(found) < len(candidates):
        note = (
            f"Megatron-FSDP is not proposed in {precision.upper()} while another layout fits (Bridge's perf "
            "recipes use it with BF16 and FP8 current scaling only)"
        )
        explained[0] = explained[0].model_copy(update={"reasons": [*explained[0].reasons, note]})
    return explained


def without_idle_splits(layouts: list[RankedLayout], tie_band: float) -> list[RankedLayout]:
    """Drop a layout when its twin with half the split fits and is no slower beyond `tie_band`; listing both
    would fill the top of the ranking with twins that the estimate cannot tell apart. Two splits buy only
    memory the twin already shows it does not need:
    - context parallelism (CP>1) adds a ring exchange on every layer; it exists to fit long sequences;
    - tensor parallelism under Megatron-FSDP (TP>1), which already shards weights, gradients and optimizer
      state over every data-parallel rank, so TP only trims activations and adds its per-sublayer exchange."""

    def key(layout: RankedLayout, tp: int, cp: int) -> tuple:
        return (tp, layout.plan.pp, cp, layout.plan.ep, layout.fsdp)

    speed = {key(x, x.plan.tp, x.plan.cp): x.throughput.tokens_per_sec_per_gpu for x in layouts}

    def twins(layout: RankedLayout) -> list[tuple]:
        plan = layout.plan
        halves = [key(layout, plan.tp, plan.cp // 2)] if plan.cp > 1 else []
        if layout.fsdp and plan.tp > 1:
            halves.append(key(layout, plan.tp // 2, plan.cp))
        return halves

    def idle(layout: RankedLayout) -> bool:
        floor = layout.throughput.tokens_per_sec_per_gpu * (1 - tie_band)
        return any(speed.get(twin, 0.0) >= floor for twin in twins(layout))

    return [x for x in layouts if not idle(x)]


def fsdp_only_as_last_resort(layouts: list[RankedLayout], precision: str) -> list[RankedLayout]:
    """With block-scaled formats (MXFP8, NVFP4), keep Megatron-FSDP layouts only when no other layout fits.
    Bridge's perf recipes pair Megatron-FSDP with BF16 and FP8 current scaling and switch the same models to
    pipeline layouts for MXFP8 and NVFP4, and Megatron-FSDP shards the 32-element scaling blocks across
    ranks, which takes a second amax reduction and its own kernels (Megatron-FSDP's mfsdp_design.md): a cost
    the estimate does not model and no published row measures."""
    if precision_key(precision) not in BLOCK_SCALED:
        return layouts
    plain = [x for x in layouts if not x.fsdp]
    return plain or layouts


def rank_with_ties(layouts: list[RankedLayout], tie_band: float) -> list[RankedLayout]:
    """Fastest first; the layouts within `tie_band` (the estimator's median error) of the fastest are
    indistinguishable by the estimate, so among them the one that splits each layer over fewer GPUs comes
    first (TP·CP: tensor and context parallelism both exchange activations inside every layer), then the
    faster."""

    def speed(layout: RankedLayout) -> float:
        return layout.throughput.tokens_per_sec_per_gpu

    by_speed = sorted(layouts, key=speed, reverse=True)
    if not by_speed:
        return by_speed
    floor = speed(by_speed[0]) * (1 - tie_band)
    ties = [x for x in by_speed if speed(x) >= floor]
    return sorted(ties, key=lambda x: (layer_split(x.plan), -speed(x))) + by_speed[len(ties) :]


def layer_split(plan: Plan) -> int:
    """How many GPUs share one layer's work on one sequence: TP·CP."""
    return plan.tp * plan.cp


# How many ranked layouts a GPU count is searched for, to find one with headroom behind a tight fastest one.
ROOM_CANDIDATES = 10
# A layout the assistant recommends leaves this share of the usable memory free, or is called tight.
HEADROOM = 0.05


def has_room(memory: MemoryEstimate) -> bool:
    """At least HEADROOM of the usable memory is left by the estimate."""
    return memory.margin_bytes >= HEADROOM * memory.usable_bytes


def roomiest_first(layouts: list[RankedLayout]) -> RankedLayout | None:
    """The first (fastest-ranked) layout with headroom, else the first: a tight plan only if nothing else."""
    return next((x for x in layouts if has_room(x.memory)), layouts[0] if layouts else None)


class NearestFit(Record):
    """What to do when nothing fits: how far off the leanest layout is, and the fewest GPUs that fit."""

    fits: bool
    best_here: RankedLayout | None = None  # when some layout fits these GPUs: the fastest that does
    leanest: RankedLayout | None = None  # smallest peak memory on the given GPUs (full recompute)
    min_gpus: int | None = None  # the fewest GPUs any valid layout fits on, fewer than asked included
    min_gpus_layout: RankedLayout | None = None
    # When the fewest GPUs fit within the estimator's error (MemoryEstimate.tight): the fewest that leave
    # more than that error free, and their layout.
    room_gpus: int | None = None
    room_layout: RankedLayout | None = None


def gpu_counts_to_try(asked: int, per_node: int, max_gpus: int) -> list[int]:
    """GPU counts for "the fewest that fit", ascending: fewer than asked (any count inside a node, whole
    nodes above), then powers of two inside a node and doubling whole nodes above the count asked."""
    below = [c for c in range(1, asked) if c <= per_node or c % per_node == 0]
    above = {c for c in _powers_of_two(per_node) if c > asked}
    count = per_node
    while count <= max_gpus:
        if count > asked:
            above.add(count)
        count *= 2
    return below + sorted(above)


def nearest_fit(
    arch: ModelArch,
    cluster: Cluster,
    *,
    seq_length: int,
    global_batch_size: int,
    mode: str = "pretrain",
    precision: str = "bf16",
    hardware: GpuSpec | None = None,
    version: str | None = None,
    calibration: Calibration | None = None,
    overheads: MemoryOverheads | None = None,
    grad_reduce_in_fp32: bool = True,
    max_gpus: int = 16384,
    features: RunFeatures | None = None,
    kb: KnowledgeBase,
) -> NearestFit:
    """A quantified answer to "does it fit here?": the leanest layout's margin, and the smallest GPU count
    (doubling from this one, whole nodes) whose best layout fits."""
    hardware, calibration, overheads = _defaults(cluster, kb, hardware, calibration, overheads)
    common = {
        "seq_length": seq_length,
        "global_batch_size": global_batch_size,
        "mode": mode,
        "precision": precision,
        "hardware": hardware,
        "version": version,
        "calibration": calibration,
        "overheads": overheads,
        "grad_reduce_in_fp32": grad_reduce_in_fp32,
        "features": features,
        "kb": kb,
    }

    def candidates(on: Cluster, worth: Callable[[Plan], bool] | None = None) -> Iterator[Plan]:
        return _candidates(
            arch,
            on,
            hardware,
            seq_length=seq_length,
            global_batch_size=global_batch_size,
            mode=mode,
            precision=precision,
            version=version,
            max_tp=8,
            worth=worth,
        )

    run = RunSettings(
        seq_length=seq_length,
        mode=mode,
        precision=precision,
        grad_reduce_in_fp32=grad_reduce_in_fp32,
        gpus_per_node=cluster.gpus_per_node,
        features=features or RunFeatures(),
    )

    def full_recompute_memory(plan: Plan, fsdp: bool) -> MemoryEstimate:
        return memory_of(arch, plan, hardware, run.but(recompute="full", fsdp=fsdp), overheads)

    def leanest_fits(plan: Plan, fsdp: bool) -> bool:
        """Full recompute, or offloading all layers but one where the search proposes it, are the leanest
        settings the search tries."""
        if full_recompute_memory(plan, fsdp).fits:
            return True
        return offload_allowed(plan, fsdp, features) and (
            fewest_offload_layers(arch, plan, hardware, overheads, run.but(fsdp=fsdp)) is not None
        )

    def something_fits(on: Cluster) -> bool:
        """When no layout fits with its leanest setting, the (much dearer) ranked search would find nothing
        either."""
        def leanest_of_some_fits(plan: Plan) -> bool:
            return any(leanest_fits(plan, fsdp) for fsdp in fsdp_options(arch, plan))

        return any(True for _ in candidates(on, worth=leanest_of_some_fits))

    leanest: RankedLayout | None = None
    fits_here = False
    for plan in candidates(cluster):
        memory = full_recompute_memory(plan, False)  # the leanest plain layout (offloading needs FSDP)
        fits_here = (
            fits_here or memory.fits or any(leanest_fits(plan, True) for _ in fsdp_options(arch, plan)[1:])
        )
        if leanest is None or memory.peak_bytes < leanest.memory.peak_bytes:
            # The leanest layout's speed is estimated with gradients reduced in fp32 whatever the recipe sets.
            leanest_run = run.but(recompute="full", grad_reduce_in_fp32=True)
            speed = speed_of(arch, plan, hardware, leanest_run, calibration)
            leanest = RankedLayout(
                rank=1,
                plan=plan,
                recompute="full",
                memory=memory,
                throughput=speed,
                overrides=layout_overrides(plan, arch, "full"),
            )
    found_here = search_layouts(arch, cluster, top_k=ROOM_CANDIDATES, **common) if fits_here else []
    if found_here:
        return NearestFit(fits=True, best_here=roomiest_first(found_here))
    smallest: tuple[int, RankedLayout] | None = None
    for gpus in gpu_counts_to_try(cluster.num_gpus, cluster.gpus_per_node, max_gpus):
        if static_floor_bytes(arch, run, gpus, overheads) > hardware.usable_bytes:
            continue  # not even the weights and optimizer state fit, whatever the layout
        other = cluster.model_copy(update={"num_gpus": gpus})
        found = search_layouts(arch, other, top_k=ROOM_CANDIDATES, **common) if something_fits(other) else []
        best = roomiest_first(found)
        if best is None:
            continue
        if smallest is None:
            smallest = (gpus, best)
        roomy = next((x for x in found if not x.memory.tight), None)
        if roomy is not None:
            room = {} if smallest[1] is roomy else {"room_gpus": gpus, "room_layout": roomy}
            return NearestFit(fits=False, leanest=leanest, min_gpus=smallest[0],
                              min_gpus_layout=smallest[1], **room)  # fmt: skip
    if smallest is not None:
        return NearestFit(fits=False, leanest=leanest, min_gpus=smallest[0], min_gpus_layout=smallest[1])
    return NearestFit(fits=False, leanest=leanest)


def fsdp_options(arch: ModelArch, plan: Plan) -> tuple[bool, ...]:
    """Megatron-FSDP is proposed for dense models without pipeline parallelism (how Bridge's perf recipes
    use it), where there is a data-parallel group to shard over."""
    useful = plan.pp == 1 and not arch.num_moe_experts and plan.dp * plan.cp > 1
    return (False, True) if useful else (False,)


def offload_allowed(plan: Plan, fsdp: bool, features: RunFeatures | None) -> bool:
    """CPU activation offloading is proposed with Megatron-FSDP (how Bridge's perf recipes use it), which
    Megatron-Core allows only without pipeline parallelism and without per-layer CUDA graphs."""
    return fsdp and plan.pp == 1 and (features is None or features.cuda_graph != "partial")


def fewest_offload_layers(
    arch: ModelArch, plan: Plan, hw: GpuSpec, ov: MemoryOverheads, run: RunSettings
) -> tuple[int, MemoryEstimate] | None:
    """The fewest layers to offload (no recompute) for the layout to fit in GPU memory, if the host memory
    holds them (the fewest is also the least host memory), with that memory estimate; None when no count
    fits both."""

    def memory(layers: int) -> MemoryEstimate:
        return memory_of(arch, plan, hw, run.but(offload_layers=layers), ov)

    def gpu_fits(layers: int) -> bool:
        estimate = memory(layers)
        return estimate.peak_bytes <= estimate.usable_bytes

    low, high = 1, arch.num_layers - 1
    if high < 1 or not gpu_fits(high):
        return None
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if gpu_fits(middle) else (middle + 1, high)
    estimate = memory(low)
    return (low, estimate) if estimate.fits else None


def _try_recompute(
    arch: ModelArch,
    plan: Plan,
    hw: GpuSpec,
    run: RunSettings,
    cal: Calibration,
    ov: MemoryOverheads,
    best: dict[tuple, tuple[float, RankedLayout]],
) -> None:
    """Keep the fastest (VP, micro-batch, recompute or CPU offloading) that fits, per distinct (TP, PP, CP,
    EP, FSDP) layout. Offloading is weighed against the cheapest recompute that fits: over a fast host link
    (NVLink-C2C) it hides behind compute, over PCIe it often does not."""
    for fsdp in fsdp_options(arch, plan):
        key = (plan.tp, plan.pp, plan.cp, plan.ep, fsdp)
        tried: list[tuple[str | None, list[str] | None, int, MemoryEstimate]] = []
        for recompute, modules in recompute_options(arch):
            attempt = run.but(recompute=recompute, recompute_modules=modules, fsdp=fsdp)
            memory = memory_of(arch, plan, hw, attempt, ov)
            if memory.fits:
                tried.append((recompute, modules, 0, memory))
                break  # later options only recompute more: same layout, slower
            if memory.peak_bytes - memory.breakdown.activations * (1 + ov.fragmentation) > hw.usable_bytes:
                break  # what recompute cannot shrink (weights, state, logits, overheads) is already too much
        needs_relief = not tried or tried[0][0] is not None
        if needs_relief and offload_allowed(plan, fsdp, run.features):
            offloaded = fewest_offload_layers(arch, plan, hw, ov, run.but(fsdp=fsdp))
            if offloaded is not None:
                tried.append((None, None, *offloaded))
        for recompute, modules, offload, memory in tried:
            attempt = run.but(
                recompute=recompute, recompute_modules=modules, fsdp=fsdp, offload_layers=offload
            )
            speed = speed_of(arch, plan, hw, attempt, cal)
            score = speed.tokens_per_sec_per_gpu
            if key not in best or score > best[key][0]:
                layout = RankedLayout(
                    rank=0, plan=plan, fsdp=fsdp, recompute=recompute, recompute_modules=modules,
                    offload_layers=offload, memory=memory, throughput=speed,
                    overrides=layout_overrides(plan, arch, recompute, modules, fsdp, offload),
                )  # fmt: skip
                best[key] = (score, layout)


def _explain(index: int, layout: RankedLayout, leader: RankedLayout, tie_band: float) -> RankedLayout:
    """Say what costs this layout time (bubble, exposed communication, recompute) and how it compares."""
    tp_ = layout.throughput
    step = tp_.step_time_s
    comm = tp_.exposed_comm_s
    comm_total = comm.tp + comm.cp + comm.ep + comm.dp + comm.pp
    parts = {k: v for k, v in comm.to_json().items() if v > 0.005 * step}
    reasons = [
        f"{tp_.tokens_per_sec_per_gpu:,.0f} tokens/s/GPU, {tp_.model_tflops_per_gpu:,.0f} TFLOP/s/GPU "
        f"(MFU {tp_.mfu:.0%}), step {step:.2f} s",
        ("Megatron-FSDP over DP·CP; " if layout.fsdp else "")
        + f"pipeline bubble {tp_.bubble_s / step:.1%} of the step"
        + (
            f" (PP={layout.plan.pp}, VP={layout.plan.vp or 1}, {layout.plan.ga} micro-batches)"
            if layout.plan.pp > 1
            else " (no pipeline)"
        ),
        f"exposed communication {comm_total / step:.1%} of the step"
        + (" (" + ", ".join(f"{k.upper()} {v:.3f} s" for k, v in parts.items()) + ")" if parts else ""),
        f"recompute: {layout.recompute or 'none'}"
        + (f" {layout.recompute_modules}" if layout.recompute_modules else "")
        + (
            f", CPU offloading of {layout.offload_layers} layers' activations"
            + (f" (adds {tp_.offload_s / step:.1%} of the step)" if tp_.offload_s else " (hidden by compute)")
            if layout.offload_layers
            else ""
        )
        + (f", adds {tp_.recompute_s / step:.1%} of the step" if tp_.recompute_s else "")
        + f"; memory {layout.memory.peak_bytes / GIB:.1f} of {layout.memory.usable_bytes / GIB:.0f} GiB"
        + (" (tight: inside the estimator's ~10% error)" if layout.memory.tight else ""),
    ]
    if index:
        slower = 1 - tp_.tokens_per_sec_per_gpu / leader.throughput.tokens_per_sec_per_gpu
        if slower < 0:
            reasons.append(
                f"{-slower:.1%} faster than the top layout by the estimate, a tie within the estimator's "
                f"{tie_band:.0%} median error: ranked after it for splitting each layer over more GPUs "
                f"(TP·CP {layer_split(layout.plan)} against {layer_split(leader.plan)})"
            )
        elif slower <= tie_band:
            reasons.append(f"{slower:.1%} slower than the top layout: a tie within the {tie_band:.0%} error")
        else:
            reasons.append(f"{slower:.1%} slower than the top layout")
    return layout.model_copy(update={"rank": index + 1, "reasons": reasons})
