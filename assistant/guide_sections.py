"""The bundled guide split into its anchored sections, to tell whether the guide names a key at all.

Retrieval shows only the few passages nearest a question; a key the question names may live in another
section. Looking it up in every section lets an answer cite where the guide covers it instead of saying
nothing does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from assistant.kb import KnowledgeBase
from assistant.memo import per_object

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(?:\{#([A-Za-z0-9_\-]+)\})?\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_VERSIONS = re.compile(r"^versions:\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class GuideSection:
    """One anchored section of a guide page: its citation source, heading path, prose and code apart."""

    source: str  # guide/en/cuda-graphs.md#cuda-graph-scopes, as retrieval cites it
    heading: str  # CUDA graphs > Scopes: what gets captured
    lang: str
    versions: tuple[str, ...]  # () for every release
    prose: str
    code: str

    def for_version(self, version: str) -> bool:
        return not self.versions or version in self.versions

    # Lower-cased with whitespace runs as one space, made once per section: a lookup compares every
    # section with each term a question names, on the answer path.
    @cached_property
    def flat_prose(self) -> str:
        return " ".join(self.prose.lower().split())

    @cached_property
    def flat_code(self) -> str:
        return " ".join(self.code.lower().split())


def _front_versions(text: str) -> tuple[str, ...]:
    """The releases a page's front matter names; () when it says "all" or nothing."""
    head = text.split("\n---", 1)[0] if text.startswith("---") else ""
    found = _VERSIONS.search(head)
    if not found or found.group(1) == "all":
        return ()
    return tuple(v.strip() for v in found.group(1).split(",") if v.strip())


def split_page(text: str, *, source: str, lang: str) -> list[GuideSection]:
    """The anchored sections of one page (text before the first anchor has no citation of its own)."""
    versions = _front_versions(text)
    sections: list[GuideSection] = []
    path: list[str] = []
    anchor = ""
    prose: list[str] = []
    code: list[str] = []
    fenced = False

    def close() -> None:
        if anchor and (prose or code):
            heading = " > ".join(path)
            sections.append(
                GuideSection(f"{source}#{anchor}", heading, lang, versions, "\n".join(prose), "\n".join(code))
            )

    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading is None:
            (code if fenced else prose).append(line)
            continue
        close()
        level = len(heading.group(1))
        path = path[: level - 1] + [heading.group(2)]
        anchor = heading.group(3) or ""
        prose, code = [], []
    close()
    return sections


@per_object
def guide_sections(kb: KnowledgeBase) -> tuple[GuideSection, ...]:
    """Every anchored section of every bundled guide page, page by page in name order."""
    return tuple(
        section
        for lang, page in kb.guide_pages()
        for section in split_page(kb.guide_page(lang, page), source=f"guide/{lang}/{page}.md", lang=lang)
    )
