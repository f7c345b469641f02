"""Reading the bundled embedding cache (`knowledge_base/embeddings/minilm.{npy,json}`, written by
`python -m ingest.embed_cache`): rows keyed by the sha256 of the passage text, the model named by the sha256
of each of its files.

Ingest takes a cached row only when the text hash and the model's file hashes match, and re-embeds a few
cached rows live first: if they disagree the whole cache is ignored with a notice, never used silently.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.embedding import Encoder

log = logging.getLogger(__name__)

FORMAT = 1
CACHE_DIR = "embeddings"
VECTORS_FILE = "minilm.npy"
INDEX_FILE = "minilm.json"
CHECKED_ROWS = 4  # cached rows re-embedded live before the cache is trusted
MIN_COSINE = 0.999  # the agreement the runtimes are held to (docs/embedding-runtime.md)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_hashes(model_path: str) -> dict[str, str]:
    """sha256 of every file of the model directory: the model's identity, whatever its path or mtime."""
    root = Path(model_path)
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class EmbeddingCache:
    rows: dict[str, int]  # text sha256 -> row of `vectors`
    vectors: np.ndarray  # float32 [n, dim], unit rows

    def lookup(self, text: str) -> np.ndarray | None:
        row = self.rows.get(text_key(text))
        return None if row is None else self.vectors[row]


def _notice(message: str) -> None:
    log.warning(message)
    print(f"note: {message}", file=sys.stderr)


def read_cache(cache_dir: Path) -> tuple[dict, np.ndarray]:
    """The index and vectors as written, checked against each other; ValueError/OSError when they are not."""
    index = json.loads((cache_dir / INDEX_FILE).read_text(encoding="utf-8"))
    payload = (cache_dir / VECTORS_FILE).read_bytes()
    if hashlib.sha256(payload).hexdigest() != index.get("vectors_sha256"):
        raise ValueError(f"{VECTORS_FILE} does not match the sha256 recorded in {INDEX_FILE}")
    vectors = np.load(io.BytesIO(payload), allow_pickle=False)
    rows = index.get("rows")
    if index.get("format") != FORMAT or not isinstance(rows, dict):
        raise ValueError(f"{INDEX_FILE} is not format {FORMAT}")
    if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(rows):
        raise ValueError(f"{VECTORS_FILE} has shape {vectors.shape} for {len(rows)} rows")
    if rows and sorted(rows.values()) != list(range(len(rows))):
        raise ValueError(f"{INDEX_FILE} rows are not 0..{len(rows) - 1}")
    return index, vectors


def load_cache(knowledge_base: Path, model_path: str) -> EmbeddingCache | None:
    """The bundled cache when it is whole and made from this model; None (with a notice) otherwise."""
    cache_dir = knowledge_base / CACHE_DIR
    if not (cache_dir / INDEX_FILE).exists():
        return None
    try:
        index, vectors = read_cache(cache_dir)
    except (OSError, ValueError) as error:
        _notice(f"ignoring the embedding cache in {cache_dir} ({error}); embedding every passage")
        return None
    if index.get("model_files") != model_hashes(model_path):
        _notice(f"the embedding cache in {cache_dir} was made from another model; embedding every passage")
        return None
    return EmbeddingCache(index["rows"], vectors)


def agrees(cache: EmbeddingCache, texts: list[str], encoder: Encoder) -> float:
    """The lowest cosine between cached and live vectors of a few of `texts` (all cached), spread evenly."""
    step = max(1, len(texts) // CHECKED_ROWS)
    sample = texts[::step][:CHECKED_ROWS]
    live = encoder.embed(sample)
    cached = np.stack([cache.lookup(t) for t in sample])
    return float(np.min(np.sum(live * cached, axis=1)))


def embed_with_cache(texts: list[str], encoder: Encoder, cache: EmbeddingCache | None) -> np.ndarray:
    """Vectors of `texts`: cached rows where the cache has them and agrees with `encoder`, live ones else."""
    hits = [i for i, t in enumerate(texts) if cache is not None and cache.lookup(t) is not None]
    if hits:
        lowest = agrees(cache, [texts[i] for i in hits], encoder)
        if lowest < MIN_COSINE:
            _notice(
                f"the embedding cache disagrees with the model (cosine {lowest:.4f} < {MIN_COSINE}); "
                "ignoring it and embedding every passage (regenerate it: python -m ingest.embed_cache)"
            )
            hits = []
    hit_set = set(hits)
    misses = [i for i in range(len(texts)) if i not in hit_set]
    live = encoder.embed([texts[i] for i in misses]) if misses else None
    dim = live.shape[1] if live is not None else cache.vectors.shape[1]
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i in hits:
        out[i] = cache.lookup(texts[i])
    if live is not None:
        out[misses] = live
    return out


class CachedEncoder:
    """Ingest's encoder with the bundled cache in front of it; the cache is read on the first call."""

    def __init__(self, encoder: Encoder, knowledge_base: Path, model_path: str):
        self.runtime = encoder.runtime
        self._encoder = encoder
        self._knowledge_base = knowledge_base
        self._model_path = model_path
        self._cache: EmbeddingCache | None = None
        self._loaded = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self._loaded:
            self._cache = load_cache(self._knowledge_base, self._model_path)
            self._loaded = True
        return embed_with_cache(texts, self._encoder, self._cache)
