"""Collect every document the index should hold and write it as one new generation.

The bundled knowledge base (guide pages and recipe catalogs) is always included. Extra files or
Megatron-Bridge checkouts a user adds are remembered in the manifest, so a later plain `ingest` keeps them
(a path that has disappeared is dropped, with a warning).
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from assistant.catalog import detect_version
from assistant.embedding import start_export
from assistant.errors import UserError
from assistant.records import Catalog
from assistant.settings import Settings
from assistant.vectorstore import current_manifest, index_root
from ingest.docs import TEXT_SUFFIXES, Chunk, chunk_file
from ingest.recipe_docs import recipe_chunks
from ingest.store import IngestReport, write_index

MAX_FILES_PER_TREE = 5000


@dataclass
class Collected:
    chunks: list[Chunk] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def bundled_chunks(knowledge_base: Path) -> list[Chunk]:
    chunks: list[Chunk] = []
    for page in sorted((knowledge_base / "guide").glob("*/*.md")):
        rel = page.relative_to(knowledge_base).as_posix()
        chunks.extend(chunk_file(page, source=rel, doc_type="guide"))
    catalogs = [
        Catalog.model_validate_json(path.read_text(encoding="utf-8"))
        for path in sorted((knowledge_base / "catalogs").glob("*.json"))
    ]
    return chunks + recipe_chunks(catalogs)


def _is_mbridge_checkout(path: Path) -> bool:
    return (
        (path / "src" / "megatron" / "bridge").is_dir()
        or (path / "docs").is_dir()
        and (path / "skills").is_dir()
    )


def _tree_files(root: Path) -> tuple[list[Path], list[str]]:
    """(files to read, why others were skipped). A link that leads out of `root` is never followed: the
    folder given is the boundary of what may be read (`docs/passwd.md -> /etc/passwd` stays out)."""
    if _is_mbridge_checkout(root):
        candidates = [p for sub in ("docs", "skills") for p in (root / sub).rglob("*.md")]
    else:
        candidates = [p for p in root.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES - {""}]
    inside, skipped = [], []
    for path in candidates:
        if not path.resolve().is_relative_to(root):
            skipped.append(f"skipped {path}: a link that leads out of {root}")
        elif path.is_file():
            inside.append(path)
    if len(inside) > MAX_FILES_PER_TREE:
        raise UserError(f"{root}: {len(inside)} files is over {MAX_FILES_PER_TREE}; pass a smaller folder")
    return sorted(inside), skipped


def _checkout_version(path: Path) -> str:
    return detect_version(path) or "all"


def extra_chunks(path: Path) -> tuple[list[Chunk], list[str]]:
    """Chunks of one user-supplied file, folder or Megatron-Bridge checkout, and what was skipped in a
    folder (links out of it, files that are not UTF-8 text): one bad file does not stop the others."""
    path = path.expanduser().resolve()
    if not path.is_dir():
        return chunk_file(path, source=f"user/{path.name}", doc_type="user"), []
    is_checkout = _is_mbridge_checkout(path)
    version = _checkout_version(path) if is_checkout else "all"
    label = "mbridge" if is_checkout else f"user/{path.name}"
    doc_type = "upstream" if is_checkout else "user"
    files, skipped = _tree_files(path)
    chunks: list[Chunk] = []
    for file in files:
        rel = file.relative_to(path).as_posix()
        try:
            chunks.extend(chunk_file(file, source=f"{label}/{rel}", doc_type=doc_type, version=version))
        except UserError as error:
            skipped.append(f"skipped {error}")
    return chunks, skipped


def collect(settings: Settings, extra_paths: Iterable[Path], remembered: Iterable[str]) -> Collected:
    collected = Collected(chunks=bundled_chunks(settings.knowledge_base))
    for path in [Path(p) for p in remembered] + list(extra_paths):
        resolved = str(path.expanduser().resolve())
        if resolved in collected.sources:
            continue
        if path in extra_paths:
            chunks, skipped = extra_chunks(path)  # bad input raises UserError before anything is written
        elif path.exists():
            try:
                chunks, skipped = extra_chunks(path)
            except UserError as error:
                collected.warnings.append(f"dropped {path}: {error}")
                continue
        else:
            collected.warnings.append(f"dropped {path}: it no longer exists, so its passages were removed")
            continue
        collected.chunks.extend(chunks)
        collected.warnings.extend(skipped)
        collected.sources.append(resolved)
    return collected


@contextmanager
def _ingest_lock(settings: Settings):
    """One writer at a time; a second ingest waits instead of corrupting the first."""
    root = index_root(settings)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / ".lock", "w")  # noqa: SIM115 - held for the whole ingest below
    except OSError as error:
        raise UserError(
            f"cannot write the index in {root}: {error.strerror}; ingest needs a writable "
            "AUTORECIPE_DATA_DIR (answers and search still read a read-only one)"
        ) from error
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def remembered_sources(settings: Settings) -> list[str]:
    try:
        return list(current_manifest(settings).get("sources", []))
    except UserError:
        return []


def ingest(
    settings: Settings, extra_paths: list[Path], *, forget: list[Path] = ()
) -> tuple[IngestReport, list[str]]:
    forgotten = {str(p.expanduser().resolve()) for p in forget}
    with _ingest_lock(settings):
        export = start_export(
            settings.resolved_embedding_model_path(), settings.resolved_embedding_export_dir()
        )
        try:
            remembered = [s for s in remembered_sources(settings) if s not in forgotten]
            collected = collect(settings, extra_paths, remembered)
            report = write_index(collected.chunks, settings, sources=collected.sources, started_export=export)
        finally:
            if export is not None and export.poll() is None:
                export.kill()  # bad input stopped the ingest: the half-made export is staged, never used
                export.wait()
    return report, collected.warnings
