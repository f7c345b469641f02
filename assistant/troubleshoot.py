"""An error on a named config: the upstream check that raised it, why here, and a fix that re-validates.

1. The pasted error is matched to the upstream assertion that raises it (the texts of rules/upstream.py).
2. The rule module runs on the concrete config: the recipe's defaults in the question's version, then the
   user's sizes and GPUs.
3. The cause is said in the user's numbers ("92 layers over PP 8 leaves 11.5 per stage").
4. The fix comes from the rules' own fixes and is re-checked by them (rules/repair.py).
When nothing in the config explains the error, the answer says so and lists the checks known to raise that
text, most likely first, never a guessed cause. Pure apart from the model lookup the caller passes in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assistant.catalog import records_named
from assistant.errors import UserError
from assistant.kb import KnowledgeBase
from assistant.messages import words
from assistant.models import recipe_arch
from assistant.recommend import cluster_for, select_recipe, typed_overrides
from assistant.records import Catalog, Cluster, Finding, ModelArch, RecipeRecord, SelfCheck, Slots
from assistant.rules import upstream
from assistant.rules.config import EffectiveConfig, build_config, parse_overrides
from assistant.rules.findings import effective_etp, head_shapes, render_value
from assistant.rules.repair import LAUNCH_INPUT_RULES, Repair, errors_of, repair
from assistant.rules.validate import (
    FIRST_STAGE_LAYERS,
    LAST_STAGE_LAYERS,
    PIPELINE_LAYOUT,
    layout_stages,
    validate,
)
from assistant.rules.versions import BUNDLED_VERSIONS, RUNNER_SYNC_SOURCES, traits

ArchLookup = Callable[[str | None], ModelArch | None]
ETP_KEY = "model.expert_tensor_parallel_size"
# The first bundled release whose training entry sets an unset ETP to 1 (rules/versions.py).
ETP_DEFAULT_SINCE = next(v for v in BUNDLED_VERSIONS if traits(v).etp_defaults_to_one)


@dataclass(frozen=True)
class ErrorSignature:
    """One upstream error text: the rules that raise it (most likely cause first) and where it is raised."""

    rules: tuple[str, ...]
    where: str
    texts: tuple[str, ...]  # upstream texts (numbers are placeholders) or distinctive phrases of them
    patterns: tuple[re.Pattern[str], ...] = field(default=(), compare=False)


def _pattern(text: str) -> re.Pattern[str]:
    """An upstream text with its numbers as \\d+ and any run of whitespace as \\s+."""
    escaped = re.escape(" ".join(text.split()))
    escaped = re.sub(r"9\d\d\d", r"\\d+", escaped).replace(r"\ ", r"\s+")
    return re.compile(escaped, re.IGNORECASE)


def _signature(rules: tuple[str, ...], where: str, *texts: str) -> ErrorSignature:
    """Each text matches whole or by its first sentence, which is what a pasted log line often keeps."""
    heads = {t.split(". ", 1)[0] for t in texts} - set(texts)
    patterns = tuple(_pattern(t) for t in (*texts, *sorted(h for h in heads if len(h) >= 25)))
    return ErrorSignature(rules, where, texts, patterns)


# The numbers 9001.. stand for any number; a phrase stands for a text quoted only in part.
SIGNATURES = (
    _signature(
        ("pp-layers",),
        "megatron/core/transformer/transformer_block.py",
        upstream.layers_pp(9001, 9002),
        upstream.layers_pp(0, 0, with_numbers=False),
    ),
    _signature(("vp-layers",), "megatron/bridge/models/gpt_provider.py", upstream.VP_CHUNKS),
    _signature(
        ("pp-uneven",),
        "megatron/core/transformer/transformer_config.py",
        upstream.uneven_edge_vp("first", 9001, 9002),
        upstream.uneven_edge_vp("last", 9001, 9002),
        upstream.uneven_middle_pp(9001, 9002),
        upstream.uneven_middle_vp(9001, 9002),
        upstream.uneven_mismatch(9001, 9002),
    ),  # fmt: skip
    _signature(
        ("pp-layout",),
        "megatron/core/transformer/transformer_config.py",
        upstream.layout_vp(9001, 9002),
        upstream.layout_pp(9001, 9002),
        "conflicts with pipeline_model_parallel_layout",
        "pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size",
    ),  # fmt: skip
    _signature(("vp-needs-pp",), "megatron/core/model_parallel_config.py", upstream.VP_WITHOUT_PP),
    _signature(
        ("expert-mesh",),
        "megatron/core/parallel_state.py",
        upstream.expert_world(9001, 9002),
        "expert_tensor_model_pipeline size",
    ),  # fmt: skip
    _signature(
        ("dense-mesh",),
        "megatron/bridge/training/config.py",
        upstream.dense_world(9001, 9002, 9003, 9004),
        "is not divisible by total_model_size",
    ),  # fmt: skip
    _signature(
        ("batch-divisible",), "megatron/core/num_microbatches_calculator.py", upstream.batch(9001, 9002, 9003)
    ),
    _signature(
        ("tp-heads",), "megatron/core/transformer/transformer_config.py", upstream.heads_tp(9001, 9002)
    ),
    _signature(
        ("tp-query-groups",),
        "megatron/core/transformer/transformer_config.py",
        upstream.query_groups_tp(9001, 9002, True),
        upstream.query_groups_tp(9001, 9002, False),
    ),  # fmt: skip
    _signature(
        ("tp-mamba",), "megatron/core/ssm/mamba_mixer.py", upstream.MAMBA_HEADS_TP, upstream.MAMBA_GROUPS_TP
    ),
    _signature(("experts-ep",), "megatron/core/transformer/moe/moe_layer.py", upstream.EXPERTS_EP_ASSERT),
    _signature(("ep-dense-model",), "megatron/core/transformer/transformer_config.py", upstream.EP_NEEDS_MOE),
    _signature(("cp-seq",), "megatron/bridge/training/config.py", upstream.CP_SEQ),
    _signature(("packed-mbs",), "megatron/bridge/training/config.py", upstream.packed_mbs(9001, None, None)),
    _signature(("seq-length-sync",), "megatron/bridge/training/config.py", upstream.seq_mismatch(9001, 9002)),
    _signature(
        ("energon-mbs",),
        "megatron/bridge/training/config.py",
        upstream.energon_micro_batch(9001, 9002),
        "EnergonDatasetConfig.micro_batch_size must match",
    ),  # fmt: skip
    _signature(
        ("cuda-graph-packed",),
        "megatron/core/transformer/cuda_graphs.py",
        upstream.CUDA_GRAPH_PACKED,
        upstream.OFFLINE_PACKING_GRAPH_PAD,
        upstream.PACKED_GRAPH_CU_SEQLENS,
    ),  # fmt: skip
    _signature(
        ("cuda-graph-full-recompute",),
        "megatron/core/transformer/transformer_config.py",
        upstream.CUDA_GRAPH_FULL_RECOMPUTE,
    ),  # fmt: skip
    _signature(
        ("cuda-graph-rng",), "megatron/core/transformer/transformer_config.py", upstream.CUDA_GRAPH_RNG
    ),
    _signature(
        ("cuda-graph-nan-check",), "megatron/bridge/training/config.py", upstream.CUDA_GRAPH_NAN_CHECK
    ),
    _signature(
        ("finetune-cp-loss",),
        "megatron/bridge/training/config.py",
        upstream.FINETUNE_CP_PER_TOKEN,
        upstream.FINETUNE_CP_AVERAGE,
    ),  # fmt: skip
    _signature(("precision-gpu",), "transformer_engine/pytorch/fp8.py", upstream.FP8_DEVICE),
    _signature(("peft-checkpoint",), "megatron/bridge/training/config.py", upstream.PEFT_NO_CHECKPOINT),
    # Named only by where it is raised ("RuntimeError in initialize_model_parallel"): the meshes it checks.
    _signature(
        ("expert-mesh", "dense-mesh"),
        "megatron/core/parallel_state.py",
        "initialize_model_parallel",
        "is not divisible by",
    ),  # fmt: skip
)


def match_error(error_text: str | None) -> ErrorSignature | None:
    """The first signature one of whose texts occurs in the pasted error."""
    if not error_text:
        return None
    text = " ".join(error_text.split())
    return next((s for s in SIGNATURES if any(p.search(text) for p in s.patterns)), None)


@dataclass(frozen=True)
class Diagnosis:
    """What the rule module says about an error on the user's config."""

    signature: ErrorSignature | None
    record: RecipeRecord | None = None
    cluster: Cluster | None = None
    config: EffectiveConfig | None = None
    arch: ModelArch | None = None
    findings: list[Finding] = field(default_factory=list)  # every finding on the user's config
    causes: list[Finding] = field(default_factory=list)  # errors of the rules that raise the quoted text
    unset_etp: bool = False  # the cause appears only with Megatron-Core's own default ETP = TP
    repair: Repair | None = None
    alternatives: list[dict[str, Any]] = field(default_factory=list)  # other fixes the rules accept
    broken: SelfCheck | None = None  # the recipe's own defaults fail the same check on its own GPUs
    assumed_gpus: bool = False  # no GPU count given: the recipe's, or the fewest its layout uses
    # The causes appear only without what run_recipe.py does after the overrides (an older checkout, another
    # entry point): this version's launcher repairs them itself.
    unsynced: bool = False

    @property
    def explained(self) -> bool:
        return bool(self.causes)


def diagnose(slots: Slots, catalog: Catalog, arch_of: ArchLookup, kb: KnowledgeBase) -> Diagnosis | None:
    """The rule module on the config the question names, read against its error; None when the question
    names neither a known error text nor a recipe (the guide passages are all there is to give)."""
    signature = match_error(slots.error_text)
    selection = select_recipe(catalog, slots, arch_of)
    if selection is None:
        return Diagnosis(signature) if signature else None
    record = selection.record
    cluster = cluster_for(slots, record)
    if cluster is None:
        return Diagnosis(signature, record) if signature else None
    version = catalog.version
    overrides = config_overrides(slots)
    config = build_config(record, overrides, version=version, dataset=slots.dataset)
    model_parallel = config.tp * config.pp * config.cp
    assumed_gpus = slots.num_gpus is None and slots.num_nodes is None
    if assumed_gpus and cluster.num_gpus % model_parallel:
        # "CP=4 on qwen3_30b_a3b_sft_config" states a layout, not a GPU count: check it on the fewest GPUs it
        # can use (at least the recipe's), as `validate` answers do.
        count = -(-cluster.num_gpus // model_parallel) * model_parallel
        cluster = cluster.model_copy(update={"num_gpus": count})
    arch = recipe_arch(record, kb)
    findings = validate(
        config, arch, cluster, version, catalog.launcher, gpu=kb.gpu_spec(cluster.gpu_type)
    )
    rules = signature.rules if signature else ()
    causes = [f for f in findings if f.id in rules and (f.severity == "error" or _hybrid_split(f, arch))]
    unset_etp = False
    fixed: Repair | None = None
    unsynced = _unsynced_causes(config, findings, rules, arch, cluster, catalog, kb) if not causes else []
    if unsynced:
        causes = unsynced
        fixed = _own_fix(unsynced[0], record, overrides, arch, cluster, version, kb)
    if signature is None and not causes and not any(f.severity == "error" for f in findings):
        return None
    if not causes and "expert-mesh" in rules and config.etp is None and config.ep > 1:
        # Bridge's training entry fills an unset ETP with 1 (0.6.0+); a path straight into Megatron-Core's
        # initialize_model_parallel does not, and Megatron-Core then uses TP. Check that reading too.
        as_core = {**overrides, ETP_KEY: config.tp}
        core_errors = errors_of(record, as_core, arch, cluster, version, hardware=kb.hardware)
        causes = [f for f in core_errors if f.id == "expert-mesh"]
        if causes:
            unset_etp = True
            pinned = {ETP_KEY: 1}
            remaining = errors_of(
                record,
                {**overrides, **pinned},
                arch,
                cluster,
                version,
                ignore=LAUNCH_INPUT_RULES,
                hardware=kb.hardware,
            )
            fixed = Repair(fix=pinned, remaining=remaining)
    errors = [f for f in findings if f.severity == "error" and f.id not in LAUNCH_INPUT_RULES]
    if fixed is None and (causes or errors) and not unsynced:
        fixed = repair(
            record,
            overrides,
            arch,
            cluster,
            version,
            ignore=LAUNCH_INPUT_RULES,
            hardware=kb.hardware,
        )
    if (fixed is None or not fixed.fix) and causes and all(_hybrid_split(f, arch) for f in causes):
        fixed = _hybrid_fix(causes[0], record, overrides, arch, cluster, version, kb)
    uneven = _has(causes, "pp-layers")
    alternatives = _uneven_stages(record, overrides, arch, cluster, version, config, kb) if uneven else []
    check = record.self_check
    broken = (
        check if check and not check.passes and {f.id for f in causes} & set(check.failing_rules) else None
    )
    return Diagnosis(
        signature, record, cluster, config, arch, findings, causes, unset_etp, fixed, alternatives, broken,
        assumed_gpus, bool(unsynced),
    )  # fmt: skip


# Rules whose failure run_recipe.py can repair after the overrides (rules/versions.py RUNNER_SYNC_SOURCES).
SYNCED_RULES = frozenset(RUNNER_SYNC_SOURCES)


def _unsynced_causes(
    config: EffectiveConfig,
    findings: list[Finding],
    rules: tuple[str, ...],
    arch: ModelArch | None,
    cluster: Cluster,
    catalog: Catalog,
    kb: KnowledgeBase,
) -> list[Finding]:
    """Errors the config raises without run_recipe.py's repair after the overrides (rebuilt layout, cleared
    edge-stage sizes) that it does not raise with it: what an older checkout or another entry point hits.
    Only the rules the quoted error names, or any such rule when no error text is quoted."""
    if not config.runner_sync:
        return []
    raw = config.model_copy(update={"runner_sync": False})
    gpu = kb.gpu_spec(cluster.gpu_type)
    before = {f.id for f in findings if f.severity == "error"}
    return [
        f
        for f in validate(raw, arch, cluster, catalog.version, catalog.launcher, gpu=gpu)
        if f.severity == "error"
        and f.id in SYNCED_RULES
        and f.id not in before
        and (not rules or f.id in rules)
    ]


def _own_fix(
    cause: Finding,
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    kb: KnowledgeBase,
) -> Repair | None:
    """The finding's own fix, re-checked by the rule module (an explicit override the launcher keeps)."""
    try:
        pinned = parse_overrides((cause.fix or "").split()) if cause.fix else {}
    except UserError:
        return None
    if not pinned:
        return None
    return _rechecked(pinned, record, overrides, arch, cluster, version, kb)


SEQ_KEYS = ("model.seq_length", "dataset.seq_length")


def config_overrides(slots: Slots) -> dict[str, Any]:
    """The question's sizes as overrides, with a sequence length said in prose ("seq_length 4097", "32K")
    on both the model and the dataset: it is part of the config that failed, as a KEY=VALUE would be."""
    overrides = typed_overrides(slots)
    if slots.seq_length and not any(key in overrides for key in SEQ_KEYS):
        overrides = {**overrides, **dict.fromkeys(SEQ_KEYS, slots.seq_length)}
    return overrides


def _hybrid_split(finding: Finding, arch: ModelArch | None) -> bool:
    """On a hybrid stack (Mamba / GDN) an uneven PP split is only a warning in the rule module, since a
    layer pattern may place the layers itself; a quoted even-split error shows this run did not."""
    return bool(arch and arch.is_hybrid and finding.id in {"pp-layers", "vp-layers"})


def _hybrid_fix(
    cause: Finding,
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    kb: KnowledgeBase,
) -> Repair | None:
    """The warning's own fix (a PP or VP that divides), re-checked by the rule module: `repair` fixes only
    errors, and on a hybrid stack the uneven split is a warning."""
    key, _, value = (cause.fix or "").partition("=")
    if not key or not value.isdigit():
        return None
    return _rechecked({key: int(value)}, record, overrides, arch, cluster, version, kb)


def _rechecked(
    pinned: dict[str, Any],
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    kb: KnowledgeBase,
) -> Repair:
    """A finding's fix with the errors the rule module still finds on the config once it is applied."""
    remaining = errors_of(
        record, {**overrides, **pinned}, arch, cluster, version, ignore=LAUNCH_INPUT_RULES,
        hardware=kb.hardware,
    )  # fmt: skip
    return Repair(fix=pinned, remaining=remaining)


def _has(findings: list[Finding], rule_id: str) -> bool:
    return any(f.id == rule_id for f in findings)


def _uneven_stages(
    record: RecipeRecord,
    overrides: dict[str, Any],
    arch: ModelArch | None,
    cluster: Cluster,
    version: str,
    config: EffectiveConfig,
    kb: KnowledgeBase,
) -> list[dict[str, Any]]:
    """Keep the user's PP and give the first and last stages fewer layers, so the middle stages split evenly
    (Megatron's num_layers_in_first/last_pipeline_stage); only a split the rule module accepts."""
    if arch is None or config.pp < 3:
        return []
    layers, pp = arch.num_layers, config.pp
    for edge in range(layers // pp, 0, -1):
        middle, rest = divmod(layers - 2 * edge, pp - 2)
        if rest or middle < edge:
            continue
        split = {FIRST_STAGE_LAYERS: edge, LAST_STAGE_LAYERS: edge}
        if config.vp and middle % config.vp:
            continue
        if not errors_of(
            record,
            {**overrides, **split},
            arch,
            cluster,
            version,
            ignore=LAUNCH_INPUT_RULES,
            hardware=kb.hardware,
        ):
            return [split]
    return []


# ---------------------------------------------------------------- the answer


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def cause_line(finding: Finding, diag: Diagnosis, lang: str) -> str:
    """One failed check, in the user's own numbers."""
    config, cluster, arch = diag.config, diag.cluster, diag.arch
    assert config is not None and cluster is not None
    world = cluster.num_gpus
    if finding.id == "pp-layers" and arch is not None:
        layers, pp = arch.num_layers, config.pp
        line = words(lang, "troubleshoot.cause.pp_layers", layers=layers, pp=pp, per=_number(layers / pp))
        if finding.severity != "error":
            line += " " + words(lang, "troubleshoot.cause.pp_layers.hybrid")
        return line
    if finding.id == "pp-layout":
        return _layout_line(diag, lang)
    if finding.id == "pp-uneven" and arch is not None and finding.upstream_error == upstream.uneven_mismatch(
        *_middle(diag)
    ):
        edges = [n for n in _edge_counts(config) if n is not None]
        middle, middle_pp = _middle(diag)
        line = words(
            lang, "troubleshoot.pp_uneven.mismatch", layers=arch.num_layers, pp=config.pp,
            edges=words(lang, "sep.list").join(map(str, edges)), middle=middle, middle_pp=middle_pp,
        )  # fmt: skip
        if arch.num_layers % config.pp == 0:
            line += " " + words(
                lang, "troubleshoot.pp_uneven.even", layers=arch.num_layers, pp=config.pp,
                per=arch.num_layers // config.pp,
            )  # fmt: skip
        return line
    if finding.id == "pp-uneven" and arch is not None and config.pp > 1:
        edges = [
            n
            for n in (config.values.get(FIRST_STAGE_LAYERS), config.values.get(LAST_STAGE_LAYERS))
            if isinstance(n, int)
        ]
        middle_pp = config.pp - len(edges)
        middle = arch.num_layers - sum(edges)
        per = _number(middle / middle_pp) if middle_pp else "0"
        edges_text = words(lang, "sep.list").join(map(str, edges))
        vp_text = (
            words(lang, "troubleshoot.cause.pp_uneven.vp", vp=config.vp)
            if config.vp
            else words(lang, "sep.end")
        )
        return words(
            lang,
            "troubleshoot.cause.pp_uneven",
            layers=arch.num_layers,
            edges_text=edges_text,
            middle=middle,
            middle_pp=middle_pp,
            per=per,
            vp_text=vp_text,
        )
    if finding.id == "vp-layers" and arch is not None and config.vp:
        per_stage = arch.num_layers // config.pp
        return words(
            lang,
            "troubleshoot.cause.vp_layers",
            per_stage=per_stage,
            vp=config.vp,
            per=_number(per_stage / config.vp),
        )
    if finding.id == "expert-mesh":
        etp = config.tp if diag.unset_etp else effective_etp(config.etp, config.tp, config.ep, config.version)
        size = config.pp * config.ep * etp
        return words(
            lang,
            "troubleshoot.cause.expert_mesh",
            pp=config.pp,
            ep=config.ep,
            etp=etp,
            size=size,
            world=world,
        )
    if finding.id == "dense-mesh":
        size = config.tp * config.pp * config.cp
        return words(
            lang,
            "troubleshoot.cause.dense_mesh",
            tp=config.tp,
            pp=config.pp,
            cp=config.cp,
            size=size,
            world=world,
        )
    if finding.id == "batch-divisible" and config.global_batch_size and config.micro_batch_size:
        dp = world // (config.tp * config.pp * config.cp)
        step = config.micro_batch_size * dp
        gbs = config.global_batch_size
        return words(
            lang,
            "troubleshoot.cause.batch",
            gbs=gbs,
            mbs=config.micro_batch_size,
            dp=dp,
            step=step,
            per=_number(gbs / step),
        )
    return finding.message if lang == "en" else finding.message_zh


def _edge_counts(config: EffectiveConfig) -> list[int | None]:
    values = [config.values.get(FIRST_STAGE_LAYERS), config.values.get(LAST_STAGE_LAYERS)]
    return [v if isinstance(v, int) and not isinstance(v, bool) else None for v in values]


def _middle(diag: Diagnosis) -> tuple[int, int]:
    """Layers and stages left between the first and last stage sizes the config sets."""
    assert diag.config is not None and diag.arch is not None
    edges = [n for n in _edge_counts(diag.config) if n is not None]
    return diag.arch.num_layers - sum(edges), diag.config.pp - len(edges)


def _layout_line(diag: Diagnosis, lang: str) -> str:
    """A recipe's layout built for its own PP x VP, kept after the user's -pp/-vp: the stages, what the
    launcher of this version does with it, the release that rebuilds it, and the two ways out."""
    config, record = diag.config, diag.record
    assert config is not None and record is not None
    stages = layout_stages(config.values.get(PIPELINE_LAYOUT)) or 0
    version = config.version
    # An unsynced cause: the answer's head already says what this version's launcher does instead.
    launcher = "" if diag.unsynced else words(
        lang,
        "troubleshoot.pp_layout.no_builder" if traits(version).runner_rebuilds_layout
        else "troubleshoot.pp_layout.no_sync",
        version=version,
    )  # fmt: skip
    launcher += words(lang, "sep.sentence") if launcher else ""
    common = {
        "name": record.name, "rpp": record.parallelism.pp, "rvp": record.parallelism.vp or 1,
        "stages": stages, "pp": config.pp, "launcher": launcher,
    }  # fmt: skip
    if stages and stages % config.pp == 0:
        detected = stages // config.pp
        vp = config.vp or 1
        head = words(lang, "troubleshoot.pp_layout.vp", detected=detected, vp=vp, **common)
        options = words(
            lang, "troubleshoot.pp_layout.options_vp", stages=stages, pp=config.pp, detected=detected, vp=vp,
            want=config.pp * vp,
        )  # fmt: skip
    else:
        head = words(lang, "troubleshoot.pp_layout.stages", **common)
        options = words(lang, "troubleshoot.pp_layout.options_stages", stages=stages)
    later = next(
        ((v, r) for v, r in _later_records(record).items() if r is not None and r.layout_builder), None
    )
    gap = words(lang, "sep.sentence")
    if later and not diag.unsynced:
        head += gap + words(
            lang, "troubleshoot.pp_layout.fixed_in", later=later[0], builder=later[1].layout_builder
        )
    return f"{head}{gap}{options}"


def _unsynced_line(diag: Diagnosis, lang: str) -> str:
    """This version's launcher repairs the cause itself: say what it does, and where."""
    first = diag.causes[0]
    assert diag.config is not None
    what = (
        words(lang, "troubleshoot.unsynced.layout", builder=diag.config.layout_builder)
        if first.id == "pp-layout"
        else words(lang, "troubleshoot.unsynced.edge_counts")
    )
    return words(
        lang, "troubleshoot.unsynced", version=diag.config.version, what=what,
        source=RUNNER_SYNC_SOURCES[first.id],
    )  # fmt: skip


# What to check for an error text when the config at hand does not explain it (per rule, in our words).
KNOWN_CAUSES: dict[str, str] = {
    "pp-layers": "troubleshoot.known_cause.pp-layers",
    "vp-layers": "troubleshoot.known_cause.vp-layers",
    "vp-needs-pp": "troubleshoot.known_cause.vp-needs-pp",
    "expert-mesh": "troubleshoot.known_cause.expert-mesh",
    "dense-mesh": "troubleshoot.known_cause.dense-mesh",
    "batch-divisible": "troubleshoot.known_cause.batch-divisible",
}


def _fix_text(fix: dict[str, Any]) -> str:
    return " ".join(f"{key}={render_value(value)}" for key, value in fix.items())


def _stated(diag: Diagnosis) -> str:
    assert diag.record is not None and diag.cluster is not None and diag.config is not None
    # Values the error message repeats ("...pipeline_model_parallel_size=8") are the recipe's, not a change.
    defaults = diag.record.fields
    changed = {k: v for k, v in diag.config.user_overrides.items() if defaults.get(k, object()) != v}
    user = _fix_text(changed)
    head = f"`{diag.record.name}` · {diag.cluster.num_gpus} × {diag.cluster.gpu_label} · Megatron-Bridge "
    return head + diag.config.version + (f" · `{user}`" if user else "")


def render(diag: Diagnosis, lang: str, asks_if_broken: bool = False) -> str:
    """The troubleshoot answer: the check that raised the error, its cause in the user's numbers, the fix."""
    parts: list[str] = []
    if diag.config is None:
        parts.append(
            words(lang, "troubleshoot.no_config")
        )
        parts.append(_known_causes(diag, lang))
        return "\n\n".join(p for p in parts if p)
    parts.append(
        words(lang, "troubleshoot.checked", stated=_stated(diag))
    )
    if diag.assumed_gpus:
        parts.append(
            words(lang, "troubleshoot.assumed_gpus", num_gpus=diag.cluster.num_gpus)
        )
    if diag.causes:
        first = diag.causes[0]
        where = f" ({diag.signature.where})" if diag.signature else ""
        quoted = f"\n\n```\n{first.upstream_error}\n```" if first.upstream_error else ""
        if diag.unsynced:
            line = _unsynced_line(diag, lang)
            parts.append(words(lang, "troubleshoot.cause.unsynced", line=line, quoted=quoted))
        else:
            parts.append(
                words(lang, "troubleshoot.cause.reproduced", where=where, quoted=quoted)
            )
        if diag.unset_etp:
            assert diag.config is not None and diag.record is not None
            since = ETP_DEFAULT_SINCE
            parts.append(
                words(
                    lang,
                    "troubleshoot.unset_etp",
                    name=diag.record.name,
                    etp_key=ETP_KEY,
                    since=since,
                    tp=diag.config.tp,
                )
            )
        parts.append("\n".join(f"- {cause_line(f, diag, lang)}" for f in diag.causes))
        others = [f for f in _errors(diag) if f.id not in {c.id for c in diag.causes}]
        if others:
            parts.append(
                words(lang, "troubleshoot.also_finds")
                + "\n"
                + "\n".join(f"- {f.message if lang == 'en' else f.message_zh}" for f in others)
            )
    else:
        parts.append(_unexplained(diag, lang))
    if diag.broken is not None:
        parts.append(_broken_line(diag.record, diag.broken, lang))
    elif asks_if_broken and diag.record is not None and diag.record.self_check is not None and diag.causes:
        check = diag.record.self_check
        if check.passes:
            parts.append(
                words(lang, "troubleshoot.recipe_ok", gpus=check.gpus)
            )
    if diag.broken is None:
        parts.append(broken_recipe_note(diag.record, lang))  # broken, for another reason than this error
    parts.append(_fix_lines(diag, lang))
    return "\n\n".join(p for p in parts if p)


def _errors(diag: Diagnosis) -> list[Finding]:
    return [f for f in diag.findings if f.severity == "error" and f.id not in LAUNCH_INPUT_RULES]


def _unexplained(diag: Diagnosis, lang: str) -> str:
    errors = _errors(diag)
    if diag.signature is None:
        if not errors:
            return ""
        listed = "\n".join(f"- {f.message if lang == 'en' else f.message_zh}" for f in errors)
        return words(lang, "troubleshoot.unexplained.errors") + "\n" + listed
    head = words(lang, "troubleshoot.unexplained.head")
    if errors:
        head += "\n\n" + words(lang, "troubleshoot.unexplained.does_find") + "\n"
        head += "\n".join(f"- {f.message if lang == 'en' else f.message_zh}" for f in errors)
    else:
        head += " " + words(lang, "troubleshoot.unexplained.no_error")
    sums = passing_arithmetic(diag, lang)
    if sums:
        head += "\n\n" + "\n".join(f"- {line}" for line in sums)
    return head + "\n\n" + _known_causes(diag, lang)


def passing_arithmetic(diag: Diagnosis, lang: str) -> list[str]:
    """The sums the checks behind an error text did on the user's numbers, when they pass ("92 layers over
    PP 4 is 23 per stage"), so "nothing explains it" shows its working; [] where a number is unknown."""
    config, arch, cluster = diag.config, diag.arch, diag.cluster
    if diag.signature is None or config is None:
        return []
    lines: list[str] = []
    world = cluster.num_gpus if cluster else None
    for rule in diag.signature.rules:
        if rule == "pp-layers" and arch and arch.num_layers % config.pp == 0:
            per = arch.num_layers // config.pp
            lines.append(
                words(
                    lang,
                    "troubleshoot.passes.pp_layers",
                    layers=arch.num_layers,
                    pp=config.pp,
                    per=per,
                )
            )
        elif rule == "vp-layers" and arch and config.vp and arch.num_layers % (config.pp * config.vp) == 0:
            per = arch.num_layers // (config.pp * config.vp)
            lines.append(
                words(
                    lang,
                    "troubleshoot.passes.vp_layers",
                    layers=arch.num_layers,
                    pp=config.pp,
                    vp=config.vp,
                    per=per,
                )
            )
        elif rule == "dense-mesh" and world:
            size = config.tp * config.pp * config.cp
            if world % size == 0:
                lines.append(
                    words(
                        lang,
                        "troubleshoot.passes.dense_mesh",
                        world=world,
                        size=size,
                        dp=world // size,
                    )
                )
        elif rule == "expert-mesh" and world:
            size = config.pp * config.ep * (config.etp or config.tp)
            if world % size == 0:
                lines.append(
                    words(
                        lang,
                        "troubleshoot.passes.expert_mesh",
                        world=world,
                        size=size,
                        dp=world // size,
                    )
                )
        elif rule == "batch-divisible" and world and config.global_batch_size and config.micro_batch_size:
            dp = (
                world // (config.tp * config.pp * config.cp)
                if world % (config.tp * config.pp * config.cp) == 0
                else 0
            )
            step = config.micro_batch_size * dp
            if dp and config.global_batch_size % step == 0:
                n = config.global_batch_size // step
                lines.append(
                    words(
                        lang,
                        "troubleshoot.passes.batch",
                        gbs=config.global_batch_size,
                        mbs=config.micro_batch_size,
                        dp=dp,
                        n=n,
                    )
                )
        elif rule == "tp-heads" and arch and all(heads % config.tp == 0 for heads, _ in head_shapes(arch)):
            lines.append(
                words(lang, "troubleshoot.passes.tp_heads", heads=arch.num_attention_heads, tp=config.tp)
            )
        elif (
            rule == "cp-seq"
            and config.cp > 1
            and config.seq_length
            and config.seq_length % (2 * config.cp) == 0
        ):
            lines.append(
                words(lang, "troubleshoot.passes.cp_seq", seq=config.seq_length, cp=config.cp)
            )
    return [line[:1].upper() + line[1:] for line in lines]


def _known_causes(diag: Diagnosis, lang: str) -> str:
    if diag.signature is None:
        return ""
    known = [KNOWN_CAUSES[r] for r in diag.signature.rules if r in KNOWN_CAUSES]
    if not known:
        return ""
    head = words(lang, "troubleshoot.known_causes.head", where=diag.signature.where)
    lines = [f"{n}. {words(lang, key)}" for n, key in enumerate(known, 1)]
    return "\n".join([head, *lines])


def _broken_line(record: RecipeRecord | None, check: SelfCheck, lang: str) -> str:
    assert record is not None
    rules = ", ".join(f"`{r}`" for r in check.failing_rules)
    return words(
        lang,
        "troubleshoot.broken",
        name=record.name,
        version=record.version,
        gpus=check.gpus,
        rules=rules,
    ) + (" " + history if (history := _history_line(record, lang)) else "")


def _fix_lines(diag: Diagnosis, lang: str) -> str:
    fixed = diag.repair
    fix = fixed.fix if fixed is not None else None
    if not fix and not diag.alternatives:
        return ""
    parts = []
    if not fix:
        parts.append(words(lang, "troubleshoot.fix.head"))
    elif fixed is not None and fixed.passes:
        parts.append(
            words(lang, "troubleshoot.fix.passes")
        )
    else:
        parts.append(
            words(lang, "troubleshoot.fix.partial")
        )
    if fix:
        parts.append(f"```\n{_fix_text(fix)}\n```")
    for split in diag.alternatives:
        assert diag.config is not None and diag.arch is not None
        edge = split[FIRST_STAGE_LAYERS]
        middle = (diag.arch.num_layers - 2 * edge) // (diag.config.pp - 2)
        parts.append(
            words(
                lang,
                "troubleshoot.fix.alternative",
                pp=diag.config.pp,
                edge=edge,
                middle=middle,
                others=diag.config.pp - 2,
            )
        )
        parts.append(f"```\n{_fix_text(split)}\n```")
    if fix and fixed is not None and not fixed.passes:
        parts.append("\n".join(f"- {f.message if lang == 'en' else f.message_zh}" for f in fixed.remaining))
    return "\n\n".join(parts)


def self_check_history(
    record: RecipeRecord, later: dict[str, RecipeRecord | None]
) -> tuple[str | None, bool]:
    """What the later releases do with a recipe broken in its own: the first later version whose catalog
    self-check passes (None: none does), and whether the recipe is still present in the newest. `later`: the
    same recipe name per later bundled version, oldest first, None where that catalog has no such recipe."""
    fixed_in = next((v for v, r in later.items() if r and r.self_check and r.self_check.passes), None)
    newest = list(later.values())[-1] if later else record
    return fixed_in, newest is not None


def _later_records(record: RecipeRecord) -> dict[str, RecipeRecord | None]:
    """The recipe of the same name in each bundled version after the record's, oldest first."""
    if record.version not in BUNDLED_VERSIONS:
        return {}
    later = BUNDLED_VERSIONS[BUNDLED_VERSIONS.index(record.version) + 1 :]
    found: dict[str, RecipeRecord | None] = {}
    for version in later:
        same = [r for r in records_named(record.name, version) if r.kind == record.kind]
        found[version] = same[0] if same else None
    return found


def _history_line(record: RecipeRecord, lang: str) -> str:
    """ "Fixed in main" or "still broken in main", from the later catalogs' own self-checks."""
    later = _later_records(record)
    if not later:
        return ""
    fixed_in, present = self_check_history(record, later)
    newest = list(later)[-1]
    if fixed_in:
        return words(lang, "troubleshoot.history.fixed_in", fixed_in=fixed_in, name=record.name)
    if not present:
        return words(lang, "troubleshoot.history.gone", name=record.name, newest=newest)
    newest_check = later[newest].self_check if later[newest] else None
    if newest_check is None or newest_check.passes:
        return ""
    return words(lang, "troubleshoot.history.still_failing", newest=newest)


def broken_recipe_note(record: RecipeRecord | None, lang: str) -> str:
    """A plain flag for an answer that names a recipe whose own defaults fail on its own GPUs, with the
    settings that fix it; "" for a recipe that passes (or was not checked)."""
    check = record.self_check if record is not None else None
    if record is None or check is None or check.passes:
        return ""
    rules = ", ".join(f"`{r}`" for r in check.failing_rules)
    fixed = words(lang, "troubleshoot.broken_note.fix", fix=_fix_text(check.fix)) if check.fix else ""
    return words(
        lang,
        "troubleshoot.broken_note",
        name=record.name,
        version=record.version,
        rules=rules,
        gpus=check.gpus,
        fixed=fixed,
    ) + (" " + history if (history := _history_line(record, lang)) else "")


_BROKEN_ASK = re.compile(
    r"\bbroken\b|\bis (?:it|this) a bug\b|坏了|有问题|是不是.{0,6}(?:bug|问题)|有bug", re.I
)


def asks_if_broken(text: str) -> bool:
    """The user asks whether the recipe itself is at fault ("Is the recipe broken?", "配方是不是有问题")."""
    return bool(_BROKEN_ASK.search(text))
