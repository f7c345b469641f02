"""Is the current index whole? One check, shared by ingest (which rebuilds a damaged generation instead of
reporting "0 changed") and `autorecipe doctor` (which reports it).

Embedded mode reads the files without chromadb: the pointer, the manifest, the numpy copy, the sqlite file
(stdlib, read-only, `PRAGMA quick_check`) and the HNSW segment directory the sqlite file names. Server mode
asks the server for the pointer and the collection's count.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assistant.errors import UserError
from assistant.settings import Settings
from assistant.vectorstore import (
    MANIFEST_FILE,
    ROWS_FILE,
    VECTORS_FILE,
    IndexUnavailable,
    current_generation,
    index_root,
    open_current,
    read_manifest,
    read_rows,
)

SQLITE_FILE = "chroma.sqlite3"
HNSW_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")


@dataclass(frozen=True)
class IndexHealth:
    state: Literal["ok", "missing", "damaged", "unreachable"]
    generation: str | None = None
    reason: str | None = None
    chunks: int | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def _sqlite_problem(gen_dir: Path, expected: int) -> str | None:
    """What is wrong with the generation's Chroma files, read through a read-only sqlite connection."""
    path = gen_dir / SQLITE_FILE
    if not path.is_file():
        return f"{SQLITE_FILE} is missing"
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            verdict = db.execute("PRAGMA quick_check").fetchone()
            if not verdict or verdict[0] != "ok":
                return f"{SQLITE_FILE} fails its integrity check"
            count = db.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            segments = [row[0] for row in db.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")]
    except sqlite3.Error as error:
        return f"{SQLITE_FILE}: {error}"
    if count != expected:
        return f"{SQLITE_FILE} holds {count} passages, the manifest {expected}"
    for segment in segments:
        absent = [name for name in HNSW_FILES if not (gen_dir / segment / name).is_file()]
        if absent:
            return f"the vector segment {segment} is missing {', '.join(absent)}"
    return None


def _persistent_health(settings: Settings, generation: str) -> IndexHealth:
    gen_dir = index_root(settings) / generation
    manifest = read_manifest(gen_dir / MANIFEST_FILE)
    expected = manifest.get("chunks")
    if not isinstance(expected, int):
        return IndexHealth("damaged", generation, "manifest has no chunk count", manifest=manifest)
    if not ((gen_dir / ROWS_FILE).is_file() and (gen_dir / VECTORS_FILE).is_file()):
        return IndexHealth("damaged", generation, "the passage copy (rows.json, vectors.npy) is missing")
    rows = read_rows(gen_dir)
    if len(rows.ids) != expected:
        return IndexHealth(
            "damaged", generation, f"{ROWS_FILE} holds {len(rows.ids)} passages, not {expected}"
        )
    problem = _sqlite_problem(gen_dir, expected)
    state = "damaged" if problem else "ok"
    return IndexHealth(state, generation, problem, chunks=expected, manifest=manifest)


def _server_health(settings: Settings, generation: str) -> IndexHealth:
    client, name, manifest = open_current(settings)
    try:
        count = client.get_collection(name).count()
    except Exception as error:  # noqa: BLE001 - chromadb's HTTP errors vary by version
        return IndexHealth("damaged", generation, f"collection {name}: {error}", manifest=manifest)
    if count != manifest.get("chunks"):
        return IndexHealth(
            "damaged", generation, f"{name} holds {count} passages, not {manifest.get('chunks')}"
        )
    return IndexHealth("ok", generation, chunks=count, manifest=manifest)


def check_index(settings: Settings) -> IndexHealth:
    """The state of the current generation; never raises for a damaged or absent index."""
    try:
        generation = current_generation(settings)
    except IndexUnavailable as error:
        return IndexHealth("damaged", None, error.reason)
    except UserError as error:  # the server cannot be reached
        return IndexHealth("unreachable", None, str(error))
    if generation is None:
        pointer = index_root(settings) / "CURRENT"
        if settings.chroma_mode == "persistent" and pointer.exists():
            return IndexHealth("damaged", None, "CURRENT names a generation that is not on disk")
        return IndexHealth("missing", None, "nothing ingested yet: run `autorecipe ingest`")
    try:
        if settings.chroma_mode == "persistent":
            return _persistent_health(settings, generation)
        return _server_health(settings, generation)
    except IndexUnavailable as error:
        return IndexHealth("damaged", generation, error.reason)
