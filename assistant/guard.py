"""The guard on LLM phrasing: any recipe name, flag, config assignment or number that the computed answer
does not contain is an invention, and the deterministic answer is used instead."""

from __future__ import annotations

import re

_FACT_PATTERNS = (
    re.compile(r"\b\w+_config\b"),  # recipe function names
    re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*"),  # command-line flags
    re.compile(r"\b[A-Za-z_]\w*(?:\.\w+)+\s*=\s*[^\s'`|,;]+"),  # key=value overrides
    re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s?[kKMGT]i?B?\b)?"),  # numbers and sizes
)
_LIST_MARKER = re.compile(r"^\s*(?:\d+[.)]|\[\d+\])\s", re.MULTILINE)
_CITATION = re.compile(r"\[\d+\]")


def facts(text: str) -> set[str]:
    """The checkable identifiers and numbers of a text, normalised for comparison."""
    text = _CITATION.sub(" ", _LIST_MARKER.sub(" ", text))
    found: set[str] = set()
    for pattern in _FACT_PATTERNS:
        found.update(re.sub(r"\s+", "", match.group(0)).lower() for match in pattern.finditer(text))
    return found


def invented(candidate: str, reference: str) -> list[str]:
    """Facts in `candidate` that `reference` (the computed answer) does not state, sorted."""
    allowed = facts(reference)
    return sorted(fact for fact in facts(candidate) if fact not in allowed)
