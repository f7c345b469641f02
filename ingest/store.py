"""Write chunks into a new index generation, incrementally, and switch to it only when it is whole.

Unchanged chunks (same content hash) are neither re-embedded nor rewritten; removed ones are deleted.
An interrupted ingest leaves the previous generation, and the pointer to it, untouched. New chunks are
embedded in one call (sorted by length, so batches pad little) by the ONNX export of the model, which
this step makes first when it is missing (assistant/embedding.py), except those whose vectors the bundled
embedding cache holds (ingest/cached_vectors.py).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.embedding import Encoder, ingest_encoder, usable_export
from assistant.errors import UserError
from assistant.index_health import check_index
from assistant.lexical import TOKENIZER_VERSION, tokenize
from assistant.settings import Settings
from assistant.vectorstore import (
    COSINE,
    MANIFEST_FILE,
    ROWS_FILE,
    IndexRows,
    collection_rows,
    current_generation,
    http_client,
    index_root,
    open_current,
    persistent_client,
    pointer_collection,
    read_manifest,
    read_rows,
    write_rows,
)
from ingest.atomic import write_atomic
from ingest.cached_vectors import CachedEncoder
from ingest.docs import Chunk

BATCH = 256
KEEP_GENERATIONS = 2  # the current one and the one before it, which a running reader may still hold


@dataclass(frozen=True)
class IngestReport:
    generation: str
    added: int
    removed: int
    unchanged: int
    total: int
    seconds: float
    repaired: str | None = None  # what was wrong with the generation this one replaces from scratch

    @property
    def changed(self) -> int:
        return self.added + self.removed


def _existing_ids(settings: Settings) -> tuple[set[str], dict]:
    """Ids and manifest of the current generation, which check_index found whole."""
    if settings.chroma_mode == "persistent":
        generation = current_generation(settings)
        gen_dir = index_root(settings) / str(generation)
        return set(read_rows(gen_dir).ids), read_manifest(gen_dir / MANIFEST_FILE)
    client, name, manifest = open_current(settings)
    return set(client.get_collection(name).get(include=[])["ids"]), manifest


def _metadatas(chunks: Sequence[Chunk]) -> list[dict]:
    return [{**c.metadata(), "bm25": " ".join(tokenize(c.text))} for c in chunks]


def _add_chunks(collection, chunks: Sequence[Chunk], metadatas: list[dict], encoder: Encoder) -> IndexRows:
    """Embed and add `chunks`; returns them as rows, in the order Chroma lists them."""
    vectors = encoder.embed([c.text for c in chunks]) if chunks else np.zeros((0, 0), dtype=np.float32)
    for start in range(0, len(chunks), BATCH):
        batch = chunks[start : start + BATCH]
        collection.add(
            ids=[c.chunk_id for c in batch],
            embeddings=vectors[start : start + BATCH],
            metadatas=metadatas[start : start + BATCH],
            documents=[c.text for c in batch],
        )
    return IndexRows([c.chunk_id for c in chunks], metadatas, [c.text for c in chunks], vectors)


def _up_to_date(settings: Settings, previous: str | None) -> bool:
    """The current generation already has its numpy copy, and the model its export."""
    rows_file = index_root(settings) / str(previous) / ROWS_FILE
    if settings.chroma_mode == "persistent" and not rows_file.exists():
        return False
    model_path = settings.resolved_embedding_model_path()
    return usable_export(settings.resolved_embedding_export_dir(), model_path) is not None


def write_index(
    chunks: Sequence[Chunk],
    settings: Settings,
    *,
    sources: Sequence[str] = (),
    started_export: subprocess.Popen | None = None,
) -> IngestReport:
    """Bring the index to exactly `chunks`; returns what changed. `started_export`: see start_export.
    A damaged current generation is not built upon: the new one is made from scratch (the report says
    why). The caller holds the ingest lock."""
    started = time.perf_counter()
    unique = {c.chunk_id: c for c in chunks}
    model_path = settings.resolved_embedding_model_path()
    health = check_index(settings)
    if health.state == "unreachable":
        raise UserError(health.reason or "the Chroma server cannot be reached")
    repaired = health.reason if health.state == "damaged" else None
    old_ids, old_manifest = _existing_ids(settings) if health.ok else (set(), {})
    same_model = (old_manifest.get("embedding_model"), old_manifest.get("tokenizer")) == (
        model_path,
        TOKENIZER_VERSION,
    )
    if not same_model:
        old_ids = set()
    to_add = [c for cid, c in unique.items() if cid not in old_ids]
    to_remove = sorted(old_ids - unique.keys())
    previous = health.generation if health.ok else None
    if previous and same_model and not to_add and not to_remove and _up_to_date(settings, previous):
        return IngestReport(previous, 0, 0, len(unique), len(unique), time.perf_counter() - started)

    generation = new_generation_name(time.time())
    # BM25 tokens first: they run while a started export finishes in its process.
    metadatas = _metadatas(to_add)

    def open_encoder() -> tuple[Encoder, dict]:
        encoder = CachedEncoder(
            ingest_encoder(model_path, settings.resolved_embedding_export_dir(), started_export),
            settings.knowledge_base,
            model_path,
        )
        manifest = {
            "generation": generation,
            "embedding_model": model_path,
            "embedding_runtime": encoder.runtime,
            "tokenizer": TOKENIZER_VERSION,
            "chunks": len(unique),
            "sources": list(sources),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        return encoder, manifest

    base = previous if same_model else None
    writer = _write_persistent if settings.chroma_mode == "persistent" else _write_http
    try:
        writer(settings, generation, base, to_add, metadatas, to_remove, open_encoder)
    except OSError as error:
        raise UserError(
            f"ingest failed and was undone, the previous index is untouched: {error.strerror or error}"
            + (" (free some disk space and run it again)" if error.errno == errno.ENOSPC else ""),
            zh=f"导入失败并已撤销，之前的索引未被改动：{error.strerror or error}",
        ) from error
    return IngestReport(
        generation,
        len(to_add),
        len(to_remove),
        len(unique) - len(to_add),
        len(unique),
        time.perf_counter() - started,
        repaired=repaired,
    )


EncoderOpener = Callable[[], tuple[Encoder, dict]]


def _write_persistent(
    settings: Settings,
    generation: str,
    base: str | None,
    to_add: Sequence[Chunk],
    metadatas: list[dict],
    to_remove: list[str],
    open_encoder: EncoderOpener,
) -> None:
    """Build the generation in a staging directory, which is removed on any failure, then switch to it."""
    root = index_root(settings)
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(".staging-*"):  # left by a killed ingest; the caller holds the ingest lock
        shutil.rmtree(stale, ignore_errors=True)
    staging = root / f".staging-{generation}"
    try:
        if base:
            shutil.copytree(root / base, staging)
        else:
            staging.mkdir()
        client = persistent_client(staging)
        collection = client.get_or_create_collection(
            settings.collection, configuration=COSINE, embedding_function=None
        )
        encoder, manifest = open_encoder()
        added = _add_chunks(collection, to_add, metadatas, encoder)
        if to_remove:
            collection.delete(ids=to_remove)
        # A generation built from empty holds exactly the rows just added: no need to read them back.
        write_rows(staging, collection_rows(collection) if base else added)
        write_atomic(staging / MANIFEST_FILE, json.dumps(manifest, indent=1))
        del collection, client
        os.replace(staging, root / generation)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    write_atomic(root / "CURRENT", generation)
    _prune_persistent(root, keep={generation, base})


def _write_http(
    settings: Settings,
    generation: str,
    base: str | None,
    to_add: Sequence[Chunk],
    metadatas: list[dict],
    to_remove: list[str],
    open_encoder: EncoderOpener,
) -> None:
    """Build the generation as a new collection (dropped on any failure), then move the pointer to it."""
    client = http_client(settings)
    name = f"{settings.collection}__{generation}"
    collection = client.create_collection(name, configuration=COSINE, embedding_function=None)
    try:
        if base:
            _copy_collection(client, f"{settings.collection}__{base}", name, skip=set(to_remove))
        encoder, manifest = open_encoder()
        _add_chunks(collection, to_add, metadatas, encoder)
        collection.modify(metadata={"manifest": json.dumps(manifest)})
    except BaseException:
        client.delete_collection(name)
        raise
    client.get_or_create_collection(pointer_collection(settings)).modify(metadata={"generation": generation})
    _prune_http(client, settings, keep={generation, base})


def _copy_collection(client, source: str, target: str, *, skip: set[str]) -> None:
    """Server mode has no directory to copy: carry embeddings over so unchanged chunks are not re-embedded."""
    data = client.get_collection(source).get(include=["embeddings", "metadatas", "documents"])
    keep = [i for i, cid in enumerate(data["ids"]) if cid not in skip]
    target_collection = client.get_collection(target)
    for start in range(0, len(keep), BATCH):
        rows = keep[start : start + BATCH]
        target_collection.add(
            ids=[data["ids"][i] for i in rows],
            embeddings=[data["embeddings"][i] for i in rows],
            metadatas=[data["metadatas"][i] for i in rows],
            documents=[data["documents"][i] for i in rows],
        )


def new_generation_name(now: float) -> str:
    """gen-<local date>-<time>-<microseconds>-<random>: names sort in creation order, which pruning relies on,
    even for two ingests in the same second (whose random suffixes alone once sorted them by chance)."""
    micro = int(now * 1_000_000) % 1_000_000  # floored, as localtime floors the seconds
    return time.strftime("gen-%Y%m%d-%H%M%S-", time.localtime(now)) + f"{micro:06d}-" + uuid.uuid4().hex[:6]


def _prune_persistent(root: Path, *, keep: set[str | None]) -> None:
    generations = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("gen-"))
    for path in generations[: max(0, len(generations) - KEEP_GENERATIONS)]:
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)
    for stale in root.glob(".staging-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _prune_http(client, settings: Settings, *, keep: set[str | None]) -> None:
    prefix = f"{settings.collection}__gen-"
    names = sorted(c.name if hasattr(c, "name") else str(c) for c in client.list_collections())
    generations = [n for n in names if n.startswith(prefix)]
    for name in generations[: max(0, len(generations) - KEEP_GENERATIONS)]:
        if name.removeprefix(f"{settings.collection}__") not in keep:
            client.delete_collection(name)
