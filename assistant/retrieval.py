"""Hybrid retrieval: dense (MiniLM, exact cosine over the index's vectors) + BM25 (jieba-aware tokens),
fused by weighted reciprocal rank.

English questions weigh BM25 1.0 and dense 0.5. Chinese questions are weak in the English-only dense
space, so BM25 over their own tokens dominates, and the zh->en glossary expansion (BM25 0.2, dense 0.1)
adds English evidence; the weights were chosen on evals/golden/retrieval.jsonl (see the README).
`abstain` is set when neither side found anything relevant.
Fusion is hand-written rather than LangChain's EnsembleRetriever: that has no hook for the release bonus,
per-section dedup or abstention, and importing langchain_classic costs the cold `ask` seconds. LangChain
chains reach this retriever through `assistant/langchain_retriever.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from assistant.bounds import valid_text
from assistant.catalog import available_versions
from assistant.embedding import query_encoder
from assistant.errors import UserError
from assistant.lexical import (
    MAX_QUERY_CHARS,
    expand_query,
    is_chinese,
    named_releases,
    tokenize,
    with_zh_synonyms,
)
from assistant.records import Hit, SearchResult
from assistant.settings import Settings, get_settings
from assistant.vectorstore import read_current_rows, version_flag

RRF_K = 60
RELEASE_BONUS = 0.25  # in RRF units of a first rank: a passage marked for the release the question names
CANDIDATES = 30
# Cosine similarity under which a dense hit is noise for MiniLM on this corpus.
MIN_DENSE_SCORE = 0.30
MIN_BM25_SCORE = 1.0


class Bm25Scores:
    """rank_bm25's Okapi scores (its idf, k1, b), computed from postings instead of a Python pass over every
    document per query term: the same arithmetic on the documents that hold the term, so the same floats
    (a term's other documents add exactly 0), at well under a millisecond instead of about 80 ms a query."""

    def __init__(self, corpus: list[list[str]]):
        self._okapi = BM25Okapi(corpus)
        okapi = self._okapi
        doc_len = np.array(okapi.doc_len)
        self._norm = okapi.k1 * (1 - okapi.b + okapi.b * doc_len / okapi.avgdl)  # rank_bm25's expression
        rows: dict[str, list[int]] = {}
        counts: dict[str, list[int]] = {}
        for i, frequencies in enumerate(okapi.doc_freqs):
            for term, count in frequencies.items():
                rows.setdefault(term, []).append(i)
                counts.setdefault(term, []).append(count)
        self._postings = {
            term: (np.array(rows[term], dtype=np.int64), np.array(counts[term], dtype=np.int64))
            for term in rows
        }

    def get_scores(self, query: list[str]) -> np.ndarray:
        okapi = self._okapi
        score = np.zeros(okapi.corpus_size)
        for term in query:
            if term not in self._postings:
                continue
            rows, freq = self._postings[term]
            score[rows] += (okapi.idf.get(term) or 0) * (freq * (okapi.k1 + 1) / (freq + self._norm[rows]))
        return score


@dataclass(frozen=True)
class Filters:
    lang: str | None = None
    version: str | None = None
    doc_type: str | None = None

    def chroma_where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.lang:
            clauses.append({"lang": self.lang})
        if self.version:
            clauses.append({"$or": [{"version": "all"}, {version_flag(self.version): True}]})
        if self.doc_type:
            clauses.append({"doc_type": self.doc_type})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def accepts(self, meta: dict[str, Any]) -> bool:
        return (
            (not self.lang or meta.get("lang") == self.lang)
            and (
                not self.version or meta.get("version") == "all" or bool(meta.get(version_flag(self.version)))
            )
            and (not self.doc_type or meta.get("doc_type") == self.doc_type)
        )


def _marked_for(passage_versions: str, version: str, releases: int) -> bool:
    """True for a passage written for some of the `releases` only, this one among them (a "(v0.3.1)"
    section)."""
    versions = passage_versions.split(",")
    return passage_versions != "all" and version in versions and len(versions) < releases


def _clean_query(query: str) -> str:
    text = " ".join(valid_text(query)[0].split())
    if not text:
        raise UserError("the query is empty; ask about a model, a recipe, a config key or an error message")
    return text[:MAX_QUERY_CHARS]


class HybridRetriever:
    """Holds one index generation in memory: its passages, their vectors and BM25."""

    def __init__(self, settings: Settings):
        rows, manifest = read_current_rows(settings)
        self.generation = manifest.get("generation")
        self._encoder = query_encoder(
            settings.resolved_embedding_model_path(), settings.resolved_embedding_export_dir()
        )
        self._ids: list[str] = rows.ids
        self._meta: list[dict[str, Any]] = rows.metadatas
        self._docs: list[str] = rows.documents
        self._vectors = rows.vectors
        self._position = {cid: i for i, cid in enumerate(self._ids)}
        self._bm25 = Bm25Scores([(m.get("bm25") or "").split() or ["\u2205"] for m in self._meta])
        # A long-running front end hears the same questions again: their vectors are a pure function of
        # the text for this model, so each is computed once.
        self._query_vector = lru_cache(maxsize=1024)(lambda text: self._encoder.embed([text])[0])
        self._accepted: dict[Filters, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def _accepted_rows(self, filters: Filters) -> np.ndarray:
        if filters not in self._accepted:
            self._accepted[filters] = np.array(
                [i for i, meta in enumerate(self._meta) if filters.accepts(meta)], dtype=np.int64
            )
        return self._accepted[filters]

    def _dense_ranked(self, text: str, filters: Filters) -> list[tuple[str, float]]:
        # Exact cosine over every accepted passage (unit vectors): the ranking Chroma's HNSW
        # approximates, at a fraction of a millisecond for a few thousand rows.
        rows = self._accepted_rows(filters)
        if not len(rows):
            return []
        scores = self._vectors[rows] @ self._query_vector(text)
        best = np.argsort(-scores, kind="stable")[:CANDIDATES]
        return [(self._ids[rows[i]], float(scores[i])) for i in best]

    def _bm25_ranked(self, tokens: list[str], filters: Filters) -> list[tuple[str, float]]:
        if not tokens:
            return []
        scores = self._bm25.get_scores(tokens)
        ranked = []
        # Highest first, ties in document order: what a stable reverse sort of the indices gives.
        for i in np.argsort(-scores, kind="stable").tolist():
            if scores[i] <= 0 or len(ranked) >= CANDIDATES:
                break
            if filters.accepts(self._meta[i]):
                ranked.append((self._ids[i], float(scores[i])))
        return ranked

    def search(
        self,
        query: str,
        k: int = 5,
        lang: str | None = None,
        version: str | None = None,
        doc_type: str | None = None,
    ) -> SearchResult:
        text = _clean_query(query)
        if k < 1:
            raise UserError("k must be at least 1")
        filters = Filters(lang=lang, version=version, doc_type=doc_type)
        expanded = expand_query(text)
        dense = self._dense_ranked(expanded, filters)
        lexical = self._bm25_ranked(tokenize(with_zh_synonyms(text) if is_chinese(text) else text), filters)
        if is_chinese(text):
            # MiniLM is English-only: BM25 over the question's own jieba words and bigrams carries
            # Chinese; the glossary expansion (BM25 and dense) adds English evidence at low weight.
            runs = [(lexical, 1.0), (self._bm25_ranked(tokenize(expanded), filters), 0.2), (dense, 0.1)]
        else:
            runs = [(lexical, 1.0), (dense, 0.5)]
        fused: dict[str, float] = {}
        for ranking, weight in runs:
            for rank, (chunk_id, _) in enumerate(ranking):
                fused[chunk_id] = fused.get(chunk_id, 0.0) + weight / (RRF_K + rank + 1)
        if version and version in named_releases(text):
            # A question that names its release wants the passages written for that release first.
            releases = len(available_versions())
            for chunk_id in fused:
                if _marked_for(self._meta[self._position[chunk_id]].get("version", "all"), version, releases):
                    fused[chunk_id] += RELEASE_BONUS / (RRF_K + 1)
        best_dense = max((score for _, score in dense), default=0.0)
        best_bm25 = max((score for _, score in lexical), default=0.0)
        abstain = best_dense < MIN_DENSE_SCORE and best_bm25 < MIN_BM25_SCORE
        hits = []
        seen: set[str] = set()
        for chunk_id, score in sorted(fused.items(), key=lambda kv: kv[1], reverse=True):
            i = self._position[chunk_id]
            meta = self._meta[i]
            # A table and its rows are one section: cite it once, at its best rank.
            if meta["source"] in seen:
                continue
            seen.add(meta["source"])
            hits.append(
                Hit(
                    chunk_id=chunk_id,
                    source=meta["source"],
                    heading=meta["heading"],
                    doc_type=meta["doc_type"],
                    lang=meta["lang"],
                    version=meta.get("version", "all"),
                    section=meta.get("section", ""),
                    part=meta.get("part", "section"),
                    text=self._docs[i],
                    score=round(score, 6),
                )
            )
            if len(hits) == k:
                break
        return SearchResult(query=text, hits=[] if abstain else hits, abstain=abstain)


@lru_cache(maxsize=4)
def _cached(settings: Settings, generation: str | None) -> HybridRetriever:
    return HybridRetriever(settings)


def make_retriever(settings: Settings | None = None) -> HybridRetriever:
    """The one way to get a retriever: it follows the current generation in both modes (one pointer read
    per call; a server's pointer is one small HTTP request) and reopens only when ingest has switched.

    A reader that read the pointer just before an ingest switched it may find its generation pruned
    (ingest keeps the current and the previous one): it reads the pointer again, once, and opens the new
    one. Anything else that makes the index unreadable raises IndexUnavailable.
    """
    # lazy: chromadb loads when an index is opened, not when this module is imported
    from assistant.vectorstore import IndexUnavailable, current_generation

    settings = settings or get_settings()
    try:
        return _cached(settings, current_generation(settings))
    except IndexUnavailable:
        return _cached(settings, current_generation(settings))
