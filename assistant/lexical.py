"""Lexical layer shared by ingest and retrieval: normalisation, BM25 tokens, zh->en glossary expansion.

MiniLM is English-only, so Chinese questions reach the knowledge through BM25 tokens (jieba) and through
glossary expansion into English terms. The index and the query MUST use the same `tokenize` function.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.kb import KnowledgeBase, knowledge_base

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ASCII_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9_.\-/+]*[a-z0-9+]|[a-z0-9]")
_SIZE_K_RE = re.compile(r"^(\d+(?:\.\d+)?)k$")
_PART_SPLIT_RE = re.compile(r"[_.\-/]+")
_WAN_RE = re.compile(r"(\d+(?:\.\d+)?)\s*万")

EN_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "be",
        "been",
        "what",
        "how",
        "why",
        "which",
        "when",
        "where",
        "and",
        "or",
        "with",
        "my",
        "i",
        "me",
        "we",
        "you",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "from",
        "by",
        "at",
        "as",
        "if",
        "so",
        "any",
        "some",
        "use",
        "using",
        "want",
        "need",
        "get",
        "there",
        "their",
        "then",
        "than",
        "into",
        "about",
        "please",
    ]
)
ZH_STOPWORDS = frozenset(
    [
        "的",
        "了",
        "吗",
        "呢",
        "吧",
        "啊",
        "是",
        "在",
        "和",
        "与",
        "及",
        "或",
        "我",
        "你",
        "他",
        "我们",
        "你们",
        "要",
        "想",
        "能",
        "会",
        "把",
        "被",
        "让",
        "给",
        "对",
        "就",
        "都",
        "也",
        "还",
        "请",
        "什么",
        "怎么",
        "怎样",
        "如何",
        "为什么",
        "哪个",
        "哪些",
        "一个",
        "这个",
        "那个",
        "可以",
        "需要",
        "应该",
    ]
)

# Bump when `tokenize` changes: stored BM25 tokens are then rebuilt on the next ingest.
TOKENIZER_VERSION = "6"

# Question budgets: BM25 over a 100 KB paste is slow and pointless; the first part carries the intent.
MAX_QUERY_CHARS = 4000


@dataclass(frozen=True)
class GlossaryTerm:
    zh: str
    en: tuple[str, ...]
    zh_variants: tuple[str, ...] = ()  # other Chinese wordings of the same term ("显存不够" for "显存溢出")


def normalize(text: str) -> str:
    """NFKC (full-width -> half-width) and lower-case."""
    return unicodedata.normalize("NFKC", text).lower()


def is_chinese(text: str) -> bool:
    """True when CJK characters make up a meaningful share of the letters."""
    cjk = len(CJK_RE.findall(text))
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return cjk >= 2 and cjk / max(1, cjk + latin / 4) >= 0.2


def load_glossary(path: Path | None = None) -> tuple[GlossaryTerm, ...]:
    """The glossary at `path`, default the knowledge base's glossary.json (none: no terms)."""
    if path is None:
        return _bundled_glossary(knowledge_base())
    return _terms(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else ()


@lru_cache(maxsize=4)
def _bundled_glossary(kb: KnowledgeBase) -> tuple[GlossaryTerm, ...]:
    data = kb.json("glossary.json", required=False)
    return _terms(data) if data else ()


def _terms(data: dict) -> tuple[GlossaryTerm, ...]:
    return tuple(
        GlossaryTerm(zh=t["zh"], en=tuple(t["en"]), zh_variants=tuple(t.get("zh_variants", ())))
        for t in data.get("terms", [])
    )


@lru_cache(maxsize=1)
def _jieba():
    import jieba  # loaded on the first Chinese text only: its dictionary takes about a second

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    for term in load_glossary():
        for word in (term.zh, *term.zh_variants):
            jieba.add_word(word, freq=200000)
    return jieba


_RELEASE_RE = re.compile(r"v?(\d+\.\d+\.(?:\d+|x))\+?")


def named_releases(text: str) -> set[str]:
    """The Megatron-Bridge releases a text names ("0.3.1", "v0.6.0"), without the "v"."""
    return {m.group(1) for m in map(_RELEASE_RE.fullmatch, _ASCII_TOKEN_RE.findall(normalize(text))) if m}


def singular(word: str) -> str | None:
    """The singular of an English plural ("overrides" -> "override", "batches" -> "batch"), so a question
    and a passage match whichever number each uses; None when the word does not look plural."""
    if not word.isalpha() or len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "is")):
        return None
    if word.endswith("us") and len(word) > 4:  # status, bonus; but GPUs
        return None
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def _ascii_tokens(text: str) -> Iterable[str]:
    for match in _ASCII_TOKEN_RE.finditer(text):
        token = match.group(0)
        yield token
        if one := singular(token):
            yield one
        release = _RELEASE_RE.fullmatch(token)  # "v0.3.1", "v0.6.0+" and "0.3.1" name one release
        if release:
            if release.group(0) != release.group(1):
                yield release.group(1)
            continue  # its digits alone would match every number
        parts = [p for p in _PART_SPLIT_RE.split(token) if p]
        if len(parts) > 1:
            yield from (p for p in parts if p not in EN_STOPWORDS)
        size = _SIZE_K_RE.match(token)
        if size:
            yield str(int(float(size.group(1)) * 1024))
        elif token.isdigit() and int(token) >= 1024 and int(token) % 1024 == 0:
            yield f"{int(token) // 1024}k"


def tokenize(text: str) -> list[str]:
    """BM25 tokens: identifiers whole and split, 128K both ways, Chinese as jieba words and bigrams."""
    norm = normalize(text)
    norm = _WAN_RE.sub(lambda m: f" {int(float(m.group(1)) * 10000)} ", norm)
    tokens: list[str] = [t for t in _ascii_tokens(norm) if t not in EN_STOPWORDS]
    runs = _CJK_RUN_RE.findall(norm)
    if runs:
        jieba = _jieba()
        for run in runs:
            tokens.extend(w for w in jieba.lcut_for_search(run) if w.strip() and w not in ZH_STOPWORDS)
            # Character bigrams (as Lucene's CJK analyzer) match phrasings jieba segments differently.
            tokens.extend(b for i in range(len(run) - 1) if (b := run[i : i + 2]) not in ZH_STOPWORDS)
    return tokens


def glossary_matches(text: str) -> list[GlossaryTerm]:
    norm = normalize(text)
    return [term for term in load_glossary() if normalize(term.zh) in norm]


def with_zh_synonyms(text: str) -> str:
    """The question plus the guide's own wording of every glossary term it says differently ("旧的配方名"
    adds "旧名字"), so Chinese BM25 matches the section that uses the other word."""
    norm = normalize(text)
    extra = [
        term.zh
        for term in load_glossary()
        if normalize(term.zh) not in norm and any(normalize(v) in norm for v in term.zh_variants)
    ]
    return text if not extra else f"{text} {' '.join(extra)}"


def expand_query(text: str) -> str:
    """The question plus the English terms of every glossary entry it contains (for dense search)."""
    extra = [en for term in glossary_matches(text) for en in term.en]
    return text if not extra else f"{text} ({'; '.join(extra)})"
