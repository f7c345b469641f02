"""The light query path (ONNX export + numpy over the index's vectors) against sentence-transformers + Chroma,
and what each command imports, measured in a fresh process.

The light ranking is exact cosine; it must equal the ranking with sentence-transformers' query vector on
the same index, and Chroma's wherever Chroma searches exactly (filtered to the guide, as the eval does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assistant.embedding import (
    MANIFEST_FILE,
    SentenceTransformerEncoder,
    export_onnx,
    query_encoder,
    usable_export,
)
from assistant.lexical import expand_query
from assistant.retrieval import Filters, HybridRetriever
from assistant.settings import Settings
from assistant.vectorstore import open_current

pytestmark = pytest.mark.slow  # the embedding model, ONNX and sentence-transformers

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "evals" / "golden"


def golden_queries() -> list[tuple[str, Filters]]:
    """Every golden query with the filters the eval searches it with (guide passages of its language)."""
    queries = []
    for line in (GOLDEN / "retrieval.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            filters = Filters(lang=row.get("lang"), version=row.get("version"), doc_type="guide")
            queries.append((row["query"], filters))
    for line in (GOLDEN / "qa.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            filters = Filters(lang=row.get("lang"), version=row.get("version"), doc_type="guide")
            queries.append((row["question"], filters))
    return queries


@pytest.fixture(scope="module")
def reference_encoder(index_settings):
    return SentenceTransformerEncoder(index_settings.resolved_embedding_model_path(), threads=1)


def test_onnx_query_vectors_and_dense_top10_match_sentence_transformers(index_settings, reference_encoder):
    retriever = HybridRetriever(index_settings)
    assert retriever._encoder.runtime == "onnx"
    client, name, _ = open_current(index_settings)
    collection = client.get_collection(name)
    queries = golden_queries()
    assert len(queries) > 250  # every retrieval row and every Q&A question
    texts = [expand_query(" ".join(q.split())) for q, _ in queries]
    light = retriever._encoder.embed(texts)
    reference = reference_encoder.embed(texts)
    cosines = (light * reference).sum(axis=1)
    assert cosines.min() >= 0.999, texts[int(cosines.argmin())]
    vectors = retriever._vectors
    mismatched = []
    for (query, filters), text, vector in zip(queries, texts, reference, strict=True):
        for flt in (filters, Filters()):
            ours = retriever._dense_ranked(text, flt)[:10]
            rows = retriever._accepted_rows(flt)
            scores = vectors[rows] @ vector
            with_reference = [retriever._ids[rows[i]] for i in np.argsort(-scores, kind="stable")[:10]]
            if [cid for cid, _ in ours] != with_reference:
                mismatched.append((query, flt, "sentence-transformers"))
            found = collection.query(
                query_embeddings=[vector.tolist()],
                n_results=10,
                where=flt.chroma_where(),
                include=["distances"],
            )
            # Chroma's HNSW is approximate, and its graph depends on insertion order (unfiltered it misses a
            # passage on about one query in six; filtered, now and then): the exact ranking is never worse.
            if ours and ours[-1][1] < 1.0 - found["distances"][0][-1] - 1e-5:
                mismatched.append((query, flt, "worse than chroma"))
    assert not mismatched, mismatched[:5]


def test_missing_export_falls_back_to_sentence_transformers_with_a_notice(index_settings, tmp_path, capsys):
    settings = Settings(data_dir=index_settings.data_dir, embedding_export_dir=tmp_path / "none")
    query_encoder.cache_clear()
    fallback = HybridRetriever(settings)
    assert fallback._encoder.runtime == "sentence-transformers"
    assert "no ONNX export" in capsys.readouterr().err
    light = HybridRetriever(index_settings)
    question = "tensor_model_parallel_size must divide num_query_groups"
    assert [h.chunk_id for h in fallback.search(question, k=5).hits] == [
        h.chunk_id for h in light.search(question, k=5).hits
    ]


def test_export_is_reproducible(index_settings, tmp_path):
    # The shared export was made by ingest's child process (start_export); this one is made in process.
    model_path = index_settings.resolved_embedding_model_path()
    shared = usable_export(index_settings.resolved_embedding_export_dir(), model_path)
    assert shared is not None
    again = export_onnx(model_path, tmp_path)
    first = json.loads((shared / MANIFEST_FILE).read_text(encoding="utf-8"))
    second = json.loads((again / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert first["sha256"] == second["sha256"]
    assert np.array_equal(
        np.frombuffer((shared / "model.onnx").read_bytes(), dtype=np.uint8),
        np.frombuffer((again / "model.onnx").read_bytes(), dtype=np.uint8),
    )


def imported_modules(args: list[str], settings: Settings) -> set[str]:
    """Top-level packages a fresh `python -m ui.cli ARGS` imports (from -X importtime)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AUTORECIPE_DATA_DIR": str(settings.data_dir),
        "AUTORECIPE_EMBEDDING_EXPORT_DIR": str(settings.resolved_embedding_export_dir()),
    }
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ui.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [
        line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    ]
    return {name.split(".")[0] for name in lines}


HEAVY = {
    "torch",
    "sentence_transformers",
    "transformers",
    "chromadb",
    "langchain_chroma",
    "langchain_huggingface",
    "langchain_core",
    "hydra",
}


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--json"],
        ["check", "--recipe", "llama3_8b_pretrain_config", "--gpus", "8", "--json"],
    ],
)
def test_plan_and_check_import_no_torch(args, index_settings):
    assert not imported_modules(args, index_settings) & HEAVY


def test_ask_with_the_onnx_export_imports_no_torch_nor_sentence_transformers(index_settings):
    modules = imported_modules(["ask", "Qwen3 30B-A3B SFT on 16 H100", "--json"], index_settings)
    assert "onnxruntime" in modules
    assert not modules & HEAVY
