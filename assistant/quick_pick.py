"""Intent-only questions ("the quickest smoke test?", "fine-tune a VLM on 8 GPUs", "which recipe for
diffusion?"): the starting recipe each release's own quick-reference table gives for that intent.

The table is data (knowledge_base/quick_reference.json, each row citing its upstream file); its names are
resolved against the version's catalog, so only recipes that exist there are ever offered. Pure apart from
`load_table`: the caller passes the table and the catalog.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from assistant.kb import KnowledgeBase
from assistant.model_names import split_recipe_name
from assistant.records import Catalog, RecipeRecord, Slots
from assistant.understand import normalise, rx

# Which quick-reference row a question with no model asks about; most specific first.
_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("diffusion", rx(r"diffusion|扩散|text[- ]?to[- ]?(?:image|video)|文生图|文生视频|\bt2[iv]\b")),
    (
        "finetune_vlm",
        rx(r"\bvlms?\b|vision[- ]language|multi[- ]?modal|多模态|视觉语言|图文|视觉模型|\bvl model"),
    ),
    ("large_moe", rx(r"(?:large|big|huge|大型?|超大)\s*(?:的\s*)?moe|moe.{0,12}(?:235b|671b|\d{3,}b\+?)")),
    ("small_moe", rx(r"(?:small|little|小型?)\s*(?:的\s*)?moe|\bmoe\b")),
    ("long_context", rx(r"long[- ]context|long sequences?|长上下文|长序列|超长")),
    ("dense_70b", rx(r"dense\s*70b|70b\s*dense|稠密\s*70b|70b\s*稠密")),
)


@dataclass(frozen=True)
class QuickPick:
    intent: str
    record: RecipeRecord
    alternatives: tuple[str, ...]
    source: str  # upstream file:line the row comes from
    note: str | None = None


def load_table(kb: KnowledgeBase) -> dict[str, Any]:
    return kb.json("quick_reference.json")


def quick_intent(text: str, slots: Slots) -> str | None:
    """The quick-reference row a question asks about, when it names no model; None otherwise."""
    if slots.model_stem or slots.hf_model_id or slots.recipe_name or slots.model_text:
        return None
    if slots.intent == "first_try":
        return "first_try"
    if slots.intent != "recommend":
        return None
    t = normalise(text)
    found = next((name for name, pattern in _INTENTS if pattern.search(t)), None)
    if found:
        return found
    if slots.goal == "peft" and slots.num_gpus == 1:
        return "lora_1gpu"
    if slots.seq_length and slots.seq_length >= 32 * 1024:
        return "long_context"
    return None


def _resolve(pattern: str, catalog: Catalog) -> list[RecipeRecord]:
    """Library recipes of the catalog the name (or '*' pattern) means, case-insensitively, shortest first."""
    wanted = pattern.lower()
    found = [
        r
        for r in catalog.recipes
        if r.kind == "library" and r.reachable and fnmatch.fnmatchcase(r.name.lower(), wanted)
    ]
    return sorted(found, key=lambda r: (len(r.name), r.name))


def pick(intent: str, catalog: Catalog, table: dict[str, Any]) -> QuickPick | None:
    """The first pick of the version's row that its catalog has; the others as alternatives."""
    version = table["versions"].get(catalog.version)
    row = next((r for r in (version or {}).get("rows", []) if r["intent"] == intent), None)
    if row is None:
        return None
    records = [record for name in row["picks"] for record in _resolve(name, catalog)]
    if not records:
        return None
    names = list(dict.fromkeys(r.name for r in records))
    return QuickPick(
        intent, records[0], tuple(names[1:]), row["source"], row.get("note") or version.get("note")
    )


def row_exists(intent: str, version: str, table: dict[str, Any]) -> bool:
    rows = table["versions"].get(version, {}).get("rows", [])
    return any(r["intent"] == intent for r in rows)


def smoke_steps(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The ways to shrink a smoke run that does not fit, in order, each with the few iterations it runs."""
    smoke = table["smoke_test"]
    iters = {"train.train_iters": str(smoke["train_iters"])}
    return [
        {"seq_length": s.get("seq_length"), "overrides": {**s.get("overrides", {}), **iters}}
        for s in smoke["steps"]
    ]


_LABELS = {
    "first_try": ("a first smoke test", "第一次冒烟测试"),
    "finetune_small": ("fine-tuning a small dense model", "微调小型稠密模型"),
    "lora_1gpu": ("LoRA on one GPU", "单卡 LoRA"),
    "dense_70b": ("pretraining a dense 70B model", "预训练稠密 70B 模型"),
    "small_moe": ("training a small MoE", "训练小型 MoE"),
    "large_moe": ("training a large MoE", "训练大型 MoE"),
    "long_context": ("long-context training", "长上下文训练"),
    "finetune_vlm": ("fine-tuning a vision-language model", "微调视觉语言模型"),
    "diffusion": ("diffusion training", "扩散模型训练"),
}
_REASONS = {
    "first_try": (
        "a dense model on mock data: nothing to download, it proves the install",
        "稠密模型加模拟数据：无需下载数据集，用来验证安装",
    ),
    "finetune_small": ("the cheapest full fine-tune of a dense model", "稠密模型全参微调中开销最小的"),
    "lora_1gpu": ("LoRA of a small dense model fits one GPU", "小型稠密模型的 LoRA 单卡即可"),
    "dense_70b": ("the reference dense recipe at that size", "该规模的参考稠密配方"),
    "small_moe": ("expert parallelism at a small scale", "小规模上的专家并行"),
    "large_moe": ("the large MoE recipe, written for hundreds of GPUs", "大型 MoE 配方，按数百张 GPU 编写"),
    "long_context": (
        "its layout already sets context parallelism for a long sequence",
        "其布局已为长序列设置好上下文并行",
    ),
    "finetune_vlm": ("the first VLM fine-tuning pick of the table", "快速参考表中视觉语言模型微调的首选"),
    "diffusion": ("the first diffusion pick of the table", "快速参考表中扩散模型训练的首选"),
}


def label(intent: str, lang: str) -> str:
    en, zh = _LABELS.get(intent, (intent, intent))
    return zh if lang == "zh" else en


def preface(chosen: QuickPick, version: str, lang: str) -> str:
    """One line: the pick for the user's version, why, where it comes from, and the alternatives."""
    en, zh = _REASONS.get(chosen.intent, ("", ""))
    others = ", ".join(f"`{name}`" for name in chosen.alternatives)
    if lang == "zh":
        text = (
            f"你没有指定模型。对于{label(chosen.intent, lang)}，Megatron-Bridge {version} 自身的快速参考从 "
            f"`{chosen.record.name}` 开始（{zh}；来源 `{chosen.source}`）。"
        )
        return text + (f"备选：{others}。" if others else "")
    text = (
        f"You named no model. For {label(chosen.intent, lang)}, Megatron-Bridge {version}'s own quick "
        f"reference starts from `{chosen.record.name}` ({en}; source `{chosen.source}`)."
    )
    return text + (f" Alternatives: {others}." if others else "")


def apply(slots: Slots, chosen: QuickPick) -> Slots:
    """The slots of the pick: its recipe by name, its model and goal; the intent is kept."""
    parts = split_recipe_name(chosen.record.name)
    return slots.model_copy(
        update={
            "recipe_name": chosen.record.name,
            "model_stem": parts.stem if parts else None,
            "model_text": parts.stem if parts else chosen.record.name,
            "goal": chosen.record.mode,
            "quick_pick": chosen.intent,
        }
    )
