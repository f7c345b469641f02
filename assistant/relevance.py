"""Is a retrieved passage about what the question asks, and where does the answer live when none is?

Retrieval ranks passages by nearness of words; a passage near the words can still be about another model
("Qwen3.5-VL FSDP" for a Qwen3 question), another kind of model (MoE expert meshes for a dense Llama) or
another topic (a DeepEP table for a precision question). Such passages are not shown. When nothing is
left, the assistant abstains and names the upstream file of the user's release that covers the topic
(`knowledge_base/topics.json`). Pure functions over data passed in; the table is read once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assistant.kb import KnowledgeBase
from assistant.records import Hit

# A model named in free text or a recipe name: family, then its generation ("Qwen3.5", "qwen35_vl",
# "DeepSeek-V3", "Llama 3.1"), then an optional VL marker. A number followed by B/M is a size, not a
# generation, and sizes are not part of the key: a passage about "Qwen3 30B-A3B" is about the Qwen3 the
# user named, whatever its size.
_MODEL_RE = re.compile(
    r"(?<![a-z])(llama|qwen|deepseek|gemma|glm|mixtral|mistral|ministral|nemotron[-_ ]?h(?![a-z])|nemotron|"
    r"gpt[-_ ]?oss|kimi|minimax|moonlight|olmoe|falcon|exaone)(?![a-z])"
    r"(?:[-_ ]?v?(\d+(?:\.\d+)?)(?![\d.]|[bmk](?![a-z])))?"
    r"((?:[-_ ]?(?:\d+(?:\.\d+)?[bm]|a\d+b|moe|instruct|base|next|omni))*[-_ ]?vl(?![a-z]))?",
    re.IGNORECASE,
)
_MOE_TEXT_RE = re.compile(
    r"\bmoe\b|expert|mixture[- ]of[- ]experts|\bep\b|\bep\s?=?\s?\d|deepep|hybridep|a\d+b\b|专家", re.I
)


@dataclass(frozen=True)
class Topic:
    id: str
    en: tuple[re.Pattern[str], ...]
    zh: tuple[str, ...]
    guide: tuple[str, ...]  # "file.md" (every section) or "file.md#anchor"
    upstream: dict[str, tuple[str, ...]]
    hint: dict[str, str]  # words that find this topic's guide sections, per language

    def named_in(self, text: str) -> bool:
        return any(p.search(text) for p in self.en) or any(term in text for term in self.zh)

    def covers(self, source: str) -> bool:
        """True when a passage's source ("guide/en/x.md#a") is one of this topic's guide sections."""
        page = source.rsplit("/", 1)[-1]
        return any(page == ref or page.split("#", 1)[0] == ref for ref in self.guide)


@dataclass(frozen=True)
class TopicTable:
    topics: tuple[Topic, ...]
    fallback: dict[str, tuple[str, ...]]

    def named_in(self, text: str) -> list[Topic]:
        return [t for t in self.topics if t.named_in(text)]

    def covering(self, hit: Hit) -> set[str]:
        """The topics a passage is about: the guide sections listed for them, or their words in its title."""
        title = hit.section or hit.heading
        return {t.id for t in self.topics if t.covers(hit.source) or (t.guide and t.named_in(title))}

    def search_hint(self, text: str, lang: str) -> str:
        """The guide words of the topics a question names, to search again when no passage was about them."""
        return " ".join(t.hint[lang] for t in self.named_in(text) if t.guide and lang in t.hint)

    def upstream_for(self, topic_ids: list[str], version: str) -> tuple[str, ...]:
        """The upstream files of the first named topic that has some in this release; () when none has."""
        for topic in self.topics:
            if topic.id in topic_ids and topic.upstream.get(version):
                return topic.upstream[version]
        return ()


@dataclass(frozen=True)
class Focus:
    """What a question is about: the models it names, whether that model is dense, and its topics."""

    models: frozenset[tuple[str, str, bool]]
    dense: bool
    topics: tuple[str, ...]


@dataclass(frozen=True)
class Screened:
    hits: list[Hit]
    dropped: list[tuple[str, str]]  # (source, reason)


def model_keys(text: str) -> frozenset[tuple[str, str, bool]]:
    """(family, generation, is_vl) of each model named in a text: "Qwen3.5-VL" -> ("qwen", "35", True)."""
    keys = set()
    for match in _MODEL_RE.finditer(text):
        family = re.sub(r"[-_ ]", "", match.group(1).lower())
        keys.add((family, (match.group(2) or "").replace(".", ""), bool(match.group(3))))
    return frozenset(keys)


def same_model(a: tuple[str, str, bool], b: tuple[str, str, bool]) -> bool:
    """Same family and VL-ness, and the same generation unless one of them gives none ("Llama 70B")."""
    return a[0] == b[0] and a[2] == b[2] and (a[1] == b[1] or not a[1] or not b[1])


def _label(key: tuple[str, str, bool]) -> str:
    return key[0] + key[1] + ("-vl" if key[2] else "")


def focus_of(question: str, table: TopicTable, *, moe: bool | None) -> Focus:
    """`moe` is what the catalog knows of the model the question names (None: no model, or unknown)."""
    dense = moe is False and not _MOE_TEXT_RE.search(question)
    return Focus(model_keys(question), dense, tuple(t.id for t in table.named_in(question)))


def _reason(hit: Hit, focus: Focus, table: TopicTable, strict: bool) -> str | None:
    title = hit.section or hit.heading
    about = model_keys(title)
    if focus.models and about and not any(same_model(a, q) for a in about for q in focus.models):
        named = ", ".join(sorted(map(_label, focus.models)))
        return f"about {', '.join(sorted(map(_label, about)))}, not {named}"
    if focus.dense and _MOE_TEXT_RE.search(hit.heading):
        return "about MoE models; the question's model is dense"
    if strict and focus.topics and not table.covering(hit) & set(focus.topics):
        return f"not about {', '.join(focus.topics)}"
    return None


def screen(hits: list[Hit], focus: Focus, table: TopicTable, *, strict: bool) -> Screened:
    """Keep the passages about the question's model and kind of model; with `strict` (the passages are the
    whole answer), also about one of its topics."""
    kept, dropped = [], []
    for hit in hits:
        reason = _reason(hit, focus, table, strict)
        if reason is None:
            kept.append(hit)
        else:
            dropped.append((hit.source, reason))
    return Screened(kept, dropped)


def abstention(focus: Focus, table: TopicTable, version: str, lang: str) -> str:
    """One line: nothing here answers it, and the upstream file of this release that does (or, when the
    question names no topic the table knows, that release's documentation index)."""
    paths = table.upstream_for(list(focus.topics), version)
    where = (" and " if lang == "en" else "、").join(
        f"`{p}`" for p in paths or table.fallback.get(version, ())
    )
    if lang == "zh":
        nothing = f"配方目录、规则和指南都没有回答这个问题（Megatron-Bridge {version}）"
        tail = f"答案在该版本的 {where} 中。" if paths else f"可以从该版本的文档索引 {where} 查起。"
        return f"{nothing}；{tail}" if where else f"{nothing}。"
    nothing = (
        f"Nothing in the recipe catalog, the rules or the guide answers this for Megatron-Bridge {version}"
    )
    tail = (
        f"the answer lives in {where} of that release." if paths else f"start from {where} of that release."
    )
    return f"{nothing}; {tail}" if where else f"{nothing}."


def _topic(raw: dict) -> Topic:
    return Topic(
        id=raw["id"],
        en=tuple(re.compile(p, re.IGNORECASE) for p in raw["en"]),
        zh=tuple(raw["zh"]),
        guide=tuple(raw["guide"]),
        upstream={v: tuple(paths) for v, paths in raw["upstream"].items()},
        hint=raw.get("hint", {}),
    )


@lru_cache(maxsize=4)
def load_topics(kb: KnowledgeBase) -> TopicTable:
    """The topic table of a knowledge base; one without it (a user's own documents) screens by model only."""
    data = kb.json("topics.json", required=False)
    if data is None:
        return TopicTable(topics=(), fallback={})
    return TopicTable(
        topics=tuple(_topic(raw) for raw in data["topics"]),
        fallback={v: tuple(paths) for v, paths in data["fallback"].items()},
    )
