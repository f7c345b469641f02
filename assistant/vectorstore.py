"""Where the current index lives and how to open it (embedded Chroma directory or a Chroma server).

An index is written as a *generation*: a complete Chroma collection plus a manifest. A pointer names the
current generation, and it only moves once a new generation is whole, so readers never see a half-built
index. Embedded mode: `<data_dir>/index/CURRENT` names a directory. Server mode: the metadata of the
`<collection>__current` collection names a collection.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

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


@lru_cache(maxsize=2)
def make_embeddings(model_path: str):
    """The bundled sentence-transformers model, loaded by path (a hub name would try the network)."""
    from langchain_huggingface import HuggingFaceEmbeddings

    if not Path(model_path).exists():
        raise UserError(f"embedding model not found at {model_path}; set AUTORECIPE_EMBEDDING_MODEL_PATH")
    return HuggingFaceEmbeddings(
        model_name=model_path,
        model_kwargs={"device": "cpu", "local_files_only": True},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )


@contextmanager
def single_thread():
    """Embed one short query on one intra-op thread: on two busy cores, two OpenMP threads spin
    against each other (measured 480 ms vs 8 ms per MiniLM query)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


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
