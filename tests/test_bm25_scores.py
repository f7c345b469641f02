"""The postings-based BM25 gives rank_bm25's Okapi scores bit for bit, so rankings cannot move."""

from __future__ import annotations

import json

import numpy as np
from rank_bm25 import BM25Okapi

from assistant.lexical import tokenize
from assistant.retrieval import Bm25Scores
from assistant.settings import get_settings
from evals.run import DEFAULT_RETRIEVAL_SET
from ingest.build import bundled_chunks


def test_scores_equal_rank_bm25_on_the_guide_and_the_golden_queries():
    guide = [c for c in bundled_chunks(get_settings().knowledge_base) if c.doc_type == "guide"]
    corpus = [tokenize(c.text) or ["\u2205"] for c in guide]
    queries = [
        json.loads(line)["query"] for line in DEFAULT_RETRIEVAL_SET.read_text(encoding="utf-8").splitlines()
    ]
    queries += ["tensor_model_parallel_size tensor_model_parallel_size", "no-such-term-anywhere"]
    reference, fast = BM25Okapi(corpus), Bm25Scores(corpus)
    differing = [
        q
        for q in queries
        if not np.array_equal(reference.get_scores(tokenize(q)), fast.get_scores(tokenize(q)))
    ]
    assert len(queries) > 100 and not differing
