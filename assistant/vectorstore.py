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
    # lazy: chromadb loads only on this path (start-up time)
    import chromadb

    return chromadb.Settings(anonymized_telemetry=False, allow_reset=False)


def index_root(settings: Settings) -> Path:
    return settings.data_dir / "index"


def persistent_client(path: Path):
    # lazy: chromadb loads only on this path (start-up time)
    import chromadb

    return chromadb.PersistentClient(path=str(path), settings=chroma_settings())


def http_client(settings: Settings):
    # lazy: chromadb loads only on this path (start-up time)
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


class IndexUnavailable(UserError):
    """An index exists but cannot be read (damaged files, a server that lost a collection): answers go on
    without citations, and the next ingest rebuilds it."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the passage index cannot be read ({reason}); run `autorecipe ingest` to rebuild it "
            "(`autorecipe doctor` shows its state)",
            zh=f"段落索引无法读取（{reason}）；运行 `autorecipe ingest` 重建"
            "（`autorecipe doctor` 可查看状态）",
        )
        self.reason = reason


# With microseconds since 2026-12-04 (ingest/store.py new_generation_name); without them before.
GENERATION_NAME = re.compile(r"^gen-[0-9]{8}-[0-9]{6}(-[0-9]{6})?-[0-9a-f]{6}$")


def current_generation(settings: Settings, client=None) -> str | None:
    """Name of the current generation, or None when nothing has been ingested yet; IndexUnavailable when
    the pointer itself is damaged."""
    if settings.chroma_mode == "persistent":
        pointer = index_root(settings) / "CURRENT"
        if not pointer.exists():
            return None
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise IndexUnavailable(f"CURRENT is unreadable: {type(error).__name__}") from error
        if not GENERATION_NAME.match(name):
            raise IndexUnavailable("CURRENT does not name a generation")
        return name if (index_root(settings) / name).is_dir() else None
    client = client or http_client(settings)
    try:
        meta = client.get_collection(pointer_collection(settings)).metadata or {}
    except Exception:  # noqa: BLE001 - chromadb raises NotFoundError/ValueError depending on version
        return None
    return meta.get("generation")


NO_INDEX = "no index yet: run `autorecipe ingest` first (it builds the bundled knowledge base)"


def open_current(settings: Settings) -> tuple[Any, str, dict[str, Any]]:
    """(client, collection name, manifest) of the current generation, or a UserError saying to ingest."""
    client = None if settings.chroma_mode == "persistent" else http_client(settings)
    generation = current_generation(settings, client)
    if generation is None:
        raise UserError(NO_INDEX)
    if settings.chroma_mode == "persistent":
        gen_dir = index_root(settings) / generation
        manifest = read_manifest(gen_dir / MANIFEST_FILE)
        return persistent_client(gen_dir), settings.collection, manifest
    collection_name = f"{settings.collection}__{generation}"
    try:
        metadata = client.get_collection(collection_name).metadata or {}
    except Exception as error:  # noqa: BLE001 - chromadb's NotFoundError moved between versions
        raise IndexUnavailable(f"collection {collection_name} is gone: {error}") from error
    return client, collection_name, parse_manifest(metadata.get("manifest", "{}"))


MANIFEST_FILE = "manifest.json"


def current_manifest(settings: Settings) -> dict[str, Any]:
    """The current generation's manifest, read without opening Chroma in embedded mode."""
    if settings.chroma_mode == "persistent":
        generation = current_generation(settings)
        if generation is None:
            raise UserError(NO_INDEX)
        return read_manifest(index_root(settings) / generation / MANIFEST_FILE)
    return open_current(settings)[2]


def parse_manifest(text: str) -> dict[str, Any]:
    try:
        manifest = json.loads(text)
    except ValueError as error:
        raise IndexUnavailable(f"manifest is not JSON: {error}") from error
    if not isinstance(manifest, dict) or not isinstance(manifest.get("generation"), str):
        raise IndexUnavailable("manifest has no generation")
    return manifest


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        return parse_manifest(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise IndexUnavailable(f"{path.name} is unreadable: {type(error).__name__}") from error


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


def read_rows(gen_dir: Path) -> IndexRows:
    """The numpy copy of a generation, checked whole (same count of ids, metadata, texts and vectors)."""
    try:
        payload = json.loads((gen_dir / ROWS_FILE).read_text(encoding="utf-8"))
        vectors = np.load(gen_dir / VECTORS_FILE, allow_pickle=False)
        rows = IndexRows(
            list(payload["ids"]), list(payload["metadatas"]), list(payload["documents"]), vectors
        )
    except (OSError, ValueError, KeyError, TypeError, EOFError) as error:
        raise IndexUnavailable(
            f"the passage copy in {gen_dir.name} is damaged: {type(error).__name__}"
        ) from error
    counts = {len(rows.ids), len(rows.metadatas), len(rows.documents), int(vectors.shape[0])}
    if len(counts) != 1 or vectors.ndim != 2 or not all(isinstance(m, dict) for m in rows.metadatas):
        raise IndexUnavailable(f"the passage copy in {gen_dir.name} is inconsistent")
    return rows


def read_current_rows(settings: Settings) -> tuple[IndexRows, dict[str, Any]]:
    """(rows, manifest) of the current generation: from its numpy copy when it has one, else via Chroma.
    A damaged index raises IndexUnavailable, whatever part of it is damaged."""
    if settings.chroma_mode == "persistent":
        generation = current_generation(settings)
        gen_dir = index_root(settings) / generation if generation else None
        if gen_dir is not None and (gen_dir / ROWS_FILE).exists() and (gen_dir / VECTORS_FILE).exists():
            return read_rows(gen_dir), read_manifest(gen_dir / MANIFEST_FILE)
    try:
        client, collection_name, manifest = open_current(settings)
        return collection_rows(client.get_collection(collection_name)), manifest
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - sqlite, HNSW and HTTP errors all mean "not readable"
        raise IndexUnavailable(f"{type(error).__name__}: {str(error)[:200]}") from error
