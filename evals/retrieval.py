"""Retrieval evaluation: recall@k and MRR of expected guide sections, per language."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from assistant.records import Hit

RETRIEVAL_SET = Path(__file__).parent / "golden" / "retrieval.jsonl"


@dataclass
class RetrievalSummary:
    k: int
    recall: dict[str, float]
    mrr: dict[str, float]
    count: dict[str, int]
    misses: list[dict] = field(default_factory=list)


def section_key(source: str) -> str:
    """'guide/zh/pitfalls.md#cuda-graph-packed-seq' -> 'pitfalls.md#cuda-graph-packed-seq' (language-free)."""
    for prefix in ("guide/en/", "guide/zh/"):
        if source.startswith(prefix):
            return source[len(prefix) :]
    return source


def first_relevant_rank(hits: list[Hit], expected: list[str]) -> int | None:
    wanted = set(expected)
    return next((rank for rank, hit in enumerate(hits, 1) if section_key(hit.source) in wanted), None)


def load_rows(path: Path = RETRIEVAL_SET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate_retrieval(search, rows: list[dict], k: int = 5) -> RetrievalSummary:
    """`search(query, k)` returns hits; a row counts as recalled when any expected section is in the top k."""
    found: dict[str, list[int]] = defaultdict(list)
    reciprocal: dict[str, list[float]] = defaultdict(list)
    misses = []
    for row in rows:
        hits = search(row["query"], k)
        rank = first_relevant_rank(hits, row["expected"])
        for group in (row["lang"], "all"):
            found[group].append(1 if rank else 0)
            reciprocal[group].append(1.0 / rank if rank else 0.0)
        if not rank:
            misses.append(
                {
                    "id": row["id"],
                    "query": row["query"],
                    "expected": row["expected"],
                    "got": [section_key(h.source) for h in hits],
                }
            )
    return RetrievalSummary(
        k=k,
        recall={g: sum(v) / len(v) for g, v in found.items()},
        mrr={g: sum(v) / len(v) for g, v in reciprocal.items()},
        count={g: len(v) for g, v in found.items()},
        misses=misses,
    )
