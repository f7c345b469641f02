"""The assistant's own sentences for a question on a guide topic (recompute, checkpoints, data, MoE dispatch, ...).

Quoting a guide section is not an answer by itself: the reader has to find the sentence that matters, and a
quote never says which release or which model it was read for. This module writes one or two sentences
first, naming the topic, the release and the model asked about, with the facts of the sections retrieval
found, taken from `knowledge_base/section_facts.json` (per section and release, each with its upstream
source), and the upstream doc of that release from the topic table. The sections are still quoted after it.
Pure apart from `load_facts`; no fact is written that the table does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.records import Hit
from assistant.relevance import TopicTable

MAX_FACTS = 2


@dataclass(frozen=True)
class SectionFact:
    anchor: str  # "recompute.md#full-recompute"
    en: str
    zh: str
    sources: tuple[str, ...]
    versions: frozenset[str] | None  # None: every bundled release

    def holds_for(self, version: str) -> bool:
        return self.versions is None or version in self.versions

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class FactTable:
    sections: dict[str, tuple[SectionFact, ...]]
    labels: dict[str, dict[str, str]]  # topic id -> {"en": ..., "zh": ...}

    def fact(self, anchor: str, version: str) -> SectionFact | None:
        return next((f for f in self.sections.get(anchor, ()) if f.holds_for(version)), None)


@lru_cache(maxsize=4)
def load_facts(knowledge_base: Path) -> FactTable:
    """The section facts of a knowledge base; one without the file (a user's own documents) has none."""
    path = knowledge_base / "section_facts.json"
    if not path.exists():
        return FactTable(sections={}, labels={})
    data = json.loads(path.read_text(encoding="utf-8"))
    sections = {
        anchor: tuple(
            SectionFact(
                anchor=anchor,
                en=raw["en"],
                zh=raw["zh"],
                sources=tuple(raw["sources"]),
                versions=frozenset(raw["versions"]) if "versions" in raw else None,
            )
            for raw in facts
        )
        for anchor, facts in data["sections"].items()
    }
    return FactTable(sections=sections, labels=data.get("labels", {}))


def anchor_of(hit: Hit) -> str:
    """"guide/en/recompute.md#full-recompute" -> "recompute.md#full-recompute" (same anchors in en and zh)."""
    return hit.source.rsplit("/", 1)[-1]


def _ordered(hits: Sequence[Hit], topic_ids: Sequence[str], table: TopicTable) -> list[Hit]:
    """The passages of the topics the question names first, in retrieval order otherwise."""
    named = [t for t in table.topics if t.id in topic_ids]
    return sorted(hits, key=lambda h: not any(t.covers(h.source) for t in named))


def topic_lead(
    question: str,
    hits: Sequence[Hit],
    version: str,
    lang: str,
    *,
    topics: TopicTable,
    facts: FactTable,
    entity: str = "",
) -> str:
    """The own sentences before the quotes; "" when no retrieved section has a fact for this release.

    `entity`: the model or recipe the question names, already formatted (a catalog name in backticks or the
    user's words), so the answer says whom it is about."""
    named = [t.id for t in topics.named_in(question)]
    picked: list[SectionFact] = []
    for hit in _ordered(hits, named, topics):
        fact = facts.fact(anchor_of(hit), version)
        if fact is not None and fact not in picked:
            picked.append(fact)
        if len(picked) == MAX_FACTS:
            break
    if not picked:
        return ""
    topic_ids = named or sorted(topics.covering(next(h for h in hits if facts.fact(anchor_of(h), version))))
    label = next((facts.labels[t][lang] for t in topic_ids if t in facts.labels), "")
    upstream = topics.upstream_for(list(topic_ids), version)
    sources = list(dict.fromkeys(s for f in picked for s in f.sources))
    body = ("；" if lang == "zh" else "; ").join(f.text(lang) for f in picked)
    if lang == "zh":
        about = f"，针对 {entity}" if entity else ""
        head = f"**{label}**（Megatron-Bridge {version}{about}）：" if label else f"Megatron-Bridge {version}{about}："
        lines = [f"{head}{body}。", "来源：" + "；".join(f"`{s}`" for s in sources)]
        if upstream:
            lines.append(f"该版本的上游文档：{'、'.join(f'`{p}`' for p in upstream)}。")
        return "\n\n".join(lines)
    about = f", for {entity}" if entity else ""
    head = f"**{label}** (Megatron-Bridge {version}{about}): " if label else f"Megatron-Bridge {version}{about}: "
    lines = [f"{head}{body[:1].upper()}{body[1:]}.", "Source: " + "; ".join(f"`{s}`" for s in sources)]
    if upstream:
        lines.append(f"Upstream doc in that release: {' and '.join(f'`{p}`' for p in upstream)}.")
    return "\n\n".join(lines)
