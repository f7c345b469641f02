"""`python -m ingest.embed_cache`: (re)write the bundled embedding cache, sentence-transformers vectors of
every bundled passage shipped with the knowledge base, so that ingest from empty does not spend ~100 CPU s
embedding text whose vectors are known (read by ingest/cached_vectors.py).

The rebuild is incremental: rows of unchanged texts made from the same model are kept, new texts embedded,
stale ones dropped. Both files are written atomically.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.embedding import INGEST_THREADS, SentenceTransformerEncoder
from assistant.settings import get_settings
from ingest.atomic import write_atomic
from ingest.build import bundled_chunks
from ingest.cached_vectors import (
    CACHE_DIR,
    FORMAT,
    INDEX_FILE,
    VECTORS_FILE,
    EmbeddingCache,
    model_hashes,
    read_cache,
    text_key,
)


def bundled_texts(knowledge_base: Path) -> list[str]:
    """The texts ingest embeds for the bundled knowledge base, each once, in ingest's order."""
    unique = {c.chunk_id: c for c in bundled_chunks(knowledge_base)}
    return list(dict.fromkeys(c.text for c in unique.values()))


def _model_id(model_path: Path) -> str:
    """The model's name for people: its package's folder when the directory is a package's `model/`."""
    return model_path.parent.name if model_path.name == "model" else model_path.name


@dataclass(frozen=True)
class BuildReport:
    reused: int
    embedded: int
    dropped: int
    total: int


def build_cache(knowledge_base: Path, model_path: str) -> BuildReport:
    """Write the cache for the bundled texts with sentence-transformers (the model's producer), reusing
    the rows of unchanged texts made from the same model."""
    cache_dir = knowledge_base / CACHE_DIR
    texts = bundled_texts(knowledge_base)
    hashes = model_hashes(model_path)
    old: EmbeddingCache | None = None
    try:
        index, vectors = read_cache(cache_dir)
        if index.get("model_files") == hashes:
            old = EmbeddingCache(index["rows"], vectors)
    except (OSError, ValueError):
        pass  # no cache yet, or a damaged one: rebuilt whole
    keys = [text_key(t) for t in texts]
    misses = [i for i, k in enumerate(keys) if old is None or k not in old.rows]
    import sentence_transformers  # its version only; torch is paid once the vectors are needed anyway

    live = None
    if misses:
        live = SentenceTransformerEncoder(model_path, INGEST_THREADS).embed([texts[i] for i in misses])
    dim = live.shape[1] if live is not None else old.vectors.shape[1]
    vectors = np.zeros((len(texts), dim), dtype=np.float32)
    missed = set(misses)
    for i, key in enumerate(keys):
        if i not in missed:
            vectors[i] = old.vectors[old.rows[key]]
    if live is not None:
        vectors[misses] = live
    buffer = io.BytesIO()
    np.save(buffer, vectors, allow_pickle=False)
    payload = buffer.getvalue()
    index = {
        "format": FORMAT,
        "model": _model_id(Path(model_path)),
        "model_files": hashes,
        "producer": {"sentence-transformers": sentence_transformers.__version__},
        "dim": dim,
        "vectors_sha256": hashlib.sha256(payload).hexdigest(),
        "rows": {key: i for i, key in enumerate(keys)},
    }
    write_atomic(cache_dir / VECTORS_FILE, payload)
    write_atomic(cache_dir / INDEX_FILE, json.dumps(index, indent=0, sort_keys=False) + "\n")
    reused = len(texts) - len(misses)
    return BuildReport(reused, len(misses), (len(old.rows) if old else 0) - reused, len(texts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--knowledge-base", type=Path, default=None, help="default: the bundled one")
    args = parser.parse_args(argv)
    settings = get_settings()
    kb = args.knowledge_base or settings.knowledge_base
    report = build_cache(kb, settings.resolved_embedding_model_path())
    print(
        f"embedding cache {kb / CACHE_DIR}: {report.total} texts, {report.reused} reused, "
        f"{report.embedded} embedded, {report.dropped} dropped"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
