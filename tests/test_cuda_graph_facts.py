"""CUDA graph sentences in the sourced tables name the full-iteration setting the release really has.

Megatron-Core pinned by 0.3.1 has no `cuda_graph_impl="full_iteration"` (transformer_config.py:790 at 55ac708:
`local` plus the `full_iteration` scope); 0.5.1 and later have it (assistant/rules/versions.py traits).
"""

from __future__ import annotations

import json

from assistant.rules.versions import traits
from assistant.settings import KNOWLEDGE_BASE

ALL = ["0.3.1", "0.5.1", "0.6.0", "main"]
IMPL = "cuda_graph_impl=full_iteration"
SCOPE = "cuda_graph_scope=[full_iteration]"


def _section_facts() -> list[tuple[str, dict]]:
    raw = json.loads((KNOWLEDGE_BASE / "section_facts.json").read_text(encoding="utf-8"))
    return [(anchor, fact) for anchor, facts in raw["sections"].items() for fact in facts]


def test_full_iteration_impl_is_only_named_for_releases_that_have_it() -> None:
    wrong = []
    for anchor, fact in _section_facts():
        for version in fact.get("versions", ALL):
            has_impl = traits(version).full_iteration_impl
            for lang in ("en", "zh"):
                if IMPL in fact[lang] and not has_impl:
                    wrong.append(f"{anchor} {version} {lang}: names {IMPL}")
                if SCOPE in fact[lang] and has_impl:
                    wrong.append(f"{anchor} {version} {lang}: names the old {SCOPE}")
    assert wrong == []


def test_every_release_has_a_full_iteration_sentence_under_the_implementation_section() -> None:
    facts = [f for a, f in _section_facts() if a == "cuda-graphs.md#cuda-graph-impl"]
    for version in ALL:
        held = [f["en"] for f in facts if version in f.get("versions", ALL)]
        expected = IMPL if traits(version).full_iteration_impl else SCOPE
        assert any(expected in text for text in held), version
