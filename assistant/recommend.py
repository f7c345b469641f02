"""Slots -> Recommendation: pick the recipe from the version's catalog, then let the rule module size it.

Every recipe name, number and command in a Recommendation comes from the catalog or the rule module.
Selection order (the skill's decision tree): exact model and mode; the closest size in the same family;
an architecturally similar family with resized parallelism (and the answer says so). An unknown model
gets no recipe at all, never an invented one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from assistant import turn_budget
from assistant.bounds import check_gpus
from assistant.catalog import for_goal, forward_step_of, on_gpu
from assistant.estimate.features import features_from_fields
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import unmodelled_reason
from assistant.estimate.throughput import ThroughputEstimate, TrackRecord, estimate_throughput
from assistant.kb import KnowledgeBase
from assistant.messages import msg
from assistant.model_names import split_recipe_name, stem_info
from assistant.models import recipe_arch
from assistant.planning.cached import nearest_fit, search_layouts
from assistant.planning.fit import reduces_grads_in_fp32
from assistant.planning.resize import resize
from assistant.planning.search import NearestFit, RankedLayout
from assistant.records import (
    Catalog,
    Cluster,
    Commands,
    Finding,
    ModelArch,
    Override,
    Plan,
    RecipeRecord,
    Slots,
)
from assistant.rules.classify import classify
from assistant.rules.commands import choose_dataset, commands, preset_serves
from assistant.rules.config import build_config, parse_overrides
from assistant.rules.features import feature_overrides
from assistant.rules.fit import FitVerdict
from assistant.rules.validate import precision_finding, validate

# Override keys that set a Plan field (the plan shows these; an override equal to the plan's is not repeated).
PLAN_KEYS = {
    "model.tensor_model_parallel_size": "tp",
    "model.pipeline_model_parallel_size": "pp",
    "model.virtual_pipeline_model_parallel_size": "vp",
    "model.context_parallel_size": "cp",
    "model.expert_model_parallel_size": "ep",
    "model.expert_tensor_parallel_size": "etp",
    "model.sequence_parallel": "sp",
    "train.micro_batch_size": "mbs",
    "train.global_batch_size": "gbs",
}
Match = Literal["exact", "seq-variant", "closest-size", "similar-architecture", "explicit"]
ArchLookup = Callable[[str | None], ModelArch | None]

SMOKE_TEST_STEM = "llama3_8b"
CLEARLY_FASTER = 0.10  # a searched layout is offered when it beats the plan's estimate by more than this
NVL72_TYPES = ("gb200", "gb300")


@dataclass(frozen=True)
class Selection:
    record: RecipeRecord
    match: Match
    asked_stem: str | None = None


@dataclass
class Recommendation:
    slots: Slots
    version: str
    selection: Selection | None = None
    arch: ModelArch | None = None
    dataset: str | None = None
    cluster: Cluster | None = None
    plan: Plan | None = None
    overrides: list[Override] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    commands: Commands = field(default_factory=Commands)
    fit: FitVerdict | None = None
    unknown_model: bool = False
    switched_to_peft: bool = False
    speed: ThroughputEstimate | None = None  # the plan's estimated throughput
    speed_error: float | None = None  # the estimator's median error on the published runs it was fitted on
    # How it did on the published runs of this model and precision, when it is known to run high or low there.
    speed_track: TrackRecord | None = None
    nearest: NearestFit | None = None  # when nothing fits: how far off, and the fewest GPUs that fit
    faster: RankedLayout | None = None  # the searched layout when the user's GPUs differ from the recipe's
    # Asked for the fastest layout, and the search's best is not clearly faster than the plan: its best.
    searched_best: RankedLayout | None = None
    peft_alternative: Recommendation | None = None  # full fine-tuning does not fit here; LoRA does
    # The plan does not fit but another layout on the same GPUs does: the commands launch that one.
    launch_layout: RankedLayout | None = None
    own_data: bool = False  # a diffusion, audio or omni recipe: it trains on its own data config, no preset
    precision: str | None = None  # what the run trains in: the recipe's, or the one the user asked for
    smoke_shrunk: bool = False  # a smoke test that did not fit at its defaults, shortened to fit

    @property
    def recipe(self) -> RecipeRecord | None:
        return self.selection.record if self.selection else None


# ---------------------------------------------------------------- catalog lookups


def stem_of(name: str) -> str | None:
    parts = split_recipe_name(name)
    return parts.stem if parts else None


def library_recipes(catalog: Catalog) -> list[RecipeRecord]:
    return [r for r in catalog.recipes if r.kind == "library" and r.reachable]


def known_stems(catalog: Catalog) -> dict[str, str | None]:
    """Model stem -> HF model id, for every stem with a reachable library or benchmark recipe."""
    stems: dict[str, str | None] = {}
    for record in catalog.recipes:
        stem = stem_of(record.name)
        if stem and record.reachable:
            stems[stem] = stems.get(stem) or record.hf_model_id
    return stems


def _is_legacy_name(record: RecipeRecord) -> bool:
    parts = split_recipe_name(record.name)
    return bool(parts) and parts.num_gpus is None and parts.gpu_type is None


def _goal_matches(record: RecipeRecord, goal: str | None) -> bool:
    return goal is None or record.mode == goal


def exact_recipe(
    catalog: Catalog,
    stem: str,
    goal: str | None,
    seq_length: int | None,
    gpu_type: str | None = None,
    num_gpus: int | None = None,
) -> Selection | None:
    """The name users type (`<stem>[_<seq>k]_<task>_config`); the shortest sequence that suffices. When that
    recipe is not written for the user's GPU type and the library has one that is
    (nemotron_3_nano_gb200_pretrain_config beside the H100 one), that one; among same-named variants, the
    one validated nearest the user's GPU count (deepseek_v3_pretrain_config_32nodes on 256 GPUs)."""
    pool = [
        called
        for r in library_recipes(catalog)
        if stem_of(r.name) == stem and (called := for_goal(r, goal)) is not None
    ]
    chosen = _shortest_suitable(pool, stem, seq_length)
    written_for = (chosen.record.gpu_type or "").lower() if chosen else ""
    if gpu_type and written_for != gpu_type:
        typed = [r for r in pool if (r.gpu_type or "").lower() == gpu_type]
        chosen = _shortest_suitable(typed, stem, seq_length) or chosen
    if chosen and num_gpus:
        nearest = _nearest_validated(chosen.record, count_variants(pool, chosen.record), num_gpus)
        if nearest is not chosen.record:
            chosen = Selection(nearest, chosen.match, stem)
    return chosen


def _validated_gpus(record: RecipeRecord) -> int:
    return record.encoded_gpus or record.min_gpus or 1


def count_variants(pool: list[RecipeRecord], record: RecipeRecord) -> list[RecipeRecord]:
    """The legacy names of the same model, goal, sequence length and GPU type as `record` that are validated
    on another GPU count (deepseek_v3_pretrain_config and deepseek_v3_pretrain_config_32nodes)."""

    def same_kind(other: RecipeRecord) -> bool:
        parts, mine = split_recipe_name(other.name), split_recipe_name(record.name)
        return (
            bool(parts and mine)
            and _is_legacy_name(other)
            and not parts.variant
            and parts.seq_hint == mine.seq_hint
            and other.mode == record.mode
            and (other.gpu_type or "").lower() == (record.gpu_type or "").lower()
            and other.seq_length == record.seq_length
        )

    seen = {record.canonical}
    variants = []
    for other in pool:
        if other.canonical not in seen and same_kind(other):
            seen.add(other.canonical)
            variants.append(other)
    return [v for v in variants if _validated_gpus(v) != _validated_gpus(record)]


def _nearest_validated(record: RecipeRecord, variants: list[RecipeRecord], num_gpus: int) -> RecipeRecord:
    """`record`, unless a variant is validated strictly nearer the user's GPU count (and not above it)."""

    def distance(r: RecipeRecord) -> float:
        return abs(math.log(_validated_gpus(r) / num_gpus))

    fitting = [v for v in variants if _validated_gpus(v) <= num_gpus and distance(v) < distance(record)]
    return min(fitting, key=distance, default=record)


def other_variants(catalog: Catalog, record: RecipeRecord) -> list[RecipeRecord]:
    """Same-named variants of the chosen library recipe validated on other GPU counts, for the answer."""
    stem = stem_of(record.name)
    if record.kind != "library" or not stem:
        return []
    pool = [r for r in library_recipes(catalog) if stem_of(r.name) == stem and r.mode == record.mode]
    return count_variants(pool, record)


def _named_variant(record: RecipeRecord) -> bool:
    """A named variant (`_large_scale`, `_deepep_dev`) of a recipe, not its plain form."""
    parts = split_recipe_name(record.name)
    return bool(parts and parts.variant)


def precision_variants(
    catalog: Catalog, record: RecipeRecord, precision: str | None, gpu_type: str | None
) -> list[RecipeRecord]:
    """Benchmark recipes of the chosen recipe's model and goal written for the user's GPU type in the
    precision asked for, when the chosen recipe is not in it (qwen3_235b_a22b_pretrain_64gpu_b200_nvfp4_config
    beside the BF16 library recipe): the answer names them, fewest GPUs first."""
    stem = stem_of(record.name)
    if not (stem and precision and gpu_type) or record.kind != "library" or record.precision == precision:
        return []
    found = [
        r
        for r in catalog.recipes
        if r.kind == "benchmark"
        and r.reachable
        and stem_of(r.name) == stem
        and r.mode == record.mode
        and r.precision == precision
        and (r.gpu_type or "").lower() == gpu_type
        and not _named_variant(r)
    ]
    return sorted(found, key=lambda r: (_validated_gpus(r), r.name))


def benchmark_for_count(catalog: Catalog, record: RecipeRecord, num_gpus: int) -> RecipeRecord | None:
    """The benchmark recipe of this one's model, goal, GPU type and precision written for `num_gpus`
    GPUs, if the release has one ("is there an 8-GPU variant of nemotronh_56b_pretrain_64gpu_b300_...?")."""
    stem = stem_of(record.name)
    return next(
        (
            r
            for r in catalog.recipes
            if r.kind == "benchmark"
            and r.reachable
            and r.encoded_gpus == num_gpus
            and stem_of(r.name) == stem
            and r.mode == record.mode
            and r.precision == record.precision
            and r.gpu_type == record.gpu_type
        ),
        None,
    )


def _shortest_suitable(pool: list[RecipeRecord], stem: str, seq_length: int | None) -> Selection | None:
    """Among `pool`: legacy names first, the pretrain recipe when no goal narrows it, the shortest sequence
    that suffices."""
    candidates = [r for r in pool if _is_legacy_name(r)] or pool
    if not candidates:
        return None

    def seq_of(record: RecipeRecord) -> int:
        parts = split_recipe_name(record.name)
        return (parts.seq_hint if parts else None) or record.seq_length or 0

    plain = [
        r for r in candidates if not (split_recipe_name(r.name) or split_recipe_name(r.canonical)).variant
    ]
    mode_order = {"pretrain": 0, "sft": 1, "peft": 2}  # with no goal said, the pretrain recipe first
    default = min(
        plain or candidates,
        key=lambda r: (mode_order.get(r.mode or "", 3), seq_of(r) if seq_of(r) else math.inf, len(r.name)),
    )
    if seq_length and seq_of(default) and seq_of(default) < seq_length:
        longer = [r for r in candidates if seq_of(r) >= seq_length]
        if longer:
            return Selection(min(longer, key=lambda r: (seq_of(r), len(r.name))), "seq-variant", stem)
    return Selection(default, "exact", stem)


def _size_billions(stem: str, arch: ModelArch | None) -> float | None:
    if arch and arch.total_params:
        return arch.total_params / 1e9
    info = stem_info(stem)
    if not info.sizes:
        return None
    size = info.sizes[0].replace("p", ".")
    unit = size[-1]
    try:
        number = float(size[:-1])
    except ValueError:
        return None
    return number * {"b": 1.0, "m": 1e-3, "t": 1e3}.get(unit, 1.0)


def closest_size(catalog: Catalog, stem: str, goal: str | None, size_b: float | None) -> Selection | None:
    """Same family (e.g. qwen3), nearest parameter count, with a recipe for the goal."""
    family = stem_info(stem).family
    if size_b is None:
        return None
    best: tuple[float, str] | None = None
    for other in {s for r in library_recipes(catalog) if (s := stem_of(r.name))}:
        if other == stem or stem_info(other).family != family:
            continue
        other_size = _size_billions(other, None)
        if other_size is None or exact_recipe(catalog, other, goal, None) is None:
            continue
        distance = abs(math.log(other_size / size_b))
        if best is None or distance < best[0]:
            best = (distance, other)
    if best is None:
        return None
    chosen = exact_recipe(catalog, best[1], goal, None)
    return Selection(chosen.record, "closest-size", stem) if chosen else None


def similar_architecture(
    catalog: Catalog, arch: ModelArch, goal: str | None, arch_of: ArchLookup
) -> Selection | None:
    """A recipe whose model has the same shape (dense vs MoE, MLA) and the nearest size."""
    target_moe = bool(arch.num_moe_experts)
    size = (arch.total_params or 0) / 1e9
    best: tuple[float, RecipeRecord] | None = None
    for record in library_recipes(catalog):
        if not _goal_matches(record, goal) or not _is_legacy_name(record):
            continue
        other = arch_of(record.hf_model_id)
        if other is None or not other.total_params or other.is_vlm != arch.is_vlm:
            continue
        if (
            bool(other.num_moe_experts) != target_moe
            or other.multi_latent_attention != arch.multi_latent_attention
        ):
            continue
        distance = abs(math.log(other.total_params / 1e9 / max(size, 1e-3)))
        if best is None or distance < best[0]:
            best = (distance, record)
    return Selection(best[1], "similar-architecture") if best else None


def select_recipe(catalog: Catalog, slots: Slots, arch_of: ArchLookup) -> Selection | None:
    if slots.recipe_name:
        named = [r for r in catalog.recipes if r.name == slots.recipe_name]
        if named:
            wants_benchmark = slots.intent == "benchmark"
            named.sort(key=lambda r: (r.kind == "benchmark") != wants_benchmark)
            # A quick-reference pick is the version's own recipe for the intent, not a name the user typed.
            how = "exact" if slots.quick_pick else "explicit"
            return Selection(for_goal(named[0], slots.goal) or named[0], how)
    goal = slots.goal
    if slots.model_stem:
        exact = exact_recipe(
            catalog, slots.model_stem, goal, slots.seq_length, slots.gpu_type, slots.num_gpus
        )
        if exact:
            return exact
        arch = arch_of(slots.hf_model_id) if slots.hf_model_id else None
        near = closest_size(catalog, slots.model_stem, goal, _size_billions(slots.model_stem, arch))
        if near:
            return near
        if arch is not None:
            return similar_architecture(catalog, arch, goal, arch_of)
        return None
    if slots.hf_model_id:
        arch = arch_of(slots.hf_model_id)
        if arch is not None:
            return similar_architecture(catalog, arch, goal, arch_of)
    return None


def benchmark_recipe(
    catalog: Catalog,
    stem: str,
    goal: str | None,
    gpu_type: str | None,
    num_gpus: int | None,
    precision: str | None = None,
) -> RecipeRecord | None:
    """The benchmark recipe of this model for the GPU type, nearest GPU count, in the precision asked for
    (else BF16) first: benchmark recipes are measured per precision, so their precision is not overridden."""
    candidates = [
        r
        for r in catalog.recipes
        if r.kind == "benchmark" and stem_of(r.name) == stem and _goal_matches(r, goal or "pretrain")
    ]
    if gpu_type:
        typed = [r for r in candidates if (r.gpu_type or "").lower() == gpu_type]
        candidates = typed or candidates
    if not candidates:
        return None

    def rank(record: RecipeRecord) -> tuple:
        count = record.encoded_gpus or record.min_gpus or 0
        distance = abs(math.log((count or 1) / (num_gpus or count or 1)))
        return (
            distance,
            record.precision != (precision or "bf16"),
            bool(split_recipe_name(record.name).variant),
            record.name,
        )

    return min(candidates, key=rank)


# ---------------------------------------------------------------- the recommendation


def dataset_for(requested: str | None, catalog: Catalog, mode: str | None, *, is_vlm: bool) -> str | None:
    """The user's preset when this version has it and it serves the mode; else the version's default."""
    default = choose_dataset(catalog.version, mode, catalog.launcher, vlm=is_vlm)
    if not requested:
        return default
    presets = {p.name: p.modes for p in catalog.launcher.dataset_presets}
    if requested not in presets:
        return default
    train_mode = "pretrain" if mode in (None, "pretrain") else "finetune"
    return requested if preset_serves(requested, presets[requested], train_mode) else default


def typed_overrides(slots: Slots) -> dict:
    """The KEY=VALUE pairs of the question, typed the way the launcher's Hydra parser types them."""
    return parse_overrides([f"{key}={value}" for key, value in slots.overrides.items()])


def estimate_run(
    rec: Recommendation,
    mode: str | None,
    *,
    kb: KnowledgeBase,
    recompute: str | None = "recipe",
    search: bool = False,
    fastest: bool = False,
) -> None:
    """Speed of the plan (under the recipe's recompute unless `recompute` is given); when nothing fits, the
    nearest layout that does; when the user's GPU count or type is not the recipe's (or `search`, or the
    user asked for the `fastest` layout), the fastest layout the search finds for it."""
    if rec.arch is None or rec.cluster is None or rec.recipe is None or unmodelled_reason(rec.arch):
        return
    record, cluster = rec.recipe, rec.cluster
    hw = kb.gpu_spec(cluster.gpu_type)
    seq = rec.slots.seq_length or record.seq_length or 4096
    gbs = rec.plan.gbs if rec.plan else (record.global_batch_size or cluster.num_gpus)
    common = {
        "seq_length": seq,
        "mode": mode or "pretrain",
        "precision": rec.precision or record.precision or "bf16",
    }
    features = features_from_fields(record.fields)
    calibration = kb.calibration
    rec.speed_error = calibration.median_error
    track = kb.track_record(rec.arch.hf_model_id, common["precision"])
    rec.speed_track = track if track and track.known_bias(calibration.median_error) else None
    if rec.plan is not None:
        run = RunSettings(
            recompute=record.recompute if recompute == "recipe" else recompute,  # type: ignore[arg-type]
            gpus_per_node=cluster.gpus_per_node,
            features=features,
            **common,
        )
        rec.speed = estimate_throughput(rec.arch, rec.plan, hw, run, calibration=calibration)
    no_fit = rec.plan is None and any(f.id == "does-not-fit" for f in rec.findings)
    plan_does_not_fit = rec.fit is not None and rec.fit.status == "does-not-fit"
    # The recipe's layout was chosen for its own GPU count and type; on other GPUs the search may beat it.
    resized = record.kind == "library" and not record.written_for(cluster)
    # The search sizes gradients as the recipe reduces them (bf16 in many recipes, fp32 by default).
    grads_fp32 = reduces_grads_in_fp32(record.fields, rec.version, kb)
    if turn_budget.spent():
        return
    if rec.nearest is None and (no_fit or plan_does_not_fit) and not search:
        rec.nearest = nearest_fit(
            rec.arch, cluster, global_batch_size=gbs, version=rec.version, features=features,
            grad_reduce_in_fp32=grads_fp32, kb=kb, **common,
        )  # fmt: skip
    elif rec.plan and (search or resized or fastest):
        found = search_layouts(rec.arch, cluster, global_batch_size=gbs, version=rec.version, top_k=1,
                               features=features, grad_reduce_in_fp32=grads_fp32, kb=kb,
                               **common)  # fmt: skip
        # A user's own layout that does not fit gets the search's best whatever its speed.
        if found and ((search and plan_does_not_fit) or _clearly_faster(found[0], rec.speed)):
            rec.faster = found[0]
        elif found and fastest:
            rec.searched_best = found[0]


def fitting_overrides(overrides: list[Override], layout: RankedLayout, plan: Plan) -> list[Override]:
    """The plan's overrides with the fitting layout's values on top (same key: the layout's wins); a size
    the plan already has is not repeated."""
    ours = {o.key: o for o in overrides}
    for key, value in layout.overrides.items():
        if key in ours and ours[key].value == value:
            continue
        if key not in ours and key in PLAN_KEYS and getattr(plan, PLAN_KEYS[key]) == value:
            continue
        reason = msg("reason.fitting_layout")
        ours[key] = Override(
            key=key,
            value=value,
            reason=reason.render("en"),
            reason_zh=reason.render("zh"),
            change_class=classify(key, value)[0],
        )
    return list(ours.values())


def _clearly_faster(layout: RankedLayout, speed: ThroughputEstimate | None) -> bool:
    """Faster than the plan by more than CLEARLY_FASTER, beyond the estimator's typical error on a layout."""
    gain = 1 + CLEARLY_FASTER
    return (
        speed is not None and layout.throughput.tokens_per_sec_per_gpu > gain * speed.tokens_per_sec_per_gpu
    )


def requested_dataset_findings(
    rec: Recommendation, catalog: Catalog, mode: str | None, kb: KnowledgeBase
) -> list[Finding]:
    """When the user asked for a preset we could not use (e.g. `mock` for SFT in 0.6.0), say why."""
    requested = rec.slots.dataset
    if not requested or requested == rec.dataset or rec.recipe is None or rec.cluster is None:
        return []
    config = build_config(rec.recipe, {}, version=catalog.version, dataset=requested)
    found = validate(
        config,
        rec.arch,
        rec.cluster,
        catalog.version,
        catalog.launcher,
        gpu=kb.gpu_spec(rec.cluster.gpu_type),
    )
    return [f for f in found if f.id == "mode-dataset"]


def default_gpus_per_node(gpu_type: str | None) -> int:
    """GB200/GB300 NVL72 compute trays hold 4 GPUs; HGX/DGX nodes hold 8."""
    return 4 if gpu_type in NVL72_TYPES else 8


def cluster_for(slots: Slots, record: RecipeRecord | None) -> Cluster | None:
    gpu_type = slots.gpu_type or (record.gpu_type.lower() if record and record.gpu_type else None) or "h100"
    per_node = slots.gpus_per_node or default_gpus_per_node(gpu_type)
    count = slots.num_gpus
    if count is None and slots.num_nodes:
        count = slots.num_nodes * per_node
    if count is None and record is not None:
        # A name's GPU count is a validated layout; a bare minimum of 1 is no advice for full training.
        count = record.encoded_gpus or record.min_gpus
        if (count or 1) == 1 and (slots.goal or record.mode) != "peft":
            count = per_node
    if count is None or count < 1:
        return None
    check_gpus(count, per_node)
    return Cluster(num_gpus=count, gpu_type=gpu_type, gpus_per_node=per_node)


def peft_alternative(
    rec: Recommendation, catalog: Catalog, arch_of: ArchLookup, kb: KnowledgeBase
) -> Recommendation | None:
    """When full SFT does not fit the user's GPUs, the same model's LoRA recipe on the same GPUs, if that
    one fits and runs (the guide's advice for e.g. Qwen3 30B-A3B on 4 GPUs)."""
    slots = rec.slots
    does_not_fit = any(f.id == "does-not-fit" for f in rec.findings)
    if slots.goal != "sft" or not does_not_fit or slots.overrides:
        return None
    lora = recommend(slots.model_copy(update={"goal": "peft"}), catalog, arch_of, kb)
    if lora.plan is None or not lora.commands.torchrun or lora.recipe is None or lora.recipe.mode != "peft":
        return None
    return lora


def _selection(slots: Slots, catalog: Catalog, arch_of: ArchLookup) -> Selection | None:
    """The recipe a request starts from: the smoke test, a benchmark recipe, or the library's choice."""
    if slots.intent == "first_try" and not slots.model_stem:
        return exact_recipe(catalog, SMOKE_TEST_STEM, "pretrain", None)
    if slots.intent == "benchmark" and slots.model_stem:
        record = benchmark_recipe(
            catalog, slots.model_stem, slots.goal, slots.gpu_type, slots.num_gpus, slots.precision
        )
        return Selection(record, "exact", slots.model_stem) if record else None
    return select_recipe(catalog, slots, arch_of)


def recommend(slots: Slots, catalog: Catalog, arch_of: ArchLookup, kb: KnowledgeBase) -> Recommendation:
    """Choose, size, check and build commands for one request (pure: lookups and data are passed in)."""
    selection = _selection(slots, catalog, arch_of)
    named_for_one_gpu = selection is not None and selection.record.encoded_gpus == 1
    if (
        slots.num_gpus == 1
        and slots.goal in (None, "sft")
        and slots.intent == "recommend"
        and not named_for_one_gpu
    ):
        # One GPU runs only PEFT recipes (the skill's decision tree), unless the recipe is validated on one
        # GPU (gemma3_1b_sft_1gpu_h100_bf16_config): answer with the LoRA recipe.
        slots = slots.model_copy(update={"goal": "peft"})
        selection = _selection(slots, catalog, arch_of)
        rec = Recommendation(slots=slots, version=catalog.version, switched_to_peft=True)
    else:
        rec = Recommendation(slots=slots, version=catalog.version)
    if selection is None:
        rec.unknown_model = bool(
            slots.model_text or slots.model_stem or slots.hf_model_id or slots.recipe_name
        )
        return rec
    rec.selection = selection
    record = selection.record
    rec.arch = recipe_arch(record, kb)
    if selection.match == "similar-architecture" and slots.hf_model_id:
        rec.arch = arch_of(slots.hf_model_id) or rec.arch
    rec.cluster = cluster_for(slots, record)
    if rec.cluster is not None and record.gpu_dependent:
        record = on_gpu(record, rec.cluster.gpu_type)  # what upstream's helpers set on these GPUs
        rec.selection = Selection(record, selection.match, selection.asked_stem)
    mode = slots.goal or record.mode
    # A diffusion recipe (Wan) trains on its own data config, like a recipe with no architecture record.
    own_data = rec.arch.diffusion is not None if rec.arch else bool(forward_step_of(record.name, kb))
    rec.own_data = own_data
    if record.kind == "library" and not own_data:
        rec.dataset = dataset_for(slots.dataset, catalog, mode, is_vlm=bool(rec.arch and rec.arch.is_vlm))
    elif record.kind == "library" and slots.dataset:
        # A diffusion, audio or omni recipe trains on its own data config; only a preset the user names.
        rec.dataset = dataset_for(slots.dataset, catalog, mode, is_vlm=True)
    if rec.cluster is None:
        return rec
    # A precision the GPUs cannot run is reported, and the recipe's own precision kept.
    gpu = kb.gpu_spec(rec.cluster.gpu_type)
    unsupported = precision_finding(
        slots.precision, rec.cluster.gpu_type, gpu, kept=record.precision or "bf16"
    )
    requested = feature_overrides(
        slots.features,
        is_moe=bool(rec.arch and rec.arch.num_moe_experts),
        precision=None if unsupported else slots.precision,
        recipe_precision=record.precision,
        presets=tuple(catalog.launcher.mixed_precision_presets),
    )
    result = resize(
        record,
        rec.arch,
        rec.cluster,
        mode,
        slots.seq_length,
        user_overrides=requested | typed_overrides(slots),
        version=catalog.version,
        kb=kb,
    )
    rec.plan, rec.overrides, rec.fit = result.plan, list(result.overrides), result.fit
    rec.findings = list(result.findings) + requested_dataset_findings(rec, catalog, mode, kb)
    rec.findings += [unsupported] if unsupported else []
    rec.precision = (result.config.precision if result.config else None) or record.precision
    rec.nearest = result.nearest
    estimate_run(rec, mode, kb=kb, fastest=bool(slots.wants_fastest))
    if rec.plan is None:
        rec.peft_alternative = peft_alternative(rec, catalog, arch_of, kb)
        return rec  # no launch command for a layout that cannot run
    if not record.reachable:
        return rec  # the launcher cannot look the name up: no command (compose says why)
    launch_plan, launch_overrides = rec.plan, rec.overrides
    fitting = rec.nearest.best_here if rec.nearest and rec.fit and rec.fit.status == "does-not-fit" else None
    if fitting is not None:  # the command must run the layout the estimate says fits, not the recipe's own
        rec.launch_layout = fitting
        launch_plan, launch_overrides = fitting.plan, fitting_overrides(rec.overrides, fitting, rec.plan)
    built = commands(
        catalog.version,
        record,
        launch_plan,
        rec.cluster,
        rec.dataset,
        catalog.launcher,
        launch_overrides,
        mode=mode,
    )
    rec.commands = Commands(**built.model_dump(include={"torchrun", "multinode", "slurm", "benchmark"}))
    return rec
