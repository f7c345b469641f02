"""One question in, one Answer out: understand -> remember -> recommend -> retrieve -> compose.

This is the only entry the front ends (CLI, Gradio, Slack) and the evals call. Facts come from the
catalog and the rule module; retrieval only adds passages to cite; the optional LLM only rephrases.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from assistant import catalog as catalogs
from assistant import intent_form, quick_pick, sequence_multiple, support, turn_budget
from assistant.answer import Answer, AnswerEstimate, PeftAlternative
from assistant.bounds import check_count_text, check_question, check_seq_len, check_setups, valid_text
from assistant.compose import (
    checklist,
    checklist_lines,
    citations_from,
    compose_recommendation,
    findings_lines,
    fit_diagnosis_lines,
    sources_lines,
    speed_diagnosis_lines,
)
from assistant.conversation_replies import GREETING_EXAMPLES, greeting_reply, why_lines
from assistant.errors import UserError
from assistant.guide_sections import guide_sections
from assistant.kb import KnowledgeBase, knowledge_base
from assistant.known_causes import known_cause_lines, load_causes
from assistant.lexical import MAX_QUERY_CHARS, is_chinese
from assistant.memo import per_object
from assistant.messages import msg, words
from assistant.model_names import (
    StemIndex,
    candidate_stems,
    match_model,
    missing_size,
    related_stems,
    stems_of_size,
)
from assistant.models import load_model_arch, recipe_arch
from assistant.override_keys import check_override_keys
from assistant.planning.fit import estimate_fit
from assistant.planning.resize import resize, weak_scaling
from assistant.recommend import (
    Recommendation,
    benchmark_for_count,
    cluster_for,
    estimate_run,
    exact_recipe,
    known_stems,
    other_variants,
    precision_variants,
    recommend,
    select_recipe,
    typed_overrides,
)
from assistant.records import Catalog, Cluster, Finding, Hit, ModelArch, Plan, RecipeRecord, Slots, SourceRef
from assistant.relevance import abstention, focus_of, load_topics, screen
from assistant.rules.commands import choose_dataset, run_recipe_args
from assistant.rules.config import build_config
from assistant.rules.validate import has_errors, precision_finding, precision_label, validate
from assistant.session import Conversation, clarifying_question, missing
from assistant.settings import Settings, get_settings
from assistant.topic_answer import (
    asks_beyond_recipe,
    asks_if_known_bug,
    load_facts,
    topic_lead,
    uncovered_line,
)
from assistant.troubleshoot import asks_if_broken, broken_recipe_note, diagnose, render
from assistant.understand import (
    asks_about_speed,
    is_question,
    mentions_packing,
    same_setup,
    split_cases,
    understand,
)
from assistant.vectorstore import IndexUnavailable
from assistant.version_facts import dataset_fact, launcher_facts
from assistant.version_resolve import VersionChoice, selected_choice
from assistant.version_resolve import resolve as resolve_choice

log = logging.getLogger(__name__)

CITATIONS = 4
ASSUMED_GPUS, ASSUMED_GPU_TYPE = 8, "h100"  # an intent-only question that says nothing about its GPUs
EXAMPLES = {lang: [words(lang, f"service.example.{n}") for n in (1, 2, 3)] for lang in ("en", "zh")}


@dataclass(frozen=True)
class VersionContext:
    """What a turn reads for one version: its catalog, the model names it knows, and the knowledge base."""

    catalog: Catalog
    stems: dict[str, str | None]
    index: StemIndex
    kb: KnowledgeBase

    def arch_of(self, hf_id: str | None) -> ModelArch | None:
        return load_model_arch(hf_id, self.kb) if hf_id else None


@lru_cache(maxsize=8)
def version_context(version: str, kb: KnowledgeBase) -> VersionContext:
    catalog = catalogs.load_catalog(version, kb)
    stems = known_stems(catalog)
    hf_ids = {stem: hf for stem, hf in stems.items() if hf}
    return VersionContext(catalog, stems, StemIndex.build(list(stems), hf_ids), kb)


def hear(text: str, ctx: VersionContext, conversation: Conversation | None) -> Slots:
    """One turn's slots, merged into the conversation's memory when there is one. A turn past the bounds
    raises before it changes the memory, so the conversation goes on as it was."""
    slots = understand(text, known_stems=list(ctx.stems), index=ctx.index)
    check_seq_len(slots.seq_length)
    check_named_recipes(text, ctx, slots.model_text)
    return conversation.update(slots, text=text) if conversation is not None else slots


def _version_choice(
    question: str, selected: str | None, conversation: Conversation | None, kb: KnowledgeBase
) -> VersionChoice:
    """The shared resolver on this turn: the version its text (or the conversation) names wins over
    the caller's; a question comparing two versions keeps the caller's."""
    picked = selected_choice(selected, kb)  # a bad flag or dropdown value is refused before the text is read
    slots = hear(_clip(question), version_context(picked.version, kb), None)
    named = slots.version or (conversation.slots.version if conversation else None)
    if slots.other_version:
        named = None
    return resolve_choice(selected, named, kb.default_version, kb.catalog_versions())


RETRIEVAL_FAILED = msg("notice.retrieval_failed")


def _with_notices(answer: Answer, notices: tuple[turn_budget.Notice, ...]) -> Answer:
    """The turn's notices head the text (in the answer's language) and are listed in the JSON."""
    lines = [notice.render(answer.language) for notice in notices]
    if lines:
        answer.notices = lines
        head = "\n".join(f"_{line}_" for line in lines)
        answer.answer_markdown = f"{head}\n\n{answer.answer_markdown}"
    return answer


def _retrieve(settings: Settings, kb: KnowledgeBase, query: str, lang: str, version: str) -> list[Hit]:
    """Guide passages to cite; an absent index only costs the citations, never the answer."""
    # lazy: the retriever stack (Chroma, BM25, embeddings) loads at the first lookup, not when none is cited
    from assistant.retrieval import make_retriever

    if turn_budget.spent():
        return []
    try:
        retriever = make_retriever(settings)
        hits = retriever.search(query, k=CITATIONS, lang=lang, version=version, doc_type="guide").hits
        hits = hits or retriever.search(query, k=CITATIONS, version=version).hits
    except IndexUnavailable as error:
        log.warning("no citations: %s", error)
        turn_budget.notice(RETRIEVAL_FAILED)
        return []
    except UserError as error:  # no index yet: an expected state, not a fault
        log.info("no citations: %s", error)
        return []
    except Exception as error:  # noqa: BLE001 - a damaged index costs the citations, never the answer
        log.warning("retrieval failed, no citations: %s: %s", type(error).__name__, error)
        turn_budget.notice(RETRIEVAL_FAILED)
        return []
    hits = relevant(kb, query, hits, version, strict=False)
    catalog = catalogs.load_catalog(version, kb)
    return [
        h.model_copy(
            update={
                "text": sanitize(h.text, catalog),
                "heading": sanitize(h.heading, catalog),
                "section": sanitize(h.section, catalog),
            }
        )
        for h in hits
    ]


def _moe_named(question: str, ctx: VersionContext) -> bool | None:
    """Whether the model the question names is an MoE (None: no model named, or its architecture unknown)."""
    found = match_model(question, ctx.index)
    stems = ([found.stem] if found.stem else list(found.candidates)) if found else []
    archs = [ctx.arch_of(hf) for hf in (ctx.stems.get(stem) for stem in stems) if hf]
    if not archs or None in archs:
        return None
    return any(arch.num_moe_experts for arch in archs)


def relevant(kb: KnowledgeBase, question: str, hits: list[Hit], version: str, *, strict: bool) -> list[Hit]:
    """The passages about the question's model, kind of model and (`strict`) topic (assistant/relevance)."""
    table = load_topics(kb)
    ctx = version_context(version, kb)
    focus = focus_of(question, table, moe=_moe_named(question, ctx))
    screened = screen(hits, focus, table, strict=strict)
    for source, reason in screened.dropped:
        log.info("not cited: %s (%s)", source, reason)
    return screened.hits


def _answer_passages(
    settings: Settings, kb: KnowledgeBase, text: str, query: str, lang: str, version: str
) -> list[Hit]:
    """Passages that answer the question themselves. When the first search brought passages about other
    things, a second one adds the guide words of the topics the question names, and fills the free places."""
    first = _retrieve(settings, kb, query, lang, version)
    hits = relevant(kb, text, first, version, strict=True)
    hint = load_topics(kb).search_hint(text, lang) if len(hits) < len(first) else ""
    if not hint:
        return hits
    second = _retrieve(settings, kb, f"{query} {hint}", lang, version)
    again = relevant(kb, text, second, version, strict=True)
    seen = {h.source for h in hits}
    return (hits + [h for h in again if h.source not in seen])[:CITATIONS]


def _abstain_line(kb: KnowledgeBase, question: str, version: str, lang: str) -> str:
    table = load_topics(kb)
    return abstention(focus_of(question, table, moe=None), table, version, lang)


def _topic_lead(kb: KnowledgeBase, text: str, slots: Slots, hits: list[Hit], version: str, lang: str) -> str:
    """Own sentences naming the topic, release and model before the quotes (assistant/topic_answer)."""
    names = catalog_names(catalogs.load_catalog(version, kb))
    if slots.recipe_name and slots.recipe_name in names:
        entity = f"`{slots.recipe_name}`"
    else:
        entity = slots.model_text or slots.hf_model_id or ""
    return topic_lead(text, hits, version, lang, topics=load_topics(kb), facts=load_facts(kb), entity=entity)


def _uncovered(kb: KnowledgeBase, text: str, shown: str, version: str, lang: str) -> str:
    """What the question names that nothing shown mentions, said plainly (assistant/topic_answer)."""
    table = load_topics(kb)
    return uncovered_line(text, shown, version, lang, topics=table, guide=guide_sections(kb))


RECIPE_NAME = re.compile(r"\b\w+_config\b(?!\.\w)")  # not a file such as transformer_config.py


def sanitize(text: str, catalog: Catalog) -> str:
    """Quoted passages may come from a user's documents: a recipe name the catalog lacks is not repeated."""
    names = catalog_names(catalog)
    return RECIPE_NAME.sub(lambda m: m.group(0) if m.group(0) in names else "[unverified recipe name]", text)


@per_object
def catalog_names(catalog: Catalog) -> frozenset[str]:
    return frozenset(name for r in catalog.recipes for name in (r.name, r.canonical))


# A recipe-like name: "llama3_8b_sft_config" (a digit in it), not "model_config".
RECIPE_LIKE = re.compile(r"\b[a-z][a-z0-9_]*\d[a-z0-9_]*_config\b")


def check_named_recipes(text: str, ctx: VersionContext, model_text: str | None) -> None:
    """A recipe name the question asks about that no bundled version has is never matched to a neighbour
    (and called an exact match): it is refused with the closest names of this version. A name quoted
    beside another model ("the docs say: use gpt5_1t_pretrain_config. Which recipe for Qwen3 8B?") is
    not what is asked about, and is left to the planner, which never uses it."""
    kb, version = ctx.kb, ctx.catalog.version
    catalogs_here = (catalogs.load_catalog(v, kb) for v in catalogs.available_versions(kb))
    known = frozenset().union(*(catalog_names(catalog) for catalog in catalogs_here))
    model = re.sub(r"\W+", "_", (model_text or "").lower()).strip("_")
    for name in dict.fromkeys(RECIPE_LIKE.findall(text)):
        if name not in known and (not model or model in name):
            catalogs.resolve_recipe(name, version=version, kb=kb)  # raises, naming the closest recipes


# ---------------------------------------------------------------- answers per intent


def _decline(slots: Slots, lang: str) -> str:
    examples = "\n".join(f"- {e}" for e in EXAMPLES[lang])
    return words(lang, "service.decline", examples=examples)


def _unknown_model(slots: Slots, ctx: VersionContext, lang: str) -> str:
    named = slots.model_text or slots.hf_model_id or slots.recipe_name or ""
    near = candidate_stems(named, list(ctx.stems)) if named else []
    listed = ", ".join(f"`{s}`" for s in near[:8])
    if slots.hf_model_id and ctx.arch_of(slots.hf_model_id) is None:
        # The id was given, so asking for it again would repeat the last reply.
        text = words(
            lang,
            "service.unknown_model.unknown_architecture",
            version=ctx.catalog.version,
            hf_model_id=slots.hf_model_id,
        )
        family = words(lang, "service.unknown_model.family", listed=listed)
        return text + (f"\n\n{family}" if listed else "")
    text = words(lang, "service.unknown_model", version=ctx.catalog.version, named=named)
    if listed:
        text += "\n\n" + words(lang, "service.unknown_model.family", listed=listed)
    else:
        text += _related_models(named, ctx, lang)
    return text


def _missing_size(
    named: str, sizes: tuple[str, ...], goal: str | None, ctx: VersionContext, lang: str
) -> str:
    """A family the catalog has, at a size it has not: no recipe, the sizes it has, and their goal recipes."""
    version = ctx.catalog.version
    listed = ", ".join(f"`{s}`" for s in sizes)
    lines = [words(lang, "service.missing_size", version=version, named=named, listed=listed)]
    by_goal = _family_goal_recipes(ctx.catalog, list(sizes), goal)
    if by_goal:
        recipes = ", ".join(f"`{name}`" for name in by_goal)
        lines.append(words(lang, "service.missing_size.goal", goal=goal, listed=recipes))
    # "Llama 3 405B": the vendor's other families may have that size (llama31_405b); for a vision-language
    # name only their vision-language models ("Qwen3-VL-4B": qwen35_vl_4b, not the text model qwen3_4b).
    related = related_stems(named, list(ctx.stems))
    pool = [s for s in related.same_vendor if ("vl" in s.split("_")) == bool(related.vision)]
    same = [s for s in stems_of_size(named, ctx.index, pool) if s not in sizes]
    if same:
        listed = ", ".join(f"`{s}`" for s in same[:MAX_RELATED])
        lines.append(words(lang, "service.missing_size.same_size", listed=listed))
    return "\n\n".join(lines)


MAX_RELATED = 8


def _related_models(named: str, ctx: VersionContext, lang: str) -> str:
    """What the catalog has instead of an unknown model: the vendor's other models ("DeepSeek-VL2": the
    DeepSeek text models), and the vision-language models for a vision-language name; "" when neither."""

    def shown(stems: tuple[str, ...]) -> str:
        listed = ", ".join(f"`{s}`" for s in stems[:MAX_RELATED])
        more = len(stems) - MAX_RELATED
        return listed + (words(lang, "service.unknown_model.more", count=more) if more > 0 else "")

    related = related_stems(named, list(ctx.stems))
    version = ctx.catalog.version
    lines = []
    if related.same_vendor:
        lines.append(
            words(
                lang,
                "service.unknown_model.vendor",
                version=version,
                vendor=related.vendor,
                listed=shown(related.same_vendor),
            )
        )
    if related.vision:
        listed = shown(related.vision)
        lines.append(words(lang, "service.unknown_model.vision", version=version, listed=listed))
    return "".join(f"\n\n{line}" for line in lines)


QUOTED_PASSAGES = 2
MAX_QUOTE_CHARS = 1500


def _passages_answer(hits: list[Hit], lang: str, intro: str) -> str:
    """Quote the best passages (distinct sections), each marked with its citation number."""
    if not hits:
        return words(lang, "service.passages.nothing_found")
    parts = [words(lang, f"service.passages.{intro}")]
    # The retriever names each section once. Intros ("the rules below ...") are quoted only when no section
    # with content is among the hits.
    ordered = sorted(enumerate(hits, 1), key=lambda item: item[1].part == "intro")
    for n, hit in ordered[:QUOTED_PASSAGES]:
        body = hit.text.split("\n\n", 1)[-1].strip()[:MAX_QUOTE_CHARS]
        parts.append(f"**{hit.section or hit.heading}** [{n}]\n\n{body}")
    return "\n\n".join(parts)


def _validate_answer(
    slots: Slots, ctx: VersionContext, lang: str, text: str
) -> tuple[str, Recommendation | None]:
    selection = select_recipe(ctx.catalog, slots, ctx.arch_of)
    if selection is None:
        return "", None
    record = selection.record
    cluster = cluster_for(slots, record)
    config = build_config(record, typed_overrides(slots), version=ctx.catalog.version, dataset=slots.dataset)
    sized = ""
    model_parallel = (config.tp or 1) * (config.pp or 1) * (config.cp or 1)
    if cluster and slots.num_gpus is None and slots.num_nodes is None and cluster.num_gpus % model_parallel:
        # "I set PP=8 for Llama3 70B" states a layout, not a GPU count: check it on the fewest GPUs it can use
        # (at least the recipe's), instead of reporting that the recipe's count does not divide it.
        count = -(-cluster.num_gpus // model_parallel) * model_parallel
        cluster = cluster.model_copy(update={"num_gpus": count})
        sized = words(lang, "service.validate.assumed_gpus", model_parallel=model_parallel, count=count)
    arch = recipe_arch(record, ctx.kb)
    findings = (
        validate(
            config,
            arch,
            cluster,
            ctx.catalog.version,
            ctx.catalog.launcher,
            gpu=ctx.kb.gpu_spec(cluster.gpu_type),
        )
        if cluster
        else []
    )
    verdict = not has_errors(findings)
    head = words(
        lang,
        "service.validate.verdict",
        name=record.name,
        num_gpus=cluster.num_gpus if cluster else "?",
        verdict=words(lang, "service.verdict.valid" if verdict else "service.verdict.invalid"),
        version=ctx.catalog.version,
    )
    rec = Recommendation(
        slots=slots,
        version=ctx.catalog.version,
        selection=selection,
        arch=arch,
        cluster=cluster,
        findings=findings,
    )
    diagnosis: list[str] = []
    if verdict and cluster and config.micro_batch_size and config.global_batch_size:
        # "Valid" by the rules is half an answer: say whether this exact layout fits, and for "valid, but
        # slow" where its step time goes; the search proposes a layout when it does not fit or is slow.
        rec.plan = Plan.sized(
            num_gpus=cluster.num_gpus, tp=config.tp, pp=config.pp, cp=config.cp, mbs=config.micro_batch_size,
            gbs=config.global_batch_size, vp=config.vp, ep=config.ep, etp=config.etp, sp=config.sp,
        )  # fmt: skip
        rec.fit = estimate_fit(record, arch, rec.plan, cluster, config, kb=ctx.kb)
        if asks_about_speed(text):
            estimate_run(rec, config.mode, kb=ctx.kb, recompute=config.recompute_granularity, search=True)
            diagnosis = speed_diagnosis_lines(rec, lang)
        else:
            if rec.fit.status == "does-not-fit":  # the nearest layout that fits, here or on more GPUs
                estimate_run(rec, config.mode, kb=ctx.kb, recompute=config.recompute_granularity)
            diagnosis = fit_diagnosis_lines(rec, lang)
        if rec.fit.status == "does-not-fit" and not rec.fit.tight:
            head += words(lang, "service.validate.does_not_fit")
    broken = broken_recipe_note(record, lang)
    parts = [sized, head, broken, "\n".join(findings_lines(findings, lang)), "\n\n".join(diagnosis)]
    return "\n\n".join(part for part in parts if part), rec


def _stated_findings(slots: Slots, text: str, ctx: VersionContext) -> list[Finding]:
    """The rules that need no model, on the values a question states without naming one ("packed SFT with
    micro_batch_size=4?"): only findings whose fix changes a key the user set, since everything else about
    an unnamed model and cluster is unknown."""
    stated = typed_overrides(slots)
    if not stated or slots.model_stem or slots.hf_model_id or slots.recipe_name:
        return []
    version = ctx.catalog.version
    record = RecipeRecord(
        name="your config", canonical="your config", version=version, kind="library", family="",
        source=SourceRef(path="", line=0), mode=slots.goal, packed_sequence=mentions_packing(text),
    )  # fmt: skip
    config = build_config(record, stated, version=version)
    # no GPU count is known: the fewest GPUs both meshes of the stated sizes fit on
    dense, expert = config.tp * config.pp * config.cp, config.pp * config.ep * (config.etp or 1)
    cluster = Cluster(num_gpus=math.lcm(dense, expert))
    return [
        f
        for f in validate(config, None, cluster, version, gpu=ctx.kb.gpu_spec(cluster.gpu_type))
        if f.fix and {item.split("=", 1)[0] for item in f.fix.split()} & set(stated)
    ]


def _compare_answer(slots: Slots, lang: str, kb: KnowledgeBase) -> str:
    named = (slots.version, slots.other_version)
    versions = [selected_choice(v, kb).version for v in named if v]
    if len(versions) < 2:
        return clarifying_question(["versions"], lang)
    rows = []
    for version in versions:
        ctx = version_context(version, kb)
        selection = select_recipe(ctx.catalog, slots, ctx.arch_of)
        presets = ", ".join(p.name for p in ctx.catalog.launcher.dataset_presets) or "-"
        if selection is None:
            rows.append(f"| {version} | - | - | {presets} |")
            continue
        r = selection.record
        p = r.parallelism
        layout = f"TP {p.tp} PP {p.pp} CP {p.cp} EP {p.ep} seq {r.seq_length} GBS {r.global_batch_size}"
        rows.append(f"| {version} | `{r.name}` → `{r.canonical}` | {layout} | {presets} |")
    header = words(lang, "service.compare.header")
    return "\n".join([header, "|---|---|---|---|", *rows])


def _conversation_context(answer: Answer, slots: Slots, ctx: VersionContext, lang: str) -> str:
    """A question about the docs in the middle of a recommendation ("数据集参数怎么写？", "I get OOM") is
    answered for the remembered recipe too: its name, dataset preset and launch command."""
    if not (slots.model_stem or slots.recipe_name):
        return ""
    remembered = slots.model_copy(update={"intent": "recommend"})
    rec = recommend(remembered, ctx.catalog, ctx.arch_of, ctx.kb)
    if rec.recipe is None:
        return ""
    answer.recipe, answer.dataset, answer.commands = rec.recipe, rec.dataset, rec.commands
    answer.plan = rec.plan
    command = rec.commands.torchrun or rec.commands.multinode
    preset = (
        f"`--dataset {rec.dataset}`"
        if rec.dataset
        else words(lang, "service.conversation_context.no_dataset_flag")
    )
    head = words(
        lang, "service.conversation_context", name=rec.recipe.name, version=ctx.catalog.version, preset=preset
    )
    return head + (f"\n```bash\n{command}\n```" if command else "")


def _quick_pick(
    slots: Slots, text: str, ctx: VersionContext, conversation: Conversation | None
) -> quick_pick.QuickPick | None:
    """The version's quick-reference pick for a question that names only an intent; the conversation
    remembers it, so "what if 64 GPUs?" or "why?" continue from it."""
    intent = quick_pick.quick_intent(text, slots)
    chosen = quick_pick.pick(intent, ctx.catalog, quick_pick.load_table(ctx.kb)) if intent else None
    if chosen is not None and conversation is not None:
        conversation.slots = quick_pick.apply(conversation.slots, chosen)
    return chosen


def _no_quick_pick(intent: str, ctx: VersionContext, lang: str) -> str:
    """The table has the intent but this version's catalog has none of its recipes (diffusion in 0.3.1)."""
    table, version = quick_pick.load_table(ctx.kb), ctx.catalog.version
    having = [
        v
        for v in catalogs.available_versions(ctx.kb)
        if quick_pick.pick(intent, catalogs.load_catalog(v, ctx.kb), table)
    ]
    listed = ", ".join(having) or "-"
    what = quick_pick.label(intent, lang)
    return words(lang, "service.no_quick_pick", version=version, what=what, listed=listed)


def _support(text: str, slots: Slots, ctx: VersionContext, lang: str) -> str:
    """The support table's answer to a capability question, for this version; "" when it has none."""
    stems = [slots.model_stem] if slots.model_stem else []
    if not stems and slots.model_text:
        stems = candidate_stems(slots.model_text, list(ctx.stems))
    found = support.answer(
        text,
        ctx.catalog.version,
        lang,
        support.load_table(ctx.kb),
        recipes=ctx.catalog.recipes,
        stems=stems,
        precision_check=lambda precision, gpu: precision_finding(
            precision, gpu, ctx.kb.gpu_spec(gpu) if gpu else None
        ),
        presets=ctx.catalog.launcher.mixed_precision_presets,
    )
    return found.text if found else ""


def _asks_feature(text: str, kb: KnowledgeBase) -> bool:
    """A question naming a feature of the support table whose answer is a written row (not one computed
    from the recipe, as LoRA or FP8 are: the recommendation says those itself)."""
    feature = support.match_feature(text, support.load_table(kb))
    return feature is not None and not feature.get("computed")


_ENDS_ASKING = re.compile(r"[?\uff1f]\s*$")  # a question mark, ASCII or full-width, ends the turn


def _feature_text(text: str, conversation: Conversation | None, kb: KnowledgeBase) -> str | None:
    """The text whose support feature this turn is about: the turn itself, or, for a follow-up question that
    names no feature ("and which checkpoint format?"), the last feature question with it; None when it is
    about no feature. Remembers the turn when it names a feature, forgets it otherwise."""
    last = None
    if conversation is not None:
        last, conversation.feature_question = conversation.feature_question, None
    if _asks_feature(text, kb):
        if conversation is not None:
            conversation.feature_question = text
        return text
    if last and (is_question(text) or _ENDS_ASKING.search(text)):  # "and which format?" too
        together = f"{last} {text}"
        return together if _asks_feature(together, kb) else None
    return None


def _assume_gpus(slots: Slots, record: RecipeRecord) -> Slots:
    """No GPUs said: 8 × H100, or the pick's own count when it needs more (a large MoE)."""
    if slots.num_gpus is not None or slots.num_nodes is not None:
        return slots
    needs = record.encoded_gpus or record.min_gpus or 1
    count = max(ASSUMED_GPUS, needs)
    return slots.model_copy(
        update={"num_gpus": count, "gpu_type": slots.gpu_type or ASSUMED_GPU_TYPE, "quick_assumed": True}
    )


def _smoke_slots(slots: Slots, record: RecipeRecord, ctx: VersionContext) -> tuple[Slots, bool]:
    """Keep the smoke-test recipe; when its defaults do not fit, shorten the run (shorter sequence,
    recompute, few iterations) until the rule module's fit estimate says it fits, else keep the last try.
    True when the run was shortened. Only the fit is computed per try; the caller recommends once."""
    arch, cluster = recipe_arch(record, ctx.kb), cluster_for(slots, record)
    if arch is None or cluster is None:
        return slots, False

    def fits(candidate: Slots) -> bool:
        sized = resize(record, arch, cluster, candidate.goal or record.mode, candidate.seq_length,
                       user_overrides=typed_overrides(candidate), version=ctx.catalog.version,
                       kb=ctx.kb)  # fmt: skip
        return sized.fit is not None and sized.fit.status == "fits" and not sized.fit.tight

    if fits(slots):
        return slots, False
    tried = slots
    for step in quick_pick.smoke_steps(quick_pick.load_table(ctx.kb)):
        overrides = {**slots.overrides, **step["overrides"]}
        tried = slots.model_copy(update={"seq_length": step["seq_length"], "overrides": overrides})
        if fits(tried):
            break
    return tried, True


def _quick_preface(rec: Recommendation, chosen: quick_pick.QuickPick, version: str, lang: str) -> list[str]:
    lines = [quick_pick.preface(chosen, version, lang)]
    if rec.slots.quick_assumed and rec.cluster is not None:
        lines.append(
            words(
                lang,
                "service.quick_preface.assumed_gpus",
                num_gpus=rec.cluster.num_gpus,
                gpu=rec.cluster.gpu_type.upper(),
            )
        )
    if rec.smoke_shrunk:
        changed = ", ".join(f"`{key}={value}`" for key, value in rec.slots.overrides.items())
        seq = rec.slots.seq_length
        lines.append(words(lang, "service.quick_preface.shortened_run", seq=seq, changed=changed))
    return lines


def _quick_follow_up(chosen: quick_pick.QuickPick, rec: Recommendation, lang: str) -> list[str]:
    """Ask only for what would change the pick: the model the user has in mind, and the GPUs if assumed."""
    needed = [] if chosen.intent == "first_try" else ["model"]
    if rec.slots.quick_assumed:
        needed += ["num_gpus", "gpu_type"]
    return [clarifying_question(needed, lang)] if needed else []


# ---------------------------------------------------------------- the entry point


PARITY = re.compile(r"parity|对齐|megatron-lm", re.IGNORECASE)
PARITY_STEM = "vanilla_gpt"


def _route(slots: Slots, text: str, ctx: VersionContext) -> Slots:
    """Two routes the skill fixes: a Megatron-LM parity smoke test runs vanilla_gpt; a benchmark question
    that names no model asks about benchmark recipes in general."""
    # "Does Megatron support DeepSeek-VL2? If Megatron-LM can't, ...": a question naming another model is
    # about that model, not a parity run.
    wants_parity = (
        slots.intent in ("first_try", "recommend")
        and not (slots.model_stem or slots.model_text)
        and PARITY.search(text)
    )
    if wants_parity and PARITY_STEM in ctx.stems:
        return slots.model_copy(update={"model_stem": PARITY_STEM, "goal": "pretrain", "intent": "recommend"})
    if slots.intent == "benchmark" and not (slots.model_stem or slots.model_text or slots.recipe_name):
        return slots.model_copy(update={"intent": "explain"})
    if slots.intent == "recommend" and asks_if_known_bug(text):
        return slots.model_copy(update={"intent": "explain"})
    return slots


def _clip(question: str) -> str:
    text = question if isinstance(question, str) else ""
    return text[: MAX_QUERY_CHARS * 25]


@dataclass(frozen=True)
class _Turn:
    """How one question is answered: the caller's choices, shared by a question and the setups it lists."""

    settings: Settings
    lang: str = "auto"  # the answer language, or "auto" for the question's
    use_llm: bool | None = None  # None: phrase with the LLM when one is configured
    brief: bool = False  # one setup among several: its checklist and sources come once, with the whole
    quick: quick_pick.QuickPick | None = None  # no model named: the version's quick-reference pick

    @property
    def kb(self) -> KnowledgeBase:
        return knowledge_base(self.settings)  # the settings' knowledge base, loaded once per directory


def ask(
    question: str,
    *,
    version: str | None = None,
    conversation: Conversation | None = None,
    lang: str = "auto",
    settings: Settings | None = None,
    use_llm: bool | None = None,
) -> Answer:
    """Answer one turn. `conversation` (if given) is updated in place with this turn's slots.

    A problem in what the question asks for (an unknown version, an override value the launcher would
    reject) becomes the answer's text; only a bad `version` argument raises, as a UserError.
    """
    settings = settings or get_settings()
    base_version = selected_choice(version, knowledge_base(settings)).version
    with turn_budget.turn(settings.answer_budget_s):
        return _budgeted_turn(question, base_version, version, conversation, lang, settings, use_llm)


def _budgeted_turn(
    question: str,
    base_version: str,
    version: str | None,
    conversation: Conversation | None,
    lang: str,
    settings: Settings,
    use_llm: bool | None,
) -> Answer:
    question, replaced = valid_text(question) if isinstance(question, str) else ("", 0)
    if replaced:
        turn_budget.notice(INVALID_TEXT)
    if lang not in ANSWER_LANGUAGES:
        turn_budget.notice(_unsupported_language(lang))
        lang = "auto"
    turn = _Turn(settings, lang, use_llm)
    answer = _answer_turn(question, base_version, version, turn, conversation)
    return _with_notices(answer, turn_budget.notices())


ANSWER_LANGUAGES = ("auto", "en", "zh")
INVALID_TEXT = msg("notice.invalid_text")


def _unsupported_language(lang: object) -> turn_budget.Notice:
    return msg("notice.unsupported_language", lang=repr(lang)[:40])


def _answer_turn(
    question: str, base_version: str, version: str | None, turn: _Turn, conversation: Conversation | None
) -> Answer:
    lang = turn.lang
    try:
        check_question(question)
        check_count_text(_clip(question))
        choice = _version_choice(question, version, conversation, turn.kb)
        base_version = choice.version
        _refuse_unknown_keys(question, version_context(base_version, turn.kb))
        return _with_version_note(_ask_turn(question, base_version, turn, conversation), choice)
    except UserError as error:
        answer_lang = "zh" if is_chinese(_clip(question)) else "en"
        prefix = words(answer_lang, "service.ask.unusable_part")
        return Answer(
            language=answer_lang if lang == "auto" else lang,
            intent="validate",
            slots=Slots(language=answer_lang),
            version=base_version,
            answer_markdown=prefix + error.in_language(answer_lang),
        )


def _refuse_unknown_keys(question: str, ctx: VersionContext) -> None:
    """A KEY=VALUE in the question whose key this release's config lacks is refused, as in `check`."""
    slots = hear(_clip(question), ctx, None)
    check_override_keys(typed_overrides(slots), ctx.catalog)


def _with_version_note(answer: Answer, choice: VersionChoice) -> Answer:
    """The resolver's one line (a contradiction, a nearby release) leads the answer and is in its JSON."""
    note = choice.note(answer.language)
    if note:
        answer.version_note = note
        answer.answer_markdown = f"_{note}_\n\n{answer.answer_markdown}"
    return answer


def _ask_turn(question: str, base_version: str, turn: _Turn, conversation: Conversation | None) -> Answer:
    ctx = version_context(base_version, turn.kb)
    cases = split_cases(
        _clip(question), lambda piece: _is_setup(piece, ctx), lambda one, other: _same_setup(one, other, ctx)
    )
    check_setups(len(cases))
    if cases:
        answer = _ask_cases(question, cases, base_version, turn)
        if conversation is not None:
            conversation.several_setups(answer.language, answer.slots.version)
        return answer
    return _ask(question, base_version, turn, conversation)


def _is_setup(text: str, ctx: VersionContext) -> bool:
    """A piece of a question that names a run on its own: a model with a goal or GPUs, or a first try."""
    slots = understand(text, known_stems=list(ctx.stems), index=ctx.index)
    named = bool(slots.model_stem) and bool(slots.goal or slots.num_gpus or slots.num_nodes)
    return named or slots.intent == "first_try"


def _same_setup(first: str, second: str, ctx: VersionContext) -> bool:
    """Two pieces of a listed question are one run told in parts (the GPUs, then that model's recipe)."""
    one, other = (understand(text, known_stems=list(ctx.stems), index=ctx.index) for text in (first, second))
    return same_setup(one, other)


def _ask_cases(question: str, cases: list[str], version: str, turn: _Turn) -> Answer:
    """One answer per listed setup, each on its own slots, then the checklist and sources once."""
    text = _clip(question).strip()
    ctx = version_context(version, turn.kb)
    whole = hear(text, ctx, None)
    answer_lang = whole.language if turn.lang == "auto" else turn.lang
    each = replace(turn, lang=answer_lang, brief=True)
    answers = [_ask(case, version, each) for case in cases]
    hits = _retrieve(turn.settings, ctx.kb, text, answer_lang, ctx.catalog.version)
    citations = citations_from(hits)
    items = checklist(ctx.catalog, answer_lang)
    head = words(answer_lang, "service.ask_cases", len_cases=len(cases))
    parts = [head]
    numbered = enumerate(zip(cases, answers, strict=True), 1)
    parts += [f"### {i}. {case}\n\n{answer.answer_markdown}" for i, (case, answer) in numbered]
    parts.append("\n".join(checklist_lines(items, answer_lang)))
    parts.append("\n".join(sources_lines(citations, answer_lang)))
    return Answer(
        language=answer_lang,
        intent="recommend",
        slots=whole,
        version=ctx.catalog.version,
        checklist=items,
        citations=citations,
        answer_markdown="\n\n".join(p for p in parts if p),
        follow_up=[f for a in answers for f in a.follow_up],
        llm_used=any(a.llm_used for a in answers),
        phrasing="llm" if any(a.llm_used for a in answers) else "deterministic",
        phrasing_reason=next((a.phrasing_reason for a in answers if a.phrasing_reason), None),
        cases=answers,
    )


def _ask(question: str, version: str, turn: _Turn, conversation: Conversation | None = None) -> Answer:
    """The routed answer, led by the line that answers the question's form (assistant/intent_form)."""
    text = _clip(question).strip()
    form = intent_form.classify(text)
    answer = _ask_routed(question, version, turn, conversation, form)
    known = known_cause_lines(
        text, answer.version, answer.language, load_causes(turn.kb)
    )
    if known:
        # A symptom upstream documents the cause of: that cause answers it, before anything near its words.
        keep = answer.answer_markdown and answer.intent not in ("out_of_scope", "greeting")
        answer.answer_markdown = f"{known}\n\n{answer.answer_markdown}" if keep else known
    line = _form_line(text, form, answer, version_context(version, turn.kb))
    if line:
        answer.answer_markdown = f"{line}\n\n{answer.answer_markdown}" if answer.answer_markdown else line
    return answer


def _form_line(text: str, form: intent_form.Form | None, answer: Answer, ctx: VersionContext) -> str:
    """One own line for a form the router does not name ("why does it still run?", "do I need to convert
    first?", "import across GPUs?", "batch size divisible by?"); "" for every other question."""
    lang, version = answer.language, ctx.catalog.version
    if form == "why_allowed":
        arch = ctx.arch_of(ctx.stems.get(answer.slots.model_stem)) if answer.slots.model_stem else None
        experts = arch.num_moe_experts if arch else None
        return intent_form.why_allowed([text], answer.slots, lang, experts)
    if form == "conversion_need" and answer.recipe is not None:
        return intent_form.conversion_need(answer.recipe, version, lang)
    if form == "distributed_import":
        return intent_form.distributed_import(version, lang, intent_form.load_conversion(ctx.kb))
    if form == "batch_divisible":
        return intent_form.batch_divisible(lang)
    if form == "start_from_hf":
        if answer.recipe is not None:  # a model named: whether its recipe starts from converted weights
            return intent_form.conversion_need(answer.recipe, version, lang)
        return "" if answer.slots.model_stem else _start_from_hf(ctx, lang)
    return ""


def _start_from_hf(ctx: VersionContext, lang: str) -> str:
    """How to start from a Hugging Face model, asked with no model named: the release's two steps, shown
    on its first-try pick with checkpoint.pretrained_checkpoint set."""
    chosen = quick_pick.pick("first_try", ctx.catalog, quick_pick.load_table(ctx.kb))
    example = chosen.record if chosen is not None else None
    launch = None
    launcher = ctx.catalog.launcher
    if example is not None and launcher.script is not None:
        dataset = choose_dataset(ctx.catalog.version, example.mode, launcher)
        start = {"checkpoint.pretrained_checkpoint": "${PRETRAINED_CHECKPOINT}"}
        launch = " ".join([launcher.script, *run_recipe_args(launcher, example, dataset, start)])
    table = intent_form.load_conversion(ctx.kb)
    return intent_form.start_from_hf(ctx.catalog.version, lang, table, example, launch)


def _ask_routed(
    question: str, version: str, turn: _Turn, conversation: Conversation | None, form: intent_form.Form | None
) -> Answer:
    settings = turn.settings
    text = _clip(question).strip()
    ctx = version_context(version, turn.kb)
    slots = hear(text, ctx, conversation)
    answer_lang = slots.language if turn.lang == "auto" else turn.lang
    answer = Answer(
        language=answer_lang,
        intent=slots.intent,
        slots=slots,
        version=ctx.catalog.version,
        answer_markdown="",
    )
    if not text or not any(ch.isalnum() for ch in text):
        answer.answer_markdown = words(answer_lang, "service.ask.what_to_tell")
        answer.follow_up = EXAMPLES[answer_lang]
        return answer
    slots = _route(slots, text, ctx)
    feature_text = _feature_text(text, conversation, ctx.kb)
    if slots.intent in ("troubleshoot", "validate") and form == "distributed_import":
        # "import_ckpt runs out of memory converting DeepSeek-V3: can it run over 8 GPUs?" is about the
        # conversion, not a training config to check: the form's answer and the guide's passages.
        slots = slots.model_copy(update={"intent": "explain"})
    asked = intent_form.asked_model(text) if form == "can_train" else None
    named = None if _names_setup(slots) else asked
    if named and not candidate_stems(named, list(ctx.stems)):
        # "Can I train XiaoMi MiMo-V2-Flash with Bridge?": no recipe, said plainly, never a neighbour's.
        unnamed = slots.model_copy(update={"model_text": named})
        answer.answer_markdown = _unknown_model(unnamed, ctx, answer_lang)
        answer.follow_up = [answer.answer_markdown]
        return answer
    sizes = missing_size(asked, ctx.index) if asked else ()
    if asked and sizes:
        # "Is there a recipe for Qwen3-VL-4B? I only see qwen3_vl_8b_finetune_config": the family's sizes,
        # whatever other recipe the question names.
        answer.answer_markdown = _missing_size(asked, sizes, slots.goal, ctx, answer_lang)
        answer.follow_up = [answer.answer_markdown]
        return answer
    chosen = _quick_pick(slots, text, ctx, conversation)
    if chosen is not None:
        slots = quick_pick.apply(slots, chosen)
        turn = replace(turn, quick=chosen)
    elif (intent := quick_pick.quick_intent(text, slots)) and quick_pick.row_exists(
        intent, ctx.catalog.version, quick_pick.load_table(ctx.kb)
    ):
        answer.answer_markdown = _no_quick_pick(intent, ctx, answer_lang)
        return answer
    answer.intent, answer.slots = slots.intent, slots
    if slots.intent == "greeting":
        families = sorted({r.family for r in ctx.catalog.recipes if r.family})
        answer.answer_markdown = greeting_reply(answer_lang, ctx.catalog.version, families)
        answer.follow_up = GREETING_EXAMPLES[answer_lang]
        return answer
    if slots.intent == "out_of_scope" and slots.about_a_plan:
        # "What's the fastest layout for this?" with no plan yet: for which run.
        answer.answer_markdown = clarifying_question(["model", "num_gpus"], answer_lang)
        answer.follow_up = [answer.answer_markdown]
        return answer
    if slots.intent == "out_of_scope":
        answer.answer_markdown = _decline(slots, answer_lang)
        if focus_of(text, load_topics(ctx.kb), moe=None).topics:
            # A Megatron-Bridge topic we do not cover: say so, and where its answer lives.
            answer.answer_markdown = _abstain_line(ctx.kb, text, ctx.catalog.version, answer_lang)
        answer.follow_up = EXAMPLES[answer_lang]
        return answer
    diagnosis = diagnose(slots, ctx.catalog, ctx.arch_of, ctx.kb) if slots.intent == "troubleshoot" else None
    if diagnosis is not None and diagnosis.config is not None:
        return _troubleshoot_answer(answer, diagnosis, text, ctx, answer_lang, settings)
    if slots.intent in ("explain", "troubleshoot"):
        if conversation is not None and conversation.amended_topic and conversation.topic_question:
            text = f"{conversation.topic_question} {text}"  # "and with TP 8?": the last topic, amended
        query = slots.error_text or text
        # The quoted passages are the answer here: each must be about what was asked.
        hits = _answer_passages(settings, ctx.kb, text, query, answer_lang, ctx.catalog.version)
        intro = "matches" if slots.intent == "troubleshoot" else "guide"
        answer.citations = citations_from(hits)
        context = _conversation_context(answer, slots, ctx, answer_lang) if conversation is not None else ""
        context = context or dataset_fact(slots.goal, text, ctx.catalog, answer_lang)
        context = "\n\n".join(c for c in (context, launcher_facts(text, ctx.catalog, answer_lang)) if c)
        context = "\n\n".join(c for c in (_support(text, slots, ctx, answer_lang), context) if c)
        stated = _stated_findings(slots, text, ctx) if slots.intent == "explain" else []
        answer.findings = stated
        context = "\n\n".join(c for c in ("\n".join(findings_lines(stated, answer_lang)), context) if c)
        multiple = sequence_multiple.answer_line(text, slots.overrides, answer_lang, seq=slots.seq_length)
        context = "\n\n".join(c for c in (multiple, context) if c)
        # A topic's own section fact needs no passage: without an index only the quotes are lost.
        lead = _topic_lead(ctx.kb, text, slots, hits, ctx.catalog.version, answer_lang)
        if hits:
            quoted = _passages_answer(hits, answer_lang, intro)
            shown = "\n".join((context, lead, quoted))
            gap = _uncovered(ctx.kb, text, shown, ctx.catalog.version, answer_lang)
            passages = "\n\n".join(p for p in (lead, gap, quoted) if p)
        else:
            abstain = "" if context else _abstain_line(ctx.kb, text, ctx.catalog.version, answer_lang)
            passages = lead or abstain
        answer.answer_markdown = "\n\n".join(
            s for s in [context, passages, "\n".join(sources_lines(answer.citations, answer_lang))] if s
        )
        return answer
    if slots.intent == "compare_versions":
        answer.answer_markdown = _compare_answer(slots, answer_lang, ctx.kb)
        return answer
    if slots.intent == "validate":
        body, rec = _validate_answer(slots, ctx, answer_lang, text)
        if rec is not None:
            answer.recipe = rec.recipe
            answer.findings = list(rec.findings)
            # A slow pipeline is explained by the bubble and VP passages, whatever words the user chose.
            topics = (
                ["pipeline bubble virtual pipeline"] if rec.speed and rec.plan and rec.plan.pp > 1 else []
            )
            query = " ".join([text, *(f.id for f in rec.findings), *topics])
            hits = _retrieve(settings, ctx.kb, query, answer_lang, ctx.catalog.version)
            answer.citations = citations_from(hits)
            # "EP=64 on 64 B200 hits HybridEP topology errors": the check, and the named topic's facts.
            lead = (
                _topic_lead(ctx.kb, text, slots, hits, ctx.catalog.version, answer_lang)
                if is_question(text) and asks_beyond_recipe(text, load_topics(ctx.kb))
                else ""
            )
            answer.answer_markdown = "\n\n".join(
                s for s in [body, lead, "\n".join(sources_lines(answer.citations, answer_lang))] if s
            )
            return answer

    needed = [m for m in missing(slots) if m != "num_gpus"]
    if needed:
        question_back = clarifying_question(needed, answer_lang)
        family = candidate_stems(slots.model_text, list(ctx.stems)) if slots.model_text else []
        if slots.model_text and not (slots.model_stem or slots.recipe_name or slots.hf_model_id or family):
            # "Does Bridge support Mixtral 8x7B?": a model the catalog has no recipe for, whatever the goal.
            answer.answer_markdown = _unknown_model(slots, ctx, answer_lang)
            answer.follow_up = [answer.answer_markdown]
            return answer
        about_model = not (
            slots.overrides
            or slots.error_text
            or slots.features
            or support.match_feature(text, support.load_table(ctx.kb))
            or load_topics(ctx.kb).named_in(text)
        )  # "Is DeepEP supported on GB200 for Qwen3?" asks about a feature, not about the model
        model_known = bool(slots.model_stem or family)
        if "goal" in needed and about_model and model_known and support.asks_model_support(text):
            # "Does Megatron Bridge support Gemma 3?": yes, with the catalog's recipes of that model.
            sized = re.search(r"\d+(?:\.\d+)?\s*[bm]\b", slots.model_text or "", re.IGNORECASE)
            missing_sizes = missing_size(slots.model_text or "", ctx.index) if sized else ()
            if missing_sizes:  # "支持 Gemma 3 4B 吗？" when only gemma3_1b has recipes: no, not yes
                answer.answer_markdown = _missing_size(
                    slots.model_text or "", missing_sizes, slots.goal, ctx, answer_lang
                )
                answer.follow_up = [question_back]
                return answer
            stems = [slots.model_stem] if slots.model_stem and (sized or not family) else family
            said = support.model_support(
                slots.model_text or slots.model_stem or "", stems, ctx.catalog.recipes, ctx.catalog.version,
                answer_lang,
            )  # fmt: skip
            if said:
                answer.answer_markdown = said
                answer.follow_up = [question_back]
                return answer
        if "model" in needed and family:
            listed = ", ".join(f"`{stem}`" for stem in family[:8])
            question_back += " " + words(
                answer_lang, "service.ask.model_versions", model_text=slots.model_text, listed=listed
            )
        # "Pretrain a model with the GPT-OSS architecture, where do I start?": the family's recipes for
        # that goal, one per size, lead the answer; the size is still asked for.
        by_goal = _family_goal_recipes(ctx.catalog, family, slots.goal) if "model" in needed else []
        family_lead = (
            words(
                answer_lang,
                "service.ask.family_goal_recipes",
                model_text=slots.model_text,
                goal=slots.goal,
                version=ctx.catalog.version,
                listed=", ".join(f"`{name}`" for name in by_goal[:8]),
                script=ctx.catalog.launcher.script,
            )
            if by_goal
            else ""
        )
        answer.follow_up = [question_back]
        # "Can I use Megatron-FSDP for <a model we cannot place> on H100?" is still a question the guide
        # can answer in general: quote it, then ask what a tailored answer needs. "What is the fastest
        # layout for ...?" asks for a plan, which only the missing answer makes possible.
        general = is_question(text) and not slots.wants_fastest
        release = ctx.catalog.version
        hits = _answer_passages(settings, ctx.kb, text, text, answer_lang, release) if general else []
        answer.citations = citations_from(hits)
        topical = general and bool(focus_of(text, load_topics(ctx.kb), moe=None).topics)
        if topical and not hits:
            # Nothing here answers that topic: say where it is answered, not which recipe we would need.
            answer.answer_markdown = _abstain_line(ctx.kb, text, ctx.catalog.version, answer_lang)
            return answer
        answer.answer_markdown = "\n\n".join(
            s
            for s in [
                family_lead,
                _support(text, slots, ctx, answer_lang) if general else "",
                _topic_lead(ctx.kb, text, slots, hits, ctx.catalog.version, answer_lang) if hits else "",
                _passages_answer(hits, answer_lang, "guide") if hits else "",
                "\n".join(sources_lines(answer.citations, answer_lang)),
                question_back,
            ]
            if s
        )
        return answer

    shortened = False
    if turn.quick is not None:
        slots = _assume_gpus(slots, turn.quick.record)
        if turn.quick.intent == "first_try":
            slots, shortened = _smoke_slots(slots, turn.quick.record, ctx)
    rec = recommend(slots, ctx.catalog, ctx.arch_of, ctx.kb)
    rec.smoke_shrunk = shortened
    if rec.recipe is None:
        names_feature = is_question(text) and feature_text == text
        feature = _support(text, slots, ctx, answer_lang) if names_feature else ""
        if rec.unknown_model:
            answer.answer_markdown = _unknown_model(slots, ctx, answer_lang)
        else:
            answer.answer_markdown = clarifying_question(missing(slots) or ["model"], answer_lang)
        answer.follow_up = [answer.answer_markdown]
        # "Is Megatron FSDP validated for LoRA on an MoE model?": the feature's row, then what a recipe needs.
        answer.answer_markdown = "\n\n".join(s for s in (feature, answer.answer_markdown) if s)
        return answer
    return _answer_from(answer, rec, ctx, text, answer_lang, turn, feature_text=feature_text)


def _family_goal_recipes(catalog: Catalog, family: list[str], goal: str | None) -> list[str]:
    """The recipe each size of a model family starts from for the goal (`gpt_oss_20b_pretrain_config`)."""
    if not goal:
        return []
    chosen = (exact_recipe(catalog, stem, goal, None) for stem in family)
    return [c.record.name for c in chosen if c is not None]


def _names_setup(slots: Slots) -> bool:
    return bool(slots.model_stem or slots.model_text or slots.recipe_name or slots.hf_model_id)


def _troubleshoot_answer(
    answer: Answer, diagnosis, text: str, ctx: VersionContext, lang: str, settings: Settings
) -> Answer:
    """An error on a named config: the rule module's diagnosis first, then the guide passages it cites."""
    answer.recipe = diagnosis.record
    answer.findings = list(diagnosis.findings)
    query = " ".join([answer.slots.error_text or text, *(f.id for f in diagnosis.causes)])
    hits = _retrieve(settings, ctx.kb, query, lang, ctx.catalog.version)
    answer.citations = citations_from(hits)
    # An error the rule module reproduces is answered by it: the guide's best section only backs it up.
    quoted = hits[:1] if diagnosis.explained else hits
    answer.answer_markdown = "\n\n".join(
        s
        for s in [
            render(diagnosis, lang, asks_if_broken(text)),
            _passages_answer(quoted, lang, "guide") if hits else "",
            "\n".join(sources_lines(answer.citations, lang)),
        ]
        if s
    )
    return answer


def _weak_scaled_line(rec: Recommendation, catalog: Catalog, lang: str) -> str:
    """The launcher weak-scales this benchmark recipe's GBS on the plan's DP: say so, and how to keep it
    (led by "no variant is written for N GPUs" when the release has none)."""
    plan, version = rec.plan, catalog.version
    if plan is None or any(item.key == "train.global_batch_size" for item in rec.overrides):
        return ""
    user = {**rec.slots.overrides}
    weak = weak_scaling(rec.recipe, version, user)
    if weak is None or plan.dp == weak.dp or weak.at(plan.dp) != plan.gbs:
        return ""
    lead = ""
    other_count = plan.num_gpus != rec.recipe.encoded_gpus
    if other_count and benchmark_for_count(catalog, rec.recipe, plan.num_gpus) is None:
        lead = words(lang, "service.answer_from.no_count_variant", gpus=plan.num_gpus, version=version)
    return lead + words(
        lang,
        "service.answer_from.weak_scaled",
        gpus=plan.num_gpus,
        version=version,
        old=weak.gbs,
        dp_old=weak.dp,
        gpus_old=weak.gpus,
        new=plan.gbs,
        dp=plan.dp,
    )


def _answer_from(
    answer: Answer,
    rec: Recommendation,
    ctx: VersionContext,
    text: str,
    lang: str,
    turn: _Turn,
    *,
    feature_text: str | None,
) -> Answer:
    settings = turn.settings
    preface: list[str] = []
    if turn.quick is not None:
        preface += _quick_preface(rec, turn.quick, ctx.catalog.version, lang)
    if rec.selection.match == "similar-architecture":
        named = rec.slots.hf_model_id or rec.slots.model_text or ""
        preface.append(
            words(
                lang,
                "service.answer_from.similar_architecture",
                version=ctx.catalog.version,
                named=named,
                name=rec.recipe.name,
            )
        )
    if rec.switched_to_peft:
        preface.append(words(lang, "service.answer_from.single_gpu_lora"))
    if note := broken_recipe_note(rec.recipe, lang):
        preface.append(note)
    if rec.recipe.kind == "benchmark":
        preface.append(words(lang, "service.answer_from.benchmark_recipe"))
        if line := _weak_scaled_line(rec, ctx.catalog, lang):
            preface.append(line)
    gpu_type = rec.cluster.gpu_type if rec.cluster else rec.slots.gpu_type
    if typed := precision_variants(ctx.catalog, rec.recipe, rec.slots.precision, gpu_type):
        listed = ", ".join(f"`{v.name}` ({v.encoded_gpus or v.min_gpus} GPUs)" for v in typed)
        preface.append(
            words(
                lang,
                "service.answer_from.precision_variants",
                version=ctx.catalog.version,
                precision=precision_label(rec.slots.precision or ""),
                gpu=(gpu_type or "").upper(),
                listed=listed,
            )
        )
    variants = other_variants(ctx.catalog, rec.recipe) if rec.selection.match != "explicit" else []
    if variants:
        listed = ", ".join(f"`{v.name}` ({v.encoded_gpus or v.min_gpus} GPUs)" for v in variants)
        count = rec.recipe.encoded_gpus or rec.recipe.min_gpus
        preface.append(
            words(lang, "service.answer_from.nearest_variant", count=count, listed=listed)
            if rec.slots.num_gpus
            else words(lang, "service.answer_from.other_variants", count=count, listed=listed)
        )
    if rec.slots.speed_question and rec.plan is not None:
        estimate_run(rec, rec.slots.goal or rec.recipe.mode, kb=ctx.kb, search=True)
        preface += speed_diagnosis_lines(rec, lang)
    if rec.slots.asks_why:
        preface += why_lines(rec, lang)
    if rec.slots.num_gpus is None and rec.cluster is not None:
        preface.append(words(lang, "service.answer_from.assumed_gpus", num_gpus=rec.cluster.num_gpus))
    if not turn.brief:
        query = " ".join([text, *(f.id for f in rec.findings[:3])])
        hits = _retrieve(settings, ctx.kb, query, lang, ctx.catalog.version)
        answer.citations = citations_from(hits)
        answer.checklist = checklist(ctx.catalog, lang)
        if feature_text and (is_question(text) or feature_text != text):
            # "How do I enable Megatron FSDP for qwen3_vl_30b_a3b_sft_config?": the feature's own row first.
            preface.append(_support(feature_text, rec.slots, ctx, lang))
        if is_question(text) and asks_beyond_recipe(text, load_topics(ctx.kb)):
            # "How do I switch deepseek_v3_pretrain_config to HybridEP?": the recipe, and the topic's facts.
            preface.append(_topic_lead(ctx.kb, text, rec.slots, hits, ctx.catalog.version, lang))
    answer.recipe = rec.recipe
    answer.dataset = rec.dataset
    answer.plan = rec.plan
    answer.commands = rec.commands
    answer.overrides = list(rec.overrides)
    answer.findings = list(rec.findings)
    answer.fit = rec.fit
    parts = {
        "throughput": rec.speed,
        "nearest_fit": rec.nearest,
        "faster_layout": rec.faster,
        "searched_best": rec.searched_best,
    }
    if (lora := rec.peft_alternative) is not None:
        parts["peft_alternative"] = PeftAlternative(
            recipe=lora.recipe.name, plan=lora.plan, fit=lora.fit, commands=lora.commands
        )
    computed = {key: value for key, value in parts.items() if value is not None}
    answer.estimate = AnswerEstimate(**computed) if computed else None
    answer.answer_markdown = compose_recommendation(rec, answer.checklist, answer.citations, lang, preface)
    if rec.slots.num_gpus is None:
        answer.follow_up.append(clarifying_question(["num_gpus"], lang))
    if turn.quick is not None:
        answer.follow_up += _quick_follow_up(turn.quick, rec, lang)
    wants_llm = turn.use_llm or (turn.use_llm is None and settings.llm_base_url)
    if wants_llm and not turn_budget.spent():
        # lazy: the LLM phrasing stack (LangChain) loads only when an LLM phrases the answer
        from assistant.phrase import phrase

        phrased = phrase(answer, settings)
        if phrased.text is not None:
            answer.answer_markdown, answer.llm_used, answer.phrasing = phrased.text, True, "llm"
        else:
            answer.phrasing_reason = phrased.reason
    return answer
