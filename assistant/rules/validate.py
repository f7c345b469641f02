"""validate(): every rule a Megatron-Bridge run checks (or silently trips over), applied before launch.

Each rule is a small function returning findings; `validate` runs them all. Rules with an upstream
error text reproduce it exactly (assistant/rules/upstream.py); version differences come from
assistant/rules/versions.py.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from math import prod

from assistant.estimate.dit import tensor_parallel_only
from assistant.estimate.features import FROZEN_PARTS
from assistant.estimate.hardware import GpuSpec
from assistant.estimate.memory import estimable, expert_params_per_gpu
from assistant.messages import Message, msg
from assistant.records import Cluster, Finding, LauncherSpec, ModelArch, gpu_label
from assistant.rules import upstream
from assistant.rules.config import EffectiveConfig
from assistant.rules.findings import (
    Severity,
    divisors,
    effective_etp,
    finding,
    head_shapes,
    kv,
    mamba_tp_allowed,
    next_pow2,
    tp_allowed,
)
from assistant.rules.versions import traits

LONG_CONTEXT = 8192  # above this the skill asks for context parallelism
VLM_PRESETS = {"cord-v2", "llava-video-178k", "medpix", "raven", "rdr", "energon", "local-vlm"}
EXPERT_SHARE_LIMIT = 0.6  # routed-expert state above this share of HBM => EP too low
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def validate(
    config: EffectiveConfig,
    arch: ModelArch | None,
    cluster: Cluster,
    version: str | None = None,
    launcher: LauncherSpec | None = None,
    *,
    gpu: GpuSpec,
) -> list[Finding]:
    """All findings for one effective config on one cluster of `gpu` GPUs (the cluster's GPU type, looked
    up by the caller), errors first."""
    context = _Context(config, arch, cluster, version or config.version, launcher, gpu)
    found: list[Finding] = []
    for rule in RULES:
        found.extend(rule(context))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(found, key=lambda item: order[item.severity])


PIPELINE_LAYOUT = "model.pipeline_model_parallel_layout"
FIRST_STAGE_LAYERS = "model.num_layers_in_first_pipeline_stage"
LAST_STAGE_LAYERS = "model.num_layers_in_last_pipeline_stage"
EMBEDDING_SPLIT_FLAG = "model.account_for_embedding_in_pipeline_split"
LOSS_SPLIT_FLAG = "model.account_for_loss_in_pipeline_split"
# Flags that make Megatron count the embedding / the loss as one more layer when it splits the layers.
SPLIT_LAYER_FLAGS = (EMBEDDING_SPLIT_FLAG, LOSS_SPLIT_FLAG)
FLEXIBLE_LAYOUT_KEYS = (PIPELINE_LAYOUT, FIRST_STAGE_LAYERS, LAST_STAGE_LAYERS, *SPLIT_LAYER_FLAGS)


EDGE_STAGE_KEYS = (FIRST_STAGE_LAYERS, LAST_STAGE_LAYERS)
PP_KEY = "model.pipeline_model_parallel_size"
VP_KEY = "model.virtual_pipeline_model_parallel_size"


def edge_split_compatible(layers: int, pp: int, first: int | None, last: int | None) -> bool:
    """run_recipe.py's test (recipe_runner.py:401 main) that the first/last stage sizes still fit this PP."""
    middle_stages = pp - (first is not None) - (last is not None)
    middle_layers = layers - (first or 0) - (last or 0)
    return (
        middle_stages >= 0
        and middle_layers >= 0
        and bool(middle_stages) == bool(middle_layers)
        and (middle_stages == 0 or middle_layers % middle_stages == 0)
    )


def _runner_clears_edges(config: EffectiveConfig, arch: ModelArch | None, tr) -> bool:
    """run_recipe.py at main (PR 5581, recipe_runner.py:391) clears the recipe's num_layers_in_first/last_
    pipeline_stage after a -pp override that leaves them incompatible, when the recipe registers no layout
    builder and sets no explicit layout; it keeps them when the user set both."""
    user, values = config.user_overrides, config.values
    if not (config.runner_sync and tr.runner_clears_edge_counts) or arch is None or config.layout_builder:
        return False
    if PP_KEY not in user or PIPELINE_LAYOUT in user or values.get(PIPELINE_LAYOUT) is not None:
        return False
    first, last = (values.get(key) for key in EDGE_STAGE_KEYS)
    if (first is None and last is None) or all(key in user for key in EDGE_STAGE_KEYS):
        return False
    if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in (first, last)):
        return False
    return not edge_split_compatible(arch.num_layers, config.pp, first, last)


def layout_stages(layout: object) -> int | None:
    """Stages (PP x VP) of an explicit pipeline layout: a list of stage lists, or Megatron-Core's string form
    ("Et|(tt|)*30mL"; PipelineParallelLayerLayout.parse_str_to_list, core_v0.15.0); None if neither."""
    if isinstance(layout, list) and layout and all(isinstance(row, list) for row in layout):
        return len(layout)
    if not isinstance(layout, str) or not layout:
        return None
    text = layout.replace(",", "")
    text = re.sub(r"\(([^)]+)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    text = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    return len(text.split("|"))


def layout_rebuilt(config: EffectiveConfig, tr) -> bool:
    """run_recipe.py (v0.6.0+) rebuilds the recipe's layout after a -pp/-vp override through the builder the
    recipe registers (sync_model_pipeline_layout, recipe_runner.py:373); an explicit layout override wins."""
    user = config.user_overrides
    return bool(
        config.runner_sync
        and tr.runner_rebuilds_layout
        and config.layout_builder
        and (PP_KEY in user or VP_KEY in user)
        and PIPELINE_LAYOUT not in user
    )


def _unread_layout_stands(config: EffectiveConfig, tr) -> bool:
    """The recipe places layers itself through a layout the catalog could not read (K-EXAONE 2.0 builds one
    with get_k_exaone_2_0_pipeline_layout), and that layout still applies: PP and VP are the recipe's own, or
    run_recipe.py rebuilds it through the registered builder (layout_rebuilt). Megatron-Core then takes the
    layer placement from the layout and does not require num_layers to divide by PP."""
    if not config.layout_unread or PIPELINE_LAYOUT in config.user_overrides:
        return False
    user = config.user_overrides
    return layout_rebuilt(config, tr) or (PP_KEY not in user and VP_KEY not in user)


def has_flexible_layout(values: dict) -> bool:
    """The recipe places layers on pipeline stages itself (explicit layout or uneven first/last stages)."""
    return any(values.get(key) not in (None, False) for key in FLEXIBLE_LAYOUT_KEYS)


def has_errors(findings: list[Finding]) -> bool:
    return any(item.severity == "error" for item in findings)


class _Context:
    def __init__(self, config, arch, cluster, version, launcher, gpu) -> None:
        self.config: EffectiveConfig = config
        self.gpu: GpuSpec = gpu
        self.arch: ModelArch | None = arch
        self.cluster: Cluster = cluster
        self.version: str = version
        self.traits = traits(version)
        self.launcher: LauncherSpec | None = launcher
        self.world = cluster.num_gpus
        self.model_size = config.tp * config.pp * config.cp
        self.dp = self.world // self.model_size if self.world % self.model_size == 0 else None
        self.experts = arch.num_moe_experts if arch else None
        self.etp = effective_etp(config.etp, config.tp, config.ep, version)
        values = config.values
        # run_recipe.py (main) drops recipe-owned edge-stage sizes a -pp override makes incompatible.
        self.cleared_edges = _runner_clears_edges(config, arch, self.traits)
        if self.cleared_edges:
            values = {**values, **{k: None for k in EDGE_STAGE_KEYS if k not in config.user_overrides}}
        self.values: dict = values
        self.flexible_layout = has_flexible_layout(values) or _unread_layout_stands(config, self.traits)

    def tp_fix(self) -> int:
        """Largest TP not above the current one that passes the head checks and stays in a node."""
        assert self.arch is not None
        limit = min(self.config.tp, self.gpu.nvlink_group(self.cluster.gpus_per_node))
        return max(t for t in range(1, max(limit, 1) + 1) if tp_allowed(self.arch, t, self.version))


Rule = Callable[[_Context], list[Finding]]


# ---------------------------------------------------------------- tensor parallel and topology


def rule_tp_heads(ctx: _Context) -> list[Finding]:
    arch, tp = ctx.arch, ctx.config.tp
    uneven = [heads for heads, _ in head_shapes(arch) if heads % tp] if arch else []
    if not uneven:
        return []
    heads = uneven[0]
    return [
        finding(
            "tp-heads",
            "error",
            msg("tp-heads", tp=tp, heads=heads),
            upstream_error=upstream.heads_tp(heads, tp),
            fix=kv(model__tensor_model_parallel_size=ctx.tp_fix()),
        )
    ]


def rule_tp_query_groups(ctx: _Context) -> list[Finding]:
    arch, tp = ctx.arch, ctx.config.tp
    if arch is None:
        return []
    loose = ctx.traits.query_groups_multiple_or_divisor
    # the first shape whose KV groups TP does not divide (a model with two attention shapes has two counts)
    groups = next((g for _, g in head_shapes(arch) if g % tp), 0)
    if not groups:
        return []
    if loose and tp % groups == 0:
        return [finding("tp-query-groups", "info", msg("tp-query-groups.replicated", tp=tp, groups=groups))]
    rule = msg("tp-query-groups.loose" if loose else "tp-query-groups.strict")
    return [
        finding(
            "tp-query-groups",
            "error",
            msg("tp-query-groups", groups=groups, rule=rule, tp=tp, version=ctx.version),
            upstream_error=upstream.query_groups_tp(groups, tp, loose),
            fix=kv(model__tensor_model_parallel_size=ctx.tp_fix()),
        )
    ]


def rule_tp_mamba(ctx: _Context) -> list[Finding]:
    arch, tp = ctx.arch, ctx.config.tp
    if arch is None or mamba_tp_allowed(arch, tp):
        return []
    heads, groups = arch.mamba_num_heads, arch.mamba_num_groups or 1
    text = upstream.MAMBA_HEADS_TP if heads and heads % tp else upstream.MAMBA_GROUPS_TP
    return [
        finding(
            "tp-mamba",
            "error",
            msg("tp-mamba", tp=tp, heads=heads, groups=groups),
            upstream_error=text,
            fix=kv(model__tensor_model_parallel_size=ctx.tp_fix()),
        )
    ]


def rule_tp_nvlink(ctx: _Context) -> list[Finding]:
    domain = ctx.gpu.nvlink_group(ctx.cluster.gpus_per_node)
    tp = ctx.config.tp
    if tp <= domain:
        return []
    return [
        finding(
            "tp-cross-node",
            "warning",
            msg("tp-cross-node", tp=tp, domain=domain, gpu_type=ctx.cluster.gpu_type),
            upstream_error=None,
            fix=kv(model__tensor_model_parallel_size=ctx.tp_fix() if ctx.arch else domain),
        )
    ]


def rule_sequence_parallel(ctx: _Context) -> list[Finding]:
    config = ctx.config
    no_sp = ctx.arch is not None and tensor_parallel_only(ctx.arch)  # Bridge's Flux scatters no sequence
    if config.tp > 1 and not config.sp and not no_sp:
        with_ep = config.ep > 1
        return [
            finding(
                "sp-off",
                "warning",
                msg("sp-off", tp=config.tp, tail=msg("sp-off.with_ep" if with_ep else "sp-off.end")),
                upstream_error=upstream.EP_TP_NEEDS_SP if with_ep else None,
                fix=kv(model__sequence_parallel=True),
            )
        ]
    if config.tp == 1 and config.sp:
        return [
            finding(
                "sp-ignored",
                "info",
                msg("sp-ignored", SP_WITHOUT_TP=upstream.SP_WITHOUT_TP),
                upstream_error=None,
                fix=kv(model__sequence_parallel=False),
            )
        ]
    return []


# ---------------------------------------------------------------- pipeline


def _vp_choice(layers_per_stage: int) -> int | None:
    """A VP that splits a stage into chunks of about 4 layers (None if the stage has one layer)."""
    options = [d for d in divisors(layers_per_stage) if d > 1]
    if not options:
        return None
    return min(options, key=lambda d: (abs(layers_per_stage / d - 4), d))


def rule_pipeline(ctx: _Context) -> list[Finding]:
    config, arch = ctx.config, ctx.arch
    found: list[Finding] = []
    pp, vp = config.pp, config.vp
    if vp is not None and pp <= 1:
        found.append(
            finding(
                "vp-needs-pp",
                "error",
                msg("vp-needs-pp", vp=vp, pp=pp),
                upstream_error=upstream.VP_WITHOUT_PP,
                fix=kv(model__virtual_pipeline_model_parallel_size=None),
            )
        )
    found += _explicit_layout(ctx)  # needs no architecture: the layout's stages against PP and VP
    if arch is None:
        return found
    if ctx.flexible_layout:
        return found + _uneven_split(ctx)
    layers = arch.num_layers
    # Hybrid stacks (Mamba / linear-attention patterns) may place layers by pattern: report, do not block.
    hard: Severity = "warning" if arch.is_hybrid else "error"
    if pp > 1 and layers % pp:
        fix_pp = max(d for d in divisors(layers) if d <= pp)
        found.append(
            finding(
                "pp-layers",
                hard,
                msg("pp-layers", pp=pp, layers=layers),
                upstream_error=upstream.layers_pp(layers, pp, ctx.traits.layers_pp_message_has_numbers),
                fix=kv(model__pipeline_model_parallel_size=fix_pp),
            )
        )
    if pp > 1 and vp and (layers // pp) % vp:
        per_stage = layers // pp
        found.append(
            finding(
                "vp-layers",
                hard,
                msg("vp-layers", vp=vp, per_stage=per_stage, pp=pp),
                upstream_error=upstream.VP_CHUNKS,
                fix=kv(model__virtual_pipeline_model_parallel_size=_vp_choice(per_stage)),
            )
        )
    if pp > 1 and vp is None and layers % pp == 0:
        choice = _vp_choice(layers // pp)
        if choice:
            found.append(
                finding(
                    "pp-without-vp",
                    "warning",
                    msg("pp-without-vp", pp=pp, choice=choice),
                    upstream_error=None,
                    fix=kv(model__virtual_pipeline_model_parallel_size=choice),
                )
            )
    return found


def _explicit_layout(ctx: _Context) -> list[Finding]:
    """Megatron-Core's checks of an explicit layout against PP and VP: its stage count must divide by PP,
    and a VP that is set must equal stages / PP. A recipe's layout is built for its own PP and VP; after a
    -pp/-vp override it is stale unless the launcher rebuilds it (layout_rebuilt)."""
    config = ctx.config
    stages = layout_stages(ctx.values.get(PIPELINE_LAYOUT))
    if stages is None or layout_rebuilt(config, ctx.traits):
        return []
    pp, vp = config.pp, config.vp
    common = {"stages": stages, "pp": pp, "version": ctx.version}
    if stages % pp:
        return [
            finding(
                "pp-layout",
                "error",
                msg("pp-layout.stages", **common),
                upstream_error=upstream.layout_pp(stages, pp),
                fix=kv(model__pipeline_model_parallel_size=max(d for d in divisors(stages) if d <= pp)),
            )
        ]
    detected = stages // pp
    if vp is not None and vp != detected:
        return [
            finding(
                "pp-layout",
                "error",
                msg("pp-layout.vp", detected=detected, vp=vp, **common),
                upstream_error=upstream.layout_vp(vp, detected),
                fix=kv(model__virtual_pipeline_model_parallel_size=None),
            )
        ]
    return []


def _uneven_split(ctx: _Context) -> list[Finding]:
    """Megatron-Core's checks on num_layers_in_first/last_pipeline_stage (transformer_config.py): the middle
    stages split the rest evenly, and with a virtual pipeline every stage's layers divide by VP. An explicit
    layout or the embedding/loss split flags are checked by Megatron itself and not here."""
    values, config, arch = ctx.values, ctx.config, ctx.arch
    if (
        arch is None
        or config.pp <= 1
        or values.get(PIPELINE_LAYOUT)
        or _unread_layout_stands(config, ctx.traits)
    ):
        return []
    if any(values.get(key) for key in SPLIT_LAYER_FLAGS):
        return []
    edges = {"first": values.get(FIRST_STAGE_LAYERS), "last": values.get(LAST_STAGE_LAYERS)}
    vp, middle_layers, middle_pp = config.vp, arch.num_layers, config.pp
    texts: list[str] = []
    for edge, count in edges.items():
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            continue
        if vp and count % vp:
            texts.append(upstream.uneven_edge_vp(edge, count, vp))
        middle_layers -= count
        middle_pp -= 1
    mismatch = ctx.traits.checks_middle_stage_mismatch and bool(middle_layers) != bool(middle_pp)
    if mismatch:
        texts.append(upstream.uneven_mismatch(middle_layers, middle_pp))
    elif middle_pp and middle_layers % middle_pp:
        texts.append(upstream.uneven_middle_pp(middle_layers, middle_pp))
    elif middle_pp and vp and (middle_layers // middle_pp) % vp:
        texts.append(upstream.uneven_middle_vp(middle_layers // middle_pp, vp))
    if not texts:
        return []
    # The recipe's own edge sizes, dropped, let the layers split evenly (what run_recipe.py does at main).
    user = config.user_overrides
    recipe_edges = [k for k in EDGE_STAGE_KEYS if values.get(k) is not None and k not in user]
    set_edges = sum(c is not None for c in edges.values())
    even = arch.num_layers % config.pp == 0 and len(recipe_edges) == set_edges
    mismatch_text = upstream.uneven_mismatch(middle_layers, middle_pp)
    key = "pp-uneven.mismatch" if texts[0] == mismatch_text else "pp-uneven"
    return [
        finding(
            "pp-uneven",
            "error",
            msg(key, layers=arch.num_layers, pp=config.pp, middle=middle_layers, middle_pp=middle_pp),
            upstream_error=texts[0],
            fix=" ".join(f"{k}=null" for k in recipe_edges) if even and recipe_edges else None,
        )
    ]


# ---------------------------------------------------------------- context parallel


def _cp_values(config: EffectiveConfig) -> list[str]:
    value = config.cp_comm_type
    if value is None:
        return []
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


# Dataset config classes Bridge's CP loss check applies to (FinetuningDatasetConfig and its subclasses
# up to v0.5.1; the SFT / Energon / mock-VLM-SFT configs from v0.6.0).
FINETUNE_DATASETS = {
    "FinetuningDatasetConfig",
    "HFDatasetConfig",
    "GPTSFTDatasetConfig",
    "DirectHFSFTDatasetConfig",
    "EnergonDatasetConfig",
    "MockVLMSFTDatasetConfig",
}


def _finetuning_dataset(config: EffectiveConfig) -> bool:
    if config.dataset_target is not None and config.dataset is None:
        return config.dataset_target.rsplit(".", 1)[-1] in FINETUNE_DATASETS
    return config.is_finetune


def rule_context_parallel(ctx: _Context) -> list[Finding]:
    config = ctx.config
    cp, seq = config.cp, config.seq_length
    found: list[Finding] = []
    if cp > 1 and seq is not None and seq % (2 * cp):
        smaller = [c for c in (1, 2, 4, 8, 16, 32, 64) if c < cp and (c == 1 or seq % (2 * c) == 0)]
        padded = -(-seq // (2 * cp)) * 2 * cp
        found.append(
            finding(
                "cp-seq",
                "error",
                msg("cp-seq", seq=seq, value1=2 * cp),
                upstream_error=upstream.CP_SEQ,
                fix=kv(dataset__seq_length=padded, model__seq_length=padded)
                if not smaller or max(smaller) == 1
                else kv(model__context_parallel_size=max(smaller)),
            )
        )
    if cp > 1 and _finetuning_dataset(config):
        missing = []
        if not config.calculate_per_token_loss:
            missing.append(("model.calculate_per_token_loss", True, upstream.FINETUNE_CP_PER_TOKEN))
        if config.average_in_collective:
            missing.append(("ddp.average_in_collective", False, upstream.FINETUNE_CP_AVERAGE))
        if missing:
            fix = " ".join(f"{key}={str(value).lower()}" for key, value, _ in missing)
            if ctx.traits.runner_syncs_finetune_cp:
                found.append(
                    finding(
                        "finetune-cp-loss",
                        "info",
                        msg("finetune-cp-loss", cp=cp, version=ctx.version),
                        upstream_error=None,
                        fix=fix,
                    )
                )
            else:
                found.append(
                    finding(
                        "finetune-cp-loss",
                        "error",
                        msg("finetune-cp-loss.needed", cp=cp),
                        upstream_error=missing[0][2],
                        fix=fix,
                    )
                )
    if cp > 1 and any("a2a+p2p" in item for item in _cp_values(config)):
        sizes = config.hierarchical_context_parallel_sizes
        inner = min(cp, ctx.cluster.gpus_per_node)
        suggestion = [inner, cp // inner] if cp % inner == 0 else [cp, 1]
        checked = ctx.traits.checks_hierarchical_cp
        if sizes is None:
            found.append(
                finding(
                    "cp-a2a-p2p",
                    "error",
                    msg(
                        "cp-a2a-p2p.missing",
                        tail=msg("cp-a2a-p2p.missing.checked")
                        if checked
                        else msg("cp-a2a-p2p.missing.unchecked", version=ctx.version),
                    ),
                    upstream_error=upstream.HIERARCHICAL_CP_MISSING if checked else None,
                    fix=kv(model__hierarchical_context_parallel_sizes=suggestion),
                )
            )
        elif prod(sizes) != cp:
            found.append(
                finding(
                    "cp-a2a-p2p",
                    "error",
                    msg("cp-a2a-p2p", list_sizes=list(sizes), prod_sizes=prod(sizes), cp=cp),
                    upstream_error=upstream.hierarchical_cp_product(sizes, cp) if checked else None,
                    fix=kv(model__hierarchical_context_parallel_sizes=suggestion),
                )
            )
    if cp == 1 and seq is not None and seq > LONG_CONTEXT:
        room = ctx.world // (config.tp * config.pp) if ctx.world % (config.tp * config.pp) == 0 else 1
        want = next_pow2(seq / LONG_CONTEXT)
        choice = max(
            (c for c in (2, 4, 8, 16, 32, 64) if c <= min(want, room) and seq % (2 * c) == 0), default=None
        )
        found.append(
            finding(
                "long-context-no-cp",
                "warning",
                msg("long-context-no-cp", seq=seq),
                upstream_error=None,
                fix=kv(model__context_parallel_size=choice) if choice else None,
            )
        )
    return found


# ---------------------------------------------------------------- meshes and batches


def _dense_mesh_fix(ctx: _Context) -> str | None:
    """Shrink one of TP, PP, CP (in that order) to the largest valid value whose product divides the world."""
    config, arch, world = ctx.config, ctx.arch, ctx.world
    for name, key in (
        ("tp", "model__tensor_model_parallel_size"),
        ("pp", "model__pipeline_model_parallel_size"),
        ("cp", "model__context_parallel_size"),
    ):
        current = getattr(config, name)
        rest = ctx.model_size // current
        # Valid values divide world / rest: walk those divisors, never every integer below the size.
        fitting = divisors(world // rest) if world % rest == 0 else []
        for value in sorted((d for d in fitting if d < current), reverse=True):
            if name == "tp" and arch is not None and not tp_allowed(arch, value, ctx.version):
                continue
            if name == "pp" and arch is not None and arch.num_layers % value:
                continue
            if name == "cp" and value > 1 and (config.seq_length or 0) % (2 * value):
                continue
            return kv(**{key: value})
    return None


def _expert_mesh_fix(ctx: _Context) -> str | None:
    """The largest EP below the current one that divides the experts and makes PP·EP·ETP divide the world."""
    config = ctx.config
    experts = ctx.experts or config.ep
    options = [
        d
        for d in divisors(experts)
        if d < config.ep
        and ctx.world % (config.pp * d * effective_etp(config.etp, config.tp, d, ctx.version)) == 0
    ]
    return kv(model__expert_model_parallel_size=max(options)) if options else None


def rule_meshes(ctx: _Context) -> list[Finding]:
    config, world = ctx.config, ctx.world
    found: list[Finding] = []
    if world % ctx.model_size:
        found.append(
            finding(
                "dense-mesh",
                "error",
                msg(
                    "dense-mesh",
                    world=world,
                    tp=config.tp,
                    pp=config.pp,
                    cp=config.cp,
                    model_size=ctx.model_size,
                ),
                upstream_error=upstream.dense_world(world, config.tp, config.pp, config.cp),
                fix=_dense_mesh_fix(ctx),
            )
        )
    experts = ctx.experts
    if config.ep > 1 and ctx.arch is not None and not experts:
        found.append(
            finding(
                "ep-dense-model",
                "error",
                msg("ep-dense-model", ep=config.ep),
                upstream_error=upstream.EP_NEEDS_MOE,
                fix=kv(model__expert_model_parallel_size=1),
            )
        )
    if experts or config.ep > 1:
        expert_size = config.pp * config.ep * ctx.etp
        if world % expert_size:
            found.append(
                finding(
                    "expert-mesh",
                    "error",
                    msg(
                        "expert-mesh",
                        world=world,
                        pp=config.pp,
                        ep=config.ep,
                        etp=ctx.etp,
                        expert_size=expert_size,
                    ),
                    upstream_error=upstream.expert_world(world, expert_size),
                    fix=_expert_mesh_fix(ctx),
                )
            )
    if experts and experts % config.ep:
        fix_ep = max(d for d in divisors(experts) if d <= config.ep)
        found.append(
            finding(
                "experts-ep",
                "error",
                msg("experts-ep", ep=config.ep, experts=experts),
                upstream_error=upstream.EXPERTS_EP_ASSERT,
                fix=kv(model__expert_model_parallel_size=fix_ep),
            )
        )
    return found


def rule_batches(ctx: _Context) -> list[Finding]:
    config = ctx.config
    gbs, mbs, dp = config.global_batch_size, config.micro_batch_size, ctx.dp
    found: list[Finding] = []
    if config.packed_sequence and mbs and mbs > 1:
        size = config.packed_sequence_size or config.seq_length
        found.append(
            finding(
                "packed-mbs",
                "error",
                msg("packed-mbs", mbs=mbs),
                upstream_error=upstream.packed_mbs(mbs, gbs, size),
                fix=kv(train__micro_batch_size=1),
            )
        )
    if gbs and mbs and dp and gbs % (mbs * dp):
        step = mbs * dp
        nearest = max(step, round(gbs / step) * step)
        found.append(
            finding(
                "batch-divisible",
                "error",
                msg("batch-divisible", gbs=gbs, mbs=mbs, dp=dp, step=step),
                upstream_error=upstream.batch(gbs, mbs, dp),
                fix=kv(train__global_batch_size=nearest),
            )
        )
    return found


# ---------------------------------------------------------------- runner, data, checkpoints


def _flag(launcher: LauncherSpec, name: str):
    return next((flag for flag in launcher.flags if name in flag.names), None)


def public_mode(config: EffectiveConfig) -> str | None:
    """The run_recipe.py --mode value (0.6.0+) for this config."""
    if config.mode == "peft" or config.peft:
        return "dora" if (config.peft or "").lower() == "dora" else "lora"
    return config.mode


def train_mode(config: EffectiveConfig) -> str | None:
    if config.mode is None and not config.peft:
        return None
    return "pretrain" if config.mode == "pretrain" and not config.peft else "finetune"


def preset_train_modes(modes: list[str]) -> set[str]:
    return {"pretrain" if mode == "pretrain" else "finetune" for mode in modes}


def rule_dataset(ctx: _Context) -> list[Finding]:
    config, launcher = ctx.config, ctx.launcher
    name = config.dataset
    if name is None or launcher is None:
        return []
    flag = _flag(launcher, "--dataset")
    if flag is None:
        return [finding("dataset-flag", "error", msg("dataset-flag", version=ctx.version))]
    presets = {preset.name: preset for preset in launcher.dataset_presets}
    choices = flag.choices or sorted(presets)
    if name not in choices:
        return [
            finding(
                "dataset-unknown",
                "error",
                msg("dataset-unknown", name=name, version=ctx.version, choices=", ".join(choices)),
                upstream_error=upstream.invalid_choice("--dataset", name, list(choices)),
            )
        ]
    preset = presets.get(name)
    wanted = train_mode(config)
    if preset is None or not preset.modes or wanted is None or wanted in preset_train_modes(preset.modes):
        return []
    alternatives = [p.name for p in launcher.dataset_presets if wanted in preset_train_modes(p.modes)]
    fix = f"--dataset {alternatives[0]}" if alternatives else None
    mode_name = public_mode(config) or wanted
    if _flag(launcher, "--mode") is not None and "sft" in (_flag(launcher, "--mode").choices or []):
        return [
            finding(
                "mode-dataset",
                "error",
                msg(
                    "mode-dataset.rejected",
                    name=name,
                    loop="/".join(preset.modes),
                    version=ctx.version,
                    mode_name=mode_name,
                ),
                upstream_error=upstream.mode_dataset(mode_name, name),
                fix=fix,
            )
        ]
    return [
        finding(
            "mode-dataset",
            "warning",
            msg(
                "mode-dataset",
                version=ctx.version,
                name=name,
                loop="/".join(preset.modes),
                wanted=wanted,
                mode=config.mode or wanted,
            ),
            upstream_error=None,
            fix=fix,
        )
    ]


def looks_like_hub_id(path: str) -> bool:
    """'meta-llama/Llama-3.1-8B' is a hub id; '/ckpt', './x', '~/x', '${VAR}' are local paths."""
    text = path.strip()
    if text.startswith(("/", ".", "~", "$")) or text.startswith(("hf://", "https://")):
        return text.startswith(("hf://", "https://"))
    return bool(_HUB_ID.match(text))


def rule_peft_checkpoint(ctx: _Context) -> list[Finding]:
    config = ctx.config
    if not config.is_peft:
        return []
    path = config.pretrained_checkpoint
    if path is None:
        return [
            finding(
                "peft-checkpoint",
                "error",
                msg("peft-checkpoint"),
                upstream_error=upstream.PEFT_NO_CHECKPOINT,
                fix="checkpoint.pretrained_checkpoint=/path/to/megatron_or_hf_checkpoint",
            )
        ]
    if looks_like_hub_id(str(path)):
        return [
            finding(
                "peft-checkpoint",
                "error",
                msg("peft-checkpoint.hub-id", path=path),
                upstream_error=upstream.peft_invalid_checkpoint(str(path)),
                fix="checkpoint.pretrained_checkpoint=/path/to/local_checkpoint",
            )
        ]
    return []


def rule_seq_sync(ctx: _Context) -> list[Finding]:
    config = ctx.config
    user = config.user_overrides
    if "model.seq_length" not in user or "dataset.seq_length" in user:
        return []
    model_seq = config.model_seq_length
    dataset_seq = config.values.get("dataset.seq_length")
    if model_seq is None or dataset_seq is None or model_seq == dataset_seq:
        return []
    fix = kv(dataset__seq_length=model_seq, model__seq_length=model_seq)
    if ctx.traits.runner_syncs_seq_length:
        return [
            finding(
                "seq-length-sync",
                "warning",
                msg(
                    "seq-length-sync.undone",
                    model_seq=model_seq,
                    version=ctx.version,
                    dataset_seq=dataset_seq,
                ),
                upstream_error=None,
                fix=fix,
            )
        ]
    return [
        finding(
            "seq-length-sync",
            "error",
            msg("seq-length-sync", model_seq=model_seq, dataset_seq=dataset_seq),
            upstream_error=upstream.seq_mismatch(model_seq, int(dataset_seq)),
            fix=fix,
        )
    ]


def rule_energon_batch(ctx: _Context) -> list[Finding]:
    """Bridge builds the Energon loader with the dataset's own micro_batch_size and checks it against
    train.micro_batch_size (config.py:1196 v0.6.0): raising one alone fails before the first step."""
    config = ctx.config
    target = (config.dataset_target or "").rsplit(".", 1)[-1]
    if not ctx.traits.checks_energon_micro_batch or target != "EnergonDatasetConfig" or config.dataset:
        return []
    dataset_mbs, train_mbs = config.values.get("dataset.micro_batch_size"), config.micro_batch_size
    if not isinstance(dataset_mbs, int) or isinstance(dataset_mbs, bool) or train_mbs in (None, dataset_mbs):
        return []
    return [
        finding(
            "energon-mbs",
            "error",
            msg("energon-mbs", dataset_mbs=dataset_mbs, train_mbs=train_mbs),
            upstream_error=upstream.energon_micro_batch(dataset_mbs, int(train_mbs)),
            fix=kv(dataset__micro_batch_size=train_mbs),
        )
    ]


# ---------------------------------------------------------------- CUDA graphs


def _full_iteration(ctx: _Context) -> bool:
    config = ctx.config
    if ctx.traits.full_iteration_impl:
        return config.cuda_graph_impl == "full_iteration"
    return config.cuda_graph_impl == "local" and "full_iteration" in config.cuda_graph_scope


def _full_iteration_fix(ctx: _Context) -> str:
    if ctx.traits.full_iteration_impl:
        return "model.cuda_graph_impl=full_iteration rerun_state_machine.check_for_nan_in_loss=false"
    return (
        "model.cuda_graph_impl=local model.cuda_graph_scope=[full_iteration] "
        "rerun_state_machine.check_for_nan_in_loss=false"
    )


def _launcher_owned(ctx: _Context, keys: tuple[str, ...]) -> Severity:
    """'info' when a benchmark recipe leaves these settings to the performance launcher, else 'error'.

    The performance path (setup_experiment.py / perf overrides) sets the TE RNG tracker and the NaN check
    for CUDA-graph runs at launch time, so a statically read benchmark recipe can look wrong without
    being wrong. Once the user overrides one of the keys, the rule applies in full.
    """
    if ctx.config.kind == "benchmark" and not any(key in ctx.config.user_overrides for key in keys):
        return "info"
    return "error"


def rule_cuda_graphs(ctx: _Context) -> list[Finding]:
    config = ctx.config
    if not config.graphs_enabled:
        return []
    found: list[Finding] = []
    rng_keys = ("model.use_te_rng_tracker", "rng.te_rng_tracker", "model.cuda_graph_impl")
    if not config.use_te_rng_tracker:
        found.append(
            finding(
                "cuda-graph-rng",
                _launcher_owned(ctx, rng_keys),
                msg("cuda-graph-rng"),
                upstream_error=upstream.CUDA_GRAPH_RNG,
                fix="model.use_te_rng_tracker=true rng.te_rng_tracker=true",
            )
        )
    full_iteration = _full_iteration(ctx)
    if (config.recompute_granularity or "").lower() == "full" and not full_iteration:
        found.append(
            finding(
                "cuda-graph-full-recompute",
                "error",
                msg(
                    "cuda-graph-full-recompute",
                    graph=msg(
                        "cuda-graph-full-recompute.impl"
                        if ctx.traits.full_iteration_impl
                        else "cuda-graph-full-recompute.scope"
                    ),
                ),
                upstream_error=upstream.CUDA_GRAPH_FULL_RECOMPUTE,
                fix=_full_iteration_fix(ctx),
            )
        )
    nan_keys = (
        "rerun_state_machine.check_for_nan_in_loss",
        "model.cuda_graph_impl",
        "model.cuda_graph_scope",
    )
    if full_iteration and config.check_for_nan_in_loss:
        found.append(
            finding(
                "cuda-graph-nan-check",
                _launcher_owned(ctx, nan_keys),
                msg("cuda-graph-nan-check"),
                upstream_error=upstream.CUDA_GRAPH_NAN_CHECK,
                fix="rerun_state_machine.check_for_nan_in_loss=false",
            )
        )
    if config.packed_sequence:
        found.extend(_graphs_with_packing(ctx, full_iteration))
    return found


def _graphs_with_packing(ctx: _Context, full_iteration: bool) -> list[Finding]:
    config = ctx.config
    scope = config.cuda_graph_scope
    captures_attention = full_iteration or (
        config.cuda_graph_impl == "transformer_engine" and (not scope or "attn" in scope)
    )
    if ctx.traits.offline_packing_graph_checks:
        uses_graphs = full_iteration or config.cuda_graph_impl == "transformer_engine"
        if uses_graphs and not config.pad_to_max_length:
            return [
                finding(
                    "cuda-graph-packed",
                    "error",
                    msg("cuda-graph-packed.pad"),
                    upstream_error=upstream.OFFLINE_PACKING_GRAPH_PAD,
                    fix="dataset.pad_to_max_length=true dataset.offline_packing_specs.pad_cu_seqlens=true",
                )
            ]
        if captures_attention and not config.pad_cu_seqlens:
            return [
                finding(
                    "cuda-graph-packed",
                    "error",
                    msg("cuda-graph-packed.cu-seqlens"),
                    upstream_error=upstream.PACKED_GRAPH_CU_SEQLENS,
                    fix="dataset.offline_packing_specs.pad_cu_seqlens=true",
                )
            ]
        return []
    if config.cuda_graph_impl == "transformer_engine" and captures_attention:
        return [
            finding(
                "cuda-graph-packed",
                "error",
                msg("cuda-graph-packed", version=ctx.version),
                upstream_error=upstream.CUDA_GRAPH_PACKED,
                fix=_full_iteration_fix(ctx),
            )
        ]
    return []


# ---------------------------------------------------------------- skill pitfalls


def rule_fsdp(ctx: _Context) -> list[Finding]:
    config, cluster = ctx.config, ctx.cluster
    found: list[Finding] = []
    spec = ctx.gpu
    if config.fsdp and config.tp > 1 and not spec.blackwell:
        found.append(
            finding(
                "fsdp-tp-hopper",
                "warning",
                msg("fsdp-tp-hopper", tp=config.tp, gpu_label=cluster.gpu_label),
                upstream_error=None,
                fix=kv(model__tensor_model_parallel_size=2) if config.tp > 2 else None,
            )
        )
    arch = ctx.arch
    qwen35 = arch is not None and (
        "qwen35" in (config.family or "").replace(".", "").replace("_", "")
        or "qwen3.5" in (arch.hf_model_id or "").lower()
    )
    if (
        config.fsdp
        and arch is not None
        and arch.is_vlm
        and arch.num_moe_experts
        and qwen35
        and not spec.blackwell
    ):
        found.append(
            finding("qwen35-vl-moe-fsdp", "warning", msg("qwen35-vl-moe-fsdp", gpu_label=cluster.gpu_label))
        )
    return found


def rule_cpu_offloading(ctx: _Context) -> list[Finding]:
    """Megatron-Core refuses CPU activation offloading with pipeline parallelism, with recompute, with
    per-layer CUDA graphs, and for all layers at once."""
    config = ctx.config
    if not config.cpu_offloading:
        return []
    found: list[Finding] = []
    layers = ctx.arch.num_layers if ctx.arch else None
    count = config.cpu_offloading_num_layers
    if layers and count is not None and not 0 <= count < layers:
        found.append(
            finding(
                "offload-layers",
                "error",
                msg("offload-layers", count=count, layers=layers),
                upstream_error=upstream.offload_layers(layers),
                fix=kv(model__cpu_offloading_num_layers=layers // 2),
            )
        )
    if config.pp > 1:
        found.append(
            finding(
                "offload-pp",
                "error",
                msg("offload-pp", pp=config.pp),
                upstream_error=upstream.OFFLOAD_PP,
                fix=kv(model__cpu_offloading=False),
            )
        )
    if config.recompute_granularity:
        found.append(
            finding(
                "offload-recompute",
                "error",
                msg("offload-recompute", recompute_granularity=config.recompute_granularity),
                upstream_error=upstream.OFFLOAD_RECOMPUTE,
                fix=kv(model__recompute_granularity=None),
            )
        )
    if config.graphs_enabled and config.cuda_graph_impl != "full_iteration":
        found.append(
            finding(
                "offload-cuda-graphs",
                "error",
                msg("offload-cuda-graphs", cuda_graph_impl=config.cuda_graph_impl),
                upstream_error=upstream.OFFLOAD_GRAPHS,
                fix=kv(model__cuda_graph_impl="none"),
            )
        )
    return found


def rule_moe_pitfalls(ctx: _Context) -> list[Finding]:
    config, arch, cluster = ctx.config, ctx.arch, ctx.cluster
    if arch is None or not arch.num_moe_experts:
        return []
    found: list[Finding] = []
    if config.overlap_grad_reduce and cluster.gpu_type.lower() == "h100":
        found.append(
            finding(
                "moe-overlap-grad-reduce-h100",
                "warning",
                msg("moe-overlap-grad-reduce-h100"),
                upstream_error=None,
                fix=kv(ddp__overlap_grad_reduce=False),
            )
        )
    experts = arch.num_moe_experts
    if not estimable(arch):
        return found
    hbm = ctx.gpu.usable_bytes

    def expert_state(ep: int) -> float:
        """Expert weights + grads, plus Adam state sharded over the expert data-parallel ranks."""
        etp = effective_etp(config.etp, config.tp, ep, ctx.version)
        per_param = 2.2 if config.is_peft else 6.0 + 12.0 / max(ctx.world // (config.pp * ep * etp), 1)
        return expert_params_per_gpu(arch, pp=config.pp, ep=ep, etp=etp) * per_param

    def fits_world(ep: int) -> bool:
        return ctx.world % (config.pp * ep * effective_etp(config.etp, config.tp, ep, ctx.version)) == 0

    expert_bytes = expert_state(config.ep)
    limit = EXPERT_SHARE_LIMIT * hbm
    if expert_bytes > limit:
        larger = [d for d in divisors(experts) if d > config.ep and fits_world(d)]
        enough = [d for d in larger if expert_state(d) <= limit]
        better = enough[:1] or larger[-1:]  # the smallest EP that is enough, else the most relief available
        # no larger EP divides these GPUs (EP8 on 8 GPUs): only more GPUs shard the experts' state
        advice = msg("ep-too-low.raise_ep") if larger else msg("ep-too-low.more_gpus", world=ctx.world)
        found.append(
            finding(
                "ep-too-low",
                "warning",
                msg(
                    "ep-too-low",
                    ep=config.ep,
                    expert_gb=expert_bytes / 1e9,
                    gpu_label=cluster.gpu_label,
                    hbm_gb=hbm / 1e9,
                    advice=advice,
                ),
                upstream_error=None,
                fix=kv(model__expert_model_parallel_size=better[0]) if better else None,
            )
        )
    return found


def rule_vlm_data(ctx: _Context) -> list[Finding]:
    config, arch = ctx.config, ctx.arch
    if arch is None or not arch.is_vlm or not config.is_finetune or config.dataset is None:
        return []
    name = config.dataset.lower()
    if "vlm" in name or name in VLM_PRESETS:
        return []
    return [finding("vlm-no-images", "warning", msg("vlm-no-images", dataset=config.dataset))]


def rule_vlm_frozen(ctx: _Context) -> list[Finding]:
    """A VLM recipe that freezes parts of the model (freeze_language_model / freeze_vision_model /
    freeze_vision_projection; Bridge's `freeze` sets requires_grad=False) trains only the rest, which a user
    taking it as a pretraining or fine-tuning start should know. LoRA freezes the base anyway."""
    config = ctx.config
    frozen = [part for part in FROZEN_PARTS if config.values.get(f"model.freeze_{part}") is True]
    if not frozen or config.is_peft:
        return []
    trained = [part for part in FROZEN_PARTS if part not in frozen]
    if not trained:
        return []  # nothing trains: not a training setup this rule can describe

    def named(parts: Sequence[str]) -> Message:  # one or two parts: the third is on the other side
        first = msg(f"vlm-frozen.{parts[0]}")
        if len(parts) == 1:
            return first
        return msg("vlm-frozen.two", first=first, second=msg(f"vlm-frozen.{parts[1]}"))

    flags = " ".join(f"model.freeze_{part}=true" for part in frozen)
    return [
        finding(
            "vlm-frozen",
            "info",
            msg("vlm-frozen", frozen=named(frozen), trained=named(trained), flags=flags),
            fix=kv(**{f"model__freeze_{part}": False for part in frozen}),
        )
    ]


# Tensor-core formats per GPU generation: FP8 from Hopper (Ada too, not in our GPU table), MXFP8 and NVFP4
# from Blackwell.
_PRECISION_NEEDS = {
    "fp8cs": ("FP8", ("hopper", "blackwell", "rubin")),
    "fp8ds": ("FP8", ("hopper", "blackwell", "rubin")),
    "fp8sc": ("FP8", ("hopper", "blackwell", "rubin")),
    "fp8mx": ("MXFP8", ("blackwell", "rubin")),
    "nvfp4": ("NVFP4", ("blackwell", "rubin")),
}


def precision_label(precision: str) -> str:
    """How a precision code is written to users: fp8cs -> FP8, fp8mx -> MXFP8, nvfp4 -> NVFP4."""
    return _PRECISION_NEEDS[precision][0] if precision in _PRECISION_NEEDS else precision.upper()


def precision_finding(
    precision: str | None, gpu_type: str | None, spec: GpuSpec | None, *, kept: str | None = None
) -> Finding | None:
    """An error when the GPU has no tensor cores for the training precision (FP8 on A100, MXFP8 on H100),
    with the best precision it does have as the fix; `kept`: the request was dropped and the plan keeps
    this precision instead."""
    if precision not in _PRECISION_NEEDS or not gpu_type or spec is None:
        return None
    name, needs = _PRECISION_NEEDS[precision]
    generation = spec.generation
    if generation in needs:
        return None
    fallback = "bf16_with_fp8_current_scaling_mixed" if generation == "hopper" else "bf16_mixed"
    generations = " or ".join(g.title() for g in needs)
    gpu = gpu_label(gpu_type)
    if kept:
        return finding(
            "precision-gpu",
            "warning",
            msg(
                "precision-gpu.kept",
                name=name,
                generations=generations,
                gpu=gpu,
                value1=generation.title(),
                value2=kept.upper(),
            ),
            upstream_error=upstream.FP8_DEVICE if generation == "ampere" else None,
        )
    return finding(
        "precision-gpu",
        "error",
        msg("precision-gpu", name=name, generations=generations, gpu=gpu, value1=generation.title()),
        upstream_error=upstream.FP8_DEVICE if generation == "ampere" else None,
        fix=kv(mixed_precision=fallback),
    )


def rule_precision(ctx: _Context) -> list[Finding]:
    """A `mixed_precision` preset the release does not register, or a precision the GPU cannot run."""
    preset = ctx.config.values.get("mixed_precision")
    presets = ctx.launcher.mixed_precision_presets if ctx.launcher else []
    if preset is not None and not isinstance(preset, str):
        preset = str(preset)  # a list or number where Bridge expects a preset name
    name = preset.replace("-", "_") if preset is not None else None
    if name is not None and presets and name not in presets:
        nearest = difflib.get_close_matches(name, presets, n=1, cutoff=0.5)
        return [
            finding(
                "precision-unknown",
                "error",
                msg("precision-unknown", preset=preset, version=ctx.version),
                upstream_error=upstream.unknown_mixed_precision(str(preset), presets),
                fix=kv(mixed_precision=nearest[0]) if nearest else None,
            )
        ]
    found = precision_finding(ctx.config.precision, ctx.cluster.gpu_type, ctx.gpu)
    return [found] if found else []


def rule_single_gpu(ctx: _Context) -> list[Finding]:
    config = ctx.config
    if ctx.world != 1 or config.is_peft or config.mode not in ("pretrain", "sft"):
        return []
    return [finding("single-gpu-full-training", "warning", msg("single-gpu-full-training", mode=config.mode))]


def rule_override_sections(ctx: _Context) -> list[Finding]:
    found = []
    for key in ctx.config.user_overrides:
        if key.startswith("training."):
            fixed = "train." + key.removeprefix("training.")
            found.append(
                finding(
                    "override-section",
                    "error",
                    msg("override-section", key=key),
                    upstream_error=None,
                    fix=f"{fixed}={ctx.config.user_overrides[key]}",
                )
            )
    return found


RULES: list[Rule] = [
    rule_tp_heads,
    rule_tp_query_groups,
    rule_tp_mamba,
    rule_tp_nvlink,
    rule_sequence_parallel,
    rule_pipeline,
    rule_context_parallel,
    rule_meshes,
    rule_batches,
    rule_dataset,
    rule_peft_checkpoint,
    rule_seq_sync,
    rule_energon_batch,
    rule_cuda_graphs,
    rule_fsdp,
    rule_cpu_offloading,
    rule_moe_pitfalls,
    rule_vlm_data,
    rule_vlm_frozen,
    rule_single_gpu,
    rule_precision,
    rule_override_sections,
]
