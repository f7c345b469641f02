"""Known causes and later fixes that upstream documents, matched by what the question says.

A question that describes a symptom of a documented cause ("DeepEP and HybridEP fail at model construction,
only alltoall runs", "checkpoint saves take 8 minutes", "NVFP4 runs out of memory") is answered by that
cause, in one or two sentences of the table `knowledge_base/known_causes.json`, with its upstream source
and the release it holds for. Retrieval is not asked: the passages nearest a symptom's words are often
about the feature in general, never about why it failed. A row applies when every pattern of one of its
`when` groups is in the question; no row, no line. Pure apart from `load_causes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assistant.kb import KnowledgeBase
from assistant.messages import words

MAX_CAUSES = 2


@dataclass(frozen=True)
class CauseFact:
    en: str
    zh: str
    sources: tuple[str, ...]
    versions: frozenset[str] | None  # None: every bundled release
    kind: str | None = None  # the row's kind for this release, when it differs ("fixed later" -> "has")

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class KnownCause:
    id: str
    kind: str  # cause | fixed_later | capability: the heading of the line
    topic: str
    when: tuple[tuple[re.Pattern[str], ...], ...]
    facts: tuple[CauseFact, ...]

    def applies(self, text: str) -> bool:
        return any(all(p.search(text) for p in group) for group in self.when)

    def fact(self, version: str) -> CauseFact | None:
        return next((f for f in self.facts if f.versions is None or version in f.versions), None)


@lru_cache(maxsize=4)
def load_causes(kb: KnowledgeBase) -> tuple[KnownCause, ...]:
    """The known-cause rows of a knowledge base; one without the file (a user's own documents) has none."""
    data = kb.json("known_causes.json", required=False)
    if data is None:
        return ()
    return tuple(
        KnownCause(
            id=row["id"],
            kind=row["kind"],
            topic=row["topic"],
            when=tuple(tuple(re.compile(p, re.IGNORECASE) for p in group) for group in row["when"]),
            facts=tuple(
                CauseFact(
                    en=f["en"],
                    zh=f["zh"],
                    sources=tuple(f["sources"]),
                    versions=frozenset(f["versions"]) if "versions" in f else None,
                    kind=f.get("kind"),
                )
                for f in row["facts"]
            ),
        )
        for row in data["causes"]
    )


def matching(text: str, version: str, causes: tuple[KnownCause, ...]) -> list[tuple[KnownCause, CauseFact]]:
    """The rows whose symptom and feature the question names, with their release's fact (table order)."""
    found = [(c, f) for c in causes if c.applies(text) and (f := c.fact(version)) is not None]
    return found[:MAX_CAUSES]


def known_cause_lines(text: str, version: str, lang: str, causes: tuple[KnownCause, ...]) -> str:
    """The answer's own lines for the known causes the question describes; "" when none applies."""
    blocks = []
    for cause, fact in matching(text, version, causes):
        body = fact.text(lang)
        head = words(lang, f"known_causes.kind.{fact.kind or cause.kind}", version=version)
        stop = words(lang, "sep.end")
        sources = words(lang, "sep.clause").join(f"`{s}`" for s in fact.sources)
        source_line = words(lang, "known_causes.sources", sources=sources)
        if lang != "zh":  # Chinese has no capitals; a Latin word that opens a Chinese fact stays as written
            body = body[:1].upper() + body[1:]
        blocks.append(f"{head}{body}{stop}\n\n{source_line}")
    return "\n\n".join(blocks)
