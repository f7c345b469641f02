"""The bundled embedding cache: complete, equal to the live model, never used when wrong, rebuilt
incrementally."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from assistant.embedding import ingest_encoder
from assistant.settings import KNOWLEDGE_BASE, Settings
from assistant.vectorstore import read_current_rows
from ingest import cached_vectors, embed_cache
from ingest.build import ingest

pytestmark = pytest.mark.slow  # the real embedding model

REGENERATE = "regenerate it with `python -m ingest.embed_cache` and commit knowledge_base/embeddings/"

PAGE = """---
topic: {topic}
doc_type: guide
versions: all
---
# {title}

## Sizing {{#sizing}}

{topic} explains how tensor parallel and pipeline parallel sizes are chosen.

## Pitfalls {{#pitfalls}}

{topic} lists what goes wrong when the sequence length is not divisible.
"""


def _model_path() -> str:
    return Settings().resolved_embedding_model_path()


def _live_encoder(tmp_path: Path):
    return ingest_encoder(_model_path(), Settings(data_dir=tmp_path).resolved_embedding_export_dir())


def _kb(root: Path, topics: list[str]) -> Path:
    (root / "guide" / "en").mkdir(parents=True, exist_ok=True)
    (root / "catalogs").mkdir(exist_ok=True)
    for old in (root / "guide" / "en").glob("*.md"):
        old.unlink()
    for topic in topics:
        page = PAGE.format(topic=topic, title=topic.title())
        (root / "guide" / "en" / f"{topic}.md").write_text(page, encoding="utf-8")
    return root


def test_bundled_cache_covers_every_bundled_chunk():
    cache = cached_vectors.load_cache(KNOWLEDGE_BASE, _model_path())
    assert cache is not None, f"no usable bundled embedding cache; {REGENERATE}"
    texts = embed_cache.bundled_texts(KNOWLEDGE_BASE)
    missing = [t for t in texts if cache.lookup(t) is None]
    assert not missing, f"{len(missing)} of {len(texts)} bundled passages are not cached; {REGENERATE}"
    assert len(cache.rows) == len(texts), f"the cache has stale rows; {REGENERATE}"


def test_cached_vectors_equal_live_embeddings(tmp_path):
    cache = cached_vectors.load_cache(KNOWLEDGE_BASE, _model_path())
    assert cache is not None, REGENERATE
    texts = embed_cache.bundled_texts(KNOWLEDGE_BASE)
    sample = texts[:: max(1, len(texts) // 12)][:12]
    live = _live_encoder(tmp_path).embed(sample)
    cosines = np.sum(live * np.stack([cache.lookup(t) for t in sample]), axis=1)
    assert cosines.min() >= cached_vectors.MIN_COSINE, cosines.min()


def _rewrite_vectors(kb: Path, vectors: np.ndarray, *, fix_sha: bool) -> None:
    buffer = io.BytesIO()
    np.save(buffer, vectors.astype(np.float32), allow_pickle=False)
    (kb / "embeddings" / cached_vectors.VECTORS_FILE).write_bytes(buffer.getvalue())
    if fix_sha:  # a consistent but wrong cache: only the live check can catch it
        index_file = kb / "embeddings" / cached_vectors.INDEX_FILE
        index = json.loads(index_file.read_text(encoding="utf-8"))
        index["vectors_sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
        index_file.write_text(json.dumps(index), encoding="utf-8")


@pytest.mark.parametrize("fix_sha", [True, False], ids=["wrong-vectors", "damaged-file"])
def test_corrupted_cache_is_ignored_and_ingest_is_correct(tmp_path, capsys, fix_sha):
    kb = _kb(tmp_path / "kb", ["alpha", "beta", "gamma"])
    embed_cache.build_cache(kb, _model_path())
    good = cached_vectors.load_cache(kb, _model_path())
    assert good is not None
    wrong = np.roll(good.vectors, 1, axis=0)  # every row is another passage's vector
    _rewrite_vectors(kb, wrong, fix_sha=fix_sha)
    capsys.readouterr()

    settings = Settings(data_dir=tmp_path / "data", knowledge_base=kb)
    ingest(settings, [])
    assert "embedding cache" in capsys.readouterr().err
    rows, _ = read_current_rows(settings)
    live = _live_encoder(tmp_path / "data").embed(rows.documents)
    assert np.sum(rows.vectors * live, axis=1).min() >= cached_vectors.MIN_COSINE


def test_ingest_takes_cached_rows(tmp_path, monkeypatch):
    kb = _kb(tmp_path / "kb", ["alpha", "beta"])
    embed_cache.build_cache(kb, _model_path())
    cache = cached_vectors.load_cache(kb, _model_path())
    embedded: list[str] = []
    encoder = _live_encoder(tmp_path)
    original = type(encoder).embed

    def counting(self, texts):
        embedded.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(type(encoder), "embed", counting)
    texts = embed_cache.bundled_texts(kb) + ["a passage the cache has never seen"]
    vectors = cached_vectors.embed_with_cache(texts, encoder, cache)
    assert len(embedded) == cached_vectors.CHECKED_ROWS + 1  # the live check and the one miss
    assert np.array_equal(vectors[0], cache.lookup(texts[0]))


def test_incremental_rebuild_reuses_rows(tmp_path):
    kb = _kb(tmp_path / "kb", ["alpha", "beta"])
    first = embed_cache.build_cache(kb, _model_path())
    assert first.reused == 0 and first.embedded == first.total > 0
    before = cached_vectors.load_cache(kb, _model_path())

    _kb(kb, ["alpha", "gamma"])
    second = embed_cache.build_cache(kb, _model_path())
    after = cached_vectors.load_cache(kb, _model_path())
    per_page = first.total // 2
    assert (second.reused, second.embedded, second.dropped) == (per_page, per_page, per_page)
    kept = [t for t in embed_cache.bundled_texts(kb) if before.lookup(t) is not None]
    assert len(kept) == per_page
    assert all(np.array_equal(before.lookup(t), after.lookup(t)) for t in kept)
