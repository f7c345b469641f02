"""Which cited passage backs which sentence of an answer, for inline `[n]` markers.

Retrieval returns passages near the question's words; the page shows only those that share distinctive
terms (identifiers, flags, uncommon words, Chinese word pairs) with a sentence the answer actually says,
ranked by that overlap, each marked once at the sentence it backs best. Pure: text and citations in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.records import Citation

# Words every answer and every guide passage uses: sharing them says nothing about support.
_COMMON_WORDS = """a an and are as at be by can do does for from has have how if in into is it its of on
    one or per so
    than that the their them then there these this to use used uses when which with you your not no only
    more most also each other same first after before all any out up will would should must may been was
    were what where why our they recipe recipes model models gpu gpus training train run runs megatron
    bridge megatron-bridge launch launches dataset version versions default defaults setting settings value
    values change changes size sizes number about like here needs need set sets keep make see yes
    h100 bf16 config configs"""
COMMON = frozenset(_COMMON_WORDS.split())
MIN_SUPPORT = 3.0  # shared weight a sentence needs: one identifier, or three uncommon words
_WORD_RE = re.compile(r"--?[a-z][a-z0-9_\-]*|[a-z_][a-z0-9_.]*[a-z0-9_]|[\u4e00-\u9fff]+", re.I)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z`*_(])|(?<=[。！？；])")


@dataclass(frozen=True)
class Backed:
    """A citation kept for the page: its new number, the passage, and the sentence it backs."""

    n: int
    citation: Citation
    line: int  # index of the answer line that holds the sentence
    score: float


def terms(text: str) -> dict[str, float]:
    """Distinctive terms with weights: identifiers and flags 3, other uncommon words 1, Chinese pairs 1."""
    found: dict[str, float] = {}
    for raw in _WORD_RE.findall(text):
        if "\u4e00" <= raw[0] <= "\u9fff":
            for i in range(len(raw) - 1):
                found[raw[i : i + 2]] = 1.0
            continue
        word = raw.lower().strip(".")
        if word in COMMON or len(word) < 3:
            continue
        identifier = "_" in word or word.startswith("-") or ("." in word and not word.endswith("."))
        found[word] = max(found.get(word, 0.0), 3.0 if identifier else 1.0)
    return found


def sentences(line: str) -> list[str]:
    return [part for part in _SENTENCE_END_RE.split(line) if part.strip()]


def _support(sentence: dict[str, float], passage: dict[str, float]) -> float:
    return sum(weight for term, weight in sentence.items() if term in passage)


def backed_citations(lines: list[str], citations: list[Citation]) -> list[Backed]:
    """The citations that back a sentence of `lines` (code blocks excluded), best backed first."""
    candidates: list[tuple[int, dict[str, float]]] = []
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        candidates += [(i, terms(sentence)) for sentence in sentences(line)]
    scored = []
    for order, citation in enumerate(citations):
        passage = terms(f"{citation.heading}\n{citation.text}")
        best_line, best = -1, 0.0
        for i, sentence in candidates:
            score = _support(sentence, passage)
            if score > best:
                best_line, best = i, score
        if best >= MIN_SUPPORT:
            scored.append((-best, order, best_line, citation))
    scored.sort(key=lambda item: item[:2])
    return [
        Backed(n=n, citation=citation, line=line, score=-neg)
        for n, (neg, _order, line, citation) in enumerate(scored, 1)
    ]
