"""Where the current index lives and how to open it (embedded Chroma directory or a Chroma server).

An index is written as a *generation*: a complete Chroma collection plus a manifest. A pointer names the
current generation, and it only moves once a new generation is whole, so readers never see a half-built
index. Embedded mode: `<data_dir>/index/CURRENT` names a directory. Server mode: the metadata of the
`<collection>__current` collection names a collection.

Beside its Chroma files, an embedded generation keeps every row as `rows.json` and its vectors as
`vectors.npy`, so a query process reads the index with numpy instead of importing chromadb (about 1.5 s).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.errors import UserError
from assistant.settings import Settings

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
for _var in (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HUB_DISABLE_TELEMETRY",
    "HF_HUB_DISABLE_PROGRESS_BARS",
):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TQDM_DISABLE", "1")

COSINE = {"hnsw": {"space": "cosine"}}


def version_flag(version: str) -> str:
    """Metadata key that marks a passage as valid for one version: '0.6.0' -> 'in_0_6_0'."""
    return "in_" + re.sub(r"\W", "_", version.strip())


def chroma_settings():
    import chromadb

    return chromadb.Settings(anonymized_telemetry=False, allow_reset=False)


def index_root(settings: Settings) -> Path:
    return settings.data_dir / "index"


def persistent_client(path: Path):
    import chromadb

    return chromadb.PersistentClient(path=str(path), settings=chroma_settings())


def http_client(settings: Settings):
    import chromadb

    try:
        return chromadb.HttpClient(
            host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings()
        )
    except Exception as error:  # chromadb raises plain ValueError/ConnectionError variants
        raise UserError(
            f"cannot reach the Chroma server at {settings.chroma_host}:{settings.chroma_port} ({error}); "
            "start it with `chroma run --path DIR --host 127.0.0.1 --port PORT` "
            "or unset AUTORECIPE_CHROMA_MODE"
        ) from error


def pointer_collection(settings: Settings) -> str:
    return f"{settings.collection}__current"


def current_generation(settings: Settings, client=None) -> str | None:
    """Name of the current generation, or None when nothing has been ingested yet."""
    if settings.chroma_mode == "persistent":
        pointer = index_root(settings) / "CURRENT"
        if not pointer.exists():
            return None
        name = pointer.read_text(encoding="utf-8").strip()
        return name if (index_root(settings) / name).is_dir() else None
    client = client or http_client(settings)
    try:
        meta = client.get_collection(pointer_collection(settings)).metadata or {}
    except Exception:  # noqa: BLE001 - chromadb raises NotFoundError/ValueError depending on version
        return None
    return meta.get("generation")


def open_current(settings: Settings) -> tuple[Any, str, dict[str, Any]]:
    """(client, collection name, manifest) of the current generation, or a UserError saying to ingest."""
    client = None if settings.chroma_mode == "persistent" else http_client(settings)
    generation = current_generation(settings, client)
    if generation is None:
        raise UserError("no index yet: run `autorecipe ingest` first (it builds the bundled knowledge base)")
    if settings.chroma_mode == "persistent":
        gen_dir = index_root(settings) / generation
        manifest = json.loads((gen_dir / "manifest.json").read_text(encoding="utf-8"))
        return persistent_client(gen_dir), settings.collection, manifest
    collection_name = f"{settings.collection}__{generation}"
    manifest = json.loads((client.get_collection(collection_name).metadata or {}).get("manifest", "{}"))
    return client, collection_name, manifest


ROWS_FILE = "rows.json"
VECTORS_FILE = "vectors.npy"


@dataclass(frozen=True)
class IndexRows:
    """Every passage of one generation, in one order: ids, metadata, text and unit-length vectors."""

    ids: list[str]
    metadatas: list[dict[str, Any]]
    documents: list[str]
    vectors: np.ndarray


def collection_rows(collection) -> IndexRows:
    data = collection.get(include=["metadatas", "documents", "embeddings"])
    vectors = np.asarray(data["embeddings"], dtype=np.float32).reshape(len(data["ids"]), -1)
    return IndexRows(list(data["ids"]), list(data["metadatas"]), list(data["documents"]), vectors)


def write_rows(gen_dir: Path, rows: IndexRows) -> None:
    """The numpy copy of a generation, written before the generation is switched to."""
    np.save(gen_dir / VECTORS_FILE, rows.vectors, allow_pickle=False)
    payload = {"ids": rows.ids, "metadatas": rows.metadatas, "documents": rows.documents}
    (gen_dir / ROWS_FILE).write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")


def read_current_rows(settings: Settings) -> tuple[IndexRows, dict[str, Any]]:
    """(rows, manifest) of the current generation: from its numpy copy when it has one, else via Chroma."""
    if settings.chroma_mode == "persistent":
        generation = current_generation(settings)
        gen_dir = index_root(settings) / generation if generation else None
        if gen_dir is not None and (gen_dir / ROWS_FILE).exists() and (gen_dir / VECTORS_FILE).exists():
            manifest = json.loads((gen_dir / "manifest.json").read_text(encoding="utf-8"))
            payload = json.loads((gen_dir / ROWS_FILE).read_text(encoding="utf-8"))
            vectors = np.load(gen_dir / VECTORS_FILE, allow_pickle=False)
            return IndexRows(payload["ids"], payload["metadatas"], payload["documents"], vectors), manifest
    client, collection_name, manifest = open_current(settings)
    return collection_rows(client.get_collection(collection_name)), manifest
