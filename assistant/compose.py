"""Recommendation + passages -> the deterministic Markdown answer, in the question's language.

Only phrasing lives here: every identifier and number is read from the Recommendation (catalog + rule
module) or from the catalog's launcher table. Identifiers stay verbatim in both languages.
"""

from __future__ import annotations

from assistant.compose_recipe import recipe_call_lines
from assistant.messages import Localized, msg, words
from assistant.planning.search import HEADROOM, has_room
from assistant.recommend import CLEARLY_FASTER, PLAN_KEYS, SMOKE_TEST_STEM, Recommendation, exact_recipe
from assistant.records import Catalog, Citation, Hit
from assistant.rules.commands import choose_dataset
from assistant.rules.findings import render_value


def say(lang: str, en: str, zh: str) -> str:
    """The sentence in the answer's language (for sentences written inline rather than in the table)."""
    return zh if lang == "zh" else en


def t(key: str, lang: str, **values) -> str:
    """A section label or line of the answer (catalog key `section.<key>`)."""
    return words(lang, f"section.{key}", **values)


def _fmt_bytes(value: float | None) -> str:
    return "?" if value is None else f"{value / 1e9:.1f} GB"


def checklist(catalog: Catalog, lang: str) -> list[str]:
    """The skill's first-answer checklist, with this version's launchers and dataset presets."""
    launcher = catalog.launcher
    script = launcher.script or "scripts/training/run_recipe.py"
    bench = launcher.benchmark.script if launcher.benchmark else "scripts/performance/"
    slurm = launcher.slurm if launcher.slurm and launcher.slurm.benchmark_recipes else None
    pretrain_ds = choose_dataset(catalog.version, "pretrain", launcher)
    sft_ds = choose_dataset(catalog.version, "sft", launcher)
    smoke = exact_recipe(catalog, SMOKE_TEST_STEM, "pretrain", None)
    smoke_name = smoke.record.name if smoke else None

    def ds(name: str | None) -> str:
        return f"`--dataset {name}`"

    smoke = (
        words(lang, "checklist.smoke_recipe", name=smoke_name)
        if smoke_name
        else words(lang, "checklist.smoke_any")
    )
    slurm_tail = (
        words(lang, "checklist.benchmark.slurm", entry=slurm.entry) if slurm else words(lang, "checklist.end")
    )
    return [
        words(lang, "checklist.library", script=script),
        words(lang, "checklist.benchmark", bench=bench, tail=slurm_tail),
        words(lang, "checklist.smoke", smoke=smoke, dataset=ds(pretrain_ds))
        if pretrain_ds
        else words(lang, "checklist.smoke.mock", smoke=smoke),
        words(lang, "checklist.datasets", sft=ds(sft_ds), pretrain=ds(pretrain_ds))
        if sft_ds and pretrain_ds
        else words(lang, "checklist.no_dataset_flag"),
        words(lang, "checklist.resizing"),
        words(lang, "checklist.change_control"),
    ]


def citations_from(hits: list[Hit]) -> list[Citation]:
    return [Citation(n=i, source=h.source, heading=h.heading, text=h.text) for i, h in enumerate(hits, 1)]


def _recipe_section(rec: Recommendation, lang: str) -> list[str]:
    record = rec.recipe
    assert record is not None
    p = record.parallelism
    head = f"**{t('recipe', lang)}:** `{record.name}`"
    if record.canonical != record.name:
        head += f" ({t('alias_of', lang)} `{record.canonical}`)"
    head += f" — {t('version', lang, v=rec.version)}, {record.kind}"
    note = words(lang, f"match.{rec.selection.match}", asked=rec.selection.asked_stem or "")
    parts = [
        f"{name} {value}"
        for name, value in (
            ("TP", p.tp),
            ("PP", p.pp),
            ("VP", p.vp),
            ("CP", p.cp),
            ("EP", p.ep),
            ("ETP", p.etp),
        )
        if value is not None
    ]
    parts += [
        f"{name} {value}"
        for name, value in (
            ("seq", record.seq_length),
            ("GBS", record.global_batch_size),
            ("MBS", record.micro_batch_size),
        )
        if value is not None
    ]
    gpu_bits = []
    if record.min_gpus:
        gpu_bits.append(t("min_gpus", lang, n=record.min_gpus, s="" if record.min_gpus == 1 else "s"))
    if record.encoded_gpus:
        # A library recipe's name gives the world size of its layout (TP·PP·CP); only benchmark recipes
        # are named for the GPUs NVIDIA runs them on.
        # Some library names count more GPUs than the layout needs (qwen3_8b_pretrain_16gpu_h100_bf16_config
        # at TP 1 · PP 1): then the name is the size it was written for, not the layout's minimum.
        key = "name_gpus" if record.kind == "benchmark" else "name_gpus_library"
        if key == "name_gpus_library" and record.min_gpus and record.encoded_gpus != record.min_gpus:
            key = "name_gpus_library_sized"
        gpu_bits.append(t(key, lang, n=record.encoded_gpus, s="" if record.encoded_gpus == 1 else "s"))
    lines = [
        head,
        f"_{note}_",
        f"{t('defaults', lang)}: " + " · ".join(parts) + (f" — {'; '.join(gpu_bits)}" if gpu_bits else ""),
    ]
    if record.source:
        lines.append(f"`{record.source.path}:{record.source.line}`")
    lines += recipe_call_lines(record, rec.cluster.gpu_type if rec.cluster else None, lang)
    return lines


def _plan_section(rec: Recommendation, lang: str) -> list[str]:
    cluster = rec.cluster
    if cluster is None:
        return []
    gpu = cluster.gpu_label
    if rec.plan is None:
        return [t("no_plan", lang, n=cluster.num_gpus, gpu=gpu)]
    plan = rec.plan
    fields = [
        ("TP", plan.tp),
        ("PP", plan.pp),
        ("VP", plan.vp),
        ("CP", plan.cp),
        ("EP", plan.ep),
        ("ETP", plan.etp),
        ("SP", plan.sp),
        ("DP", plan.dp),
        ("MBS", plan.mbs),
        ("GA", plan.ga),
        ("GBS", plan.gbs),
    ]
    shown = " · ".join(f"{k} {v}" for k, v in fields if v is not None)
    return [f"**{t('plan', lang, n=cluster.num_gpus, gpu=gpu)}:** {shown}"]


def _commands_section(rec: Recommendation, lang: str) -> list[str]:
    cmds = rec.commands
    lines: list[str] = []
    if rec.dataset:
        dataset = f"`{rec.dataset}`"
    elif rec.recipe and rec.own_data:
        dataset = t("own_data", lang)  # a diffusion, audio or omni recipe: the recommender set no preset
    else:
        dataset = t("no_dataset", lang)
    if rec.recipe and rec.recipe.kind == "library":
        lines.append(f"**{t('launch', lang)}** ({t('dataset', lang)}: {dataset})")
    else:
        lines.append(f"**{t('launch', lang)}**")
    if rec.launch_layout is not None:
        lines[-1] += words(lang, "compose.launch.layout", layout=_layout_in_words(rec.launch_layout, lang))
    multi = rec.cluster is not None and rec.cluster.num_nodes > 1
    blocks = []
    if cmds.benchmark and rec.recipe and rec.recipe.kind == "benchmark":
        blocks.append((t("benchmark_cmd", lang), cmds.benchmark))
    if cmds.torchrun and not multi:
        blocks.append((t("single", lang), cmds.torchrun))
    if cmds.multinode and multi:
        blocks.append((t("multinode", lang), cmds.multinode))
    if cmds.slurm and multi:
        blocks.append((t("slurm", lang), cmds.slurm))
    for title, text in blocks:
        lines += [f"_{title}_", "```bash", text.rstrip(), "```"]
    return lines if blocks else []


def _overrides_section(rec: Recommendation, lang: str) -> list[str]:
    if not rec.overrides:
        return []
    lines = [
        f"**{t('overrides', lang)}**",
        "",
        f"| {t('key', lang)} | {t('value', lang)} | {t('class', lang)} | {t('why', lang)} |",
        "|---|---|---|---|",
    ]
    for item in rec.overrides:
        reason = Localized(item.reason, item.reason_zh or item.reason).render(lang)
        klass = words(lang, f"change_class.{item.change_class}")
        lines.append(f"| `{item.key}` | `{item.value}` | {klass} | {reason.replace('|', '/')} |")
    return lines


def _fit_section(rec: Recommendation, lang: str) -> list[str]:
    fit = rec.fit
    if fit is None or rec.cluster is None:
        return []
    need, usable = _fmt_bytes(fit.peak_bytes), _fmt_bytes(fit.usable_bytes)
    if fit.status == "unknown":
        text = words(lang, "compose.fit.unknown", note=Localized(fit.note, fit.note_zh or fit.note))
    elif fit.tight:
        verdict = words(
            lang, "compose.fit.verdict.tight" if fit.status == "fits" else "compose.fit.verdict.borderline"
        )
        text = words(lang, "compose.fit.within_error", verdict=verdict, need=need, usable=usable)
    elif fit.status == "fits":
        margin = _fmt_bytes(fit.margin_bytes)
        text = words(lang, "compose.fit.yes", need=need, usable=usable, margin=margin)
    else:
        text = words(lang, "compose.fit.no", need=need, usable=usable)
        if _as_validated_upstream(rec):
            text += words(lang, "compose.fit.named_for_these_gpus")
    return [f"**{t('fit', lang)}** {text}"]


def _as_validated_upstream(rec: Recommendation) -> bool:
    """The plan is the recipe's own layout on the GPU count and type its name says it was validated on."""
    record, plan, cluster = rec.recipe, rec.plan, rec.cluster
    if record is None or plan is None or cluster is None or not record.encoded_gpus:
        return False
    if record.kind != "benchmark":  # a library name gives its layout's world size, not a run
        return False
    p = record.parallelism
    same_layout = (plan.tp, plan.pp, plan.cp) == (p.tp or 1, p.pp or 1, p.cp or 1)
    same_gpus = cluster.num_gpus == record.encoded_gpus and record.gpu_type in (None, cluster.gpu_type)
    return same_layout and same_gpus and rec.slots.seq_length in (None, record.seq_length)


def _layout(plan) -> str:
    """Sizes that matter: TP and PP always, the others only when they are in use."""
    parts = [
        ("TP", plan.tp),
        ("PP", plan.pp),
        ("VP", plan.vp),
        ("CP", plan.cp if plan.cp > 1 else None),
        ("EP", plan.ep if plan.ep > 1 else None),
        ("MBS", plan.mbs),
    ]
    return " · ".join(f"{k} {v}" for k, v in parts if v is not None)


def pasteable(overrides: dict) -> str:
    """Overrides as inline-code `key=value` items, ready to paste onto a launch command."""
    return " ".join(f"`{k}={render_value(v)}`" for k, v in overrides.items())


def changed_overrides(overrides: dict, plan) -> str:
    """The searched layout's overrides that differ from the plan, ready to paste."""
    kept = {k: v for k, v in overrides.items() if k not in PLAN_KEYS or getattr(plan, PLAN_KEYS[k]) != v}
    return pasteable(kept)


def _speed_line(rec: Recommendation, lang: str) -> str:
    s, error = rec.speed, rec.speed_error
    return words(
        lang,
        "compose.speed",
        tokens=s.tokens_per_sec_per_gpu,
        tflops=s.model_tflops_per_gpu,
        mfu=s.mfu,
        step=s.step_time_s,
        error=words(lang, "compose.speed.error", error=error) if error else "",
        track=_track_note(rec, lang),
    )


def _track_note(rec: Recommendation, lang: str) -> str:
    """When the estimate is known to run high or low for this model and precision, say by how much."""
    track = rec.speed_track
    if track is None:
        return ""
    off = abs(track.mean_signed_error)
    precision = track.precision.upper()
    side = msg("compose.track.high" if track.mean_signed_error > 0 else "compose.track.low")
    return words(lang, "compose.track", runs=track.runs, precision=precision, off=off, side=side)


def _nearest_lines(rec: Recommendation, lang: str) -> list[str]:
    nearest, cluster = rec.nearest, rec.cluster
    lines: list[str] = []
    gpu = cluster.gpu_label
    if nearest.leanest is not None:
        m, layout = nearest.leanest.memory, _layout(nearest.leanest.plan)
        peak, usable = _fmt_bytes(m.peak_bytes), _fmt_bytes(m.usable_bytes)
        leanest = {"num_gpus": cluster.num_gpus, "gpu": gpu, "layout": layout, "peak": peak, "usable": usable}
        lines.append(words(lang, "compose.nearest.leanest", **leanest))
    if nearest.min_gpus and nearest.min_gpus_layout is not None:
        best = nearest.min_gpus_layout
        peak, speed = _peak_with_room(best.memory, lang), f"{best.throughput.tokens_per_sec_per_gpu:,.0f}"
        layout = _layout_in_words(best, lang)
        keys = pasteable(best.overrides)
        fewest = {"min_gpus": nearest.min_gpus, "layout": layout, "peak": peak, "speed": speed, "keys": keys}
        lines.append(words(lang, "compose.nearest.fewest", **fewest))
    if nearest.room_gpus and nearest.room_layout is not None:
        room = nearest.room_layout
        peak, layout = _peak_with_room(room.memory, lang), _layout_in_words(room, lang)
        keys = pasteable(room.overrides)
        lines.append(
            words(
                lang, "compose.nearest.room", room_gpus=nearest.room_gpus, layout=layout, peak=peak, keys=keys
            )
        )
    return lines


def _peak_with_room(memory, lang: str) -> str:
    """Peak of usable memory ("about 75.0 GB of 84.9 GB"), with "tight" when less than HEADROOM is left."""
    peak, usable = _fmt_bytes(memory.peak_bytes), _fmt_bytes(memory.usable_bytes)
    if has_room(memory):
        return words(lang, "compose.peak.room", peak=peak, usable=usable)
    left = max(0.0, memory.margin_bytes / memory.usable_bytes)
    return words(lang, "compose.peak.tight", peak=peak, usable=usable, left=left, HEADROOM=HEADROOM)


def _layout_in_words(layout, lang: str) -> str:
    """A searched layout in words: sizes, then what it needs besides them (Megatron-FSDP, recompute, CPU
    offloading), since a layout that fits only with those would not fit without them."""
    extras = [
        "Megatron-FSDP" if layout.fsdp else "",
        words(lang, "compose.layout.recompute", recompute=layout.recompute) if layout.recompute else "",
        words(lang, "compose.layout.offload", offload_layers=layout.offload_layers)
        if layout.offload_layers
        else "",
    ]
    return ", ".join([_layout(layout.plan), *(e for e in extras if e)])


def _fitting_line(rec: Recommendation, lang: str) -> str:
    """The plan does not fit, but another layout on the same GPUs does: the fastest of those."""
    best = rec.nearest.best_here
    layout = _layout_in_words(best, lang)
    peak, speed = _peak_with_room(best.memory, lang), f"{best.throughput.tokens_per_sec_per_gpu:,.0f}"
    keys = changed_overrides(best.overrides, rec.plan)
    gpus = f"{rec.cluster.num_gpus} × {rec.cluster.gpu_label}"
    return words(lang, "compose.fitting", gpus=gpus, layout=layout, peak=peak, speed=speed, keys=keys)


def _faster_line(rec: Recommendation, lang: str) -> str:
    f = rec.faster
    layout = _layout_in_words(f, lang)
    ours, theirs = f"{rec.speed.tokens_per_sec_per_gpu:,.0f}", f"{f.throughput.tokens_per_sec_per_gpu:,.0f}"
    keys = changed_overrides(f.overrides, rec.plan)
    return words(lang, "compose.faster", layout=layout, theirs=theirs, ours=ours, keys=keys)


def _no_faster_line(rec: Recommendation, lang: str) -> str:
    """Asked for the fastest layout, and the plan is already within the margin the estimate can resolve."""
    best = rec.searched_best
    layout = _layout_in_words(best, lang)
    ours = f"{rec.speed.tokens_per_sec_per_gpu:,.0f}"
    theirs = f"{best.throughput.tokens_per_sec_per_gpu:,.0f}"
    margin = f"{CLEARLY_FASTER:.0%}"
    return words(lang, "compose.no_faster", margin=margin, layout=layout, theirs=theirs, ours=ours)


def fit_diagnosis_lines(rec: Recommendation, lang: str) -> list[str]:
    """For "is this config valid?": whether the layout fits in memory, and when it does not, the fastest
    layout that fits these GPUs or else the fewest GPUs that fit."""
    lines = [*_fit_section(rec, lang)]
    nearest = rec.nearest
    if nearest is not None and nearest.best_here is not None and rec.plan is not None:
        lines.append(_fitting_line(rec, lang))
    elif nearest is not None and not nearest.fits and rec.cluster is not None:
        lines.extend(_nearest_lines(rec, lang))
    return lines


def speed_diagnosis_lines(rec: Recommendation, lang: str) -> list[str]:
    """For "my run is slow": the layout's estimated speed, where its step time goes, and the searched layout
    for the same GPUs when it is clearly faster (else that none is)."""
    s = rec.speed
    if s is None or rec.plan is None:
        return []
    step, plan = s.step_time_s, rec.plan
    comm = s.exposed_comm_s
    comm_parts = {k.upper(): v for k, v in comm.to_json().items() if v > 0.005 * step}
    comm_total = sum(comm.to_json().values())
    pipeline = f"PP={plan.pp}, VP={plan.vp or 1}, {plan.ga} micro-batches"
    parts = ", ".join(f"{k} {v / step:.0%}" for k, v in comm_parts.items())
    costs = words(
        lang,
        "compose.step_costs",
        bubble=s.bubble_s / step,
        pipeline=pipeline,
        comm=comm_total / step,
        parts=msg("compose.step_costs.parts", parts=parts) if parts else "",
        recompute=msg("compose.step_costs.recompute", share=s.recompute_s / step) if s.recompute_s else "",
    )
    lines = [*_fit_section(rec, lang), _speed_line(rec, lang), costs]
    if rec.fit is not None and rec.fit.status == "does-not-fit":
        lines.append(
            words(lang, "compose.slow.oom_layout_below")
            if rec.faster is not None
            else words(lang, "compose.slow.oom")
        )
    if rec.faster is not None:
        lines.append(_faster_line(rec, lang))
    else:
        lines.append(words(lang, "compose.slow.none_faster", CLEARLY_FASTER=CLEARLY_FASTER))
    return lines


def _estimate_section(rec: Recommendation, lang: str) -> list[str]:
    """Numbers from the estimator: speed of the plan, the nearest fit, a faster layout."""
    lines: list[str] = []
    if rec.speed is not None:
        lines.append(_speed_line(rec, lang))
    if rec.nearest is not None and not rec.nearest.fits and rec.cluster is not None:
        lines.extend(_nearest_lines(rec, lang))
    if rec.nearest is not None and rec.nearest.best_here is not None and rec.plan is not None:
        lines.append(_fitting_line(rec, lang))
    if rec.faster is not None and rec.speed is not None:
        lines.append(_faster_line(rec, lang))
    if rec.searched_best is not None and rec.speed is not None:
        lines.append(_no_faster_line(rec, lang))
    if rec.peft_alternative is not None:
        lines.extend(_peft_alternative_lines(rec.peft_alternative, lang))
    return lines


def _peft_alternative_lines(lora: Recommendation, lang: str) -> list[str]:
    """Full fine-tuning does not fit: the LoRA recipe that does, with its layout, fit and command."""
    gpus = f"{lora.cluster.num_gpus} × {lora.cluster.gpu_label}"
    name = lora.recipe.name
    fit = ""
    if lora.fit is not None and lora.fit.peak_bytes is not None:
        peak = _fmt_bytes(lora.fit.peak_bytes)
        fit = words(lang, "compose.peft_alternative.fit", peak=peak)
    head = words(lang, "compose.peft_alternative", gpus=gpus, name=name, layout=_layout(lora.plan), fit=fit)
    return [head, f"```bash\n{lora.commands.torchrun}\n```"]


def findings_lines(rec_findings, lang: str) -> list[str]:
    if not rec_findings:
        return []
    icon = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}
    lines = [f"**{t('findings', lang)}**"]
    for item in rec_findings:
        message = Localized(item.message, item.message_zh).render(lang)
        line = f"- {icon[item.severity]} `{item.id}`: {message}"
        if item.fix:
            line += f" — {t('fix', lang)}: `{item.fix}`"
        lines.append(line)
        if item.upstream_error:
            lines.append(f"  - {t('upstream', lang)}: `{item.upstream_error}`")
    return lines


def sources_lines(citations: list[Citation], lang: str) -> list[str]:
    if not citations:
        return []
    return [f"**{t('sources', lang)}**"] + [f"[{c.n}] `{c.source}` — {c.heading}" for c in citations]


def compose_recommendation(
    rec: Recommendation,
    checklist_items: list[str],
    citations: list[Citation],
    lang: str,
    preface: list[str] = (),
) -> str:
    sections = [list(preface)] if preface else []
    sections += [
        _recipe_section(rec, lang),
        _plan_section(rec, lang),
        _commands_section(rec, lang),
        _fit_section(rec, lang),
        _estimate_section(rec, lang),
        _overrides_section(rec, lang),  # after fit and speed: what to change once the user knows why
        findings_lines(rec.findings, lang),
        checklist_lines(checklist_items, lang),
        sources_lines(citations, lang),
    ]
    return "\n\n".join("\n".join(s) for s in sections if s)


def checklist_lines(items: list[str], lang: str) -> list[str]:
    return (
        [f"**{t('checklist', lang)}**"] + [f"{i}. {item}" for i, item in enumerate(items, 1)] if items else []
    )
