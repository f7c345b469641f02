"""Incremental, atomic ingest into a real on-disk Chroma with the real embedding model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assistant.errors import UserError
from assistant.retrieval import HybridRetriever
from assistant.settings import Settings
from assistant.vectorstore import (
    collection_rows,
    current_generation,
    index_root,
    open_current,
    read_current_rows,
)
from ingest import store as ingest_store
from ingest.build import ingest

pytestmark = pytest.mark.slow  # the embedding model and Chroma on disk

PAGE = """---
topic: {topic}
doc_type: guide
versions: all
---
# {title}

## First section {{#first}}

{body}

## Second section {{#second}}

| key | meaning |
|---|---|
| model.context_parallel_size | context parallel |
"""


def small_kb(root: Path) -> Path:
    (root / "guide" / "en").mkdir(parents=True)
    (root / "catalogs").mkdir()
    for topic in ("alpha", "beta"):
        text = PAGE.format(topic=topic, title=topic.title(), body=f"{topic} explains expert parallel sizing.")
        (root / "guide" / "en" / f"{topic}.md").write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def small_settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", knowledge_base=small_kb(tmp_path / "kb"))


def test_second_ingest_changes_nothing(small_settings):
    first, _ = ingest(small_settings, [])
    assert first.added == first.total > 0
    second, _ = ingest(small_settings, [])
    assert (second.changed, second.unchanged) == (0, first.total)
    assert second.generation == first.generation


@pytest.mark.parametrize("edit", [False, True])
def test_the_numpy_copy_holds_what_chroma_holds(small_settings, edit):
    """From empty the copy is written from the rows just added, after an edit from the merged collection."""
    ingest(small_settings, [])
    if edit:
        page = small_settings.knowledge_base / "guide" / "en" / "beta.md"
        page.write_text(page.read_text().replace("explains", "sizes"), encoding="utf-8")
        ingest(small_settings, [])
    rows, _ = read_current_rows(small_settings)
    client, name, _ = open_current(small_settings)
    chroma = collection_rows(client.get_collection(name))
    assert (rows.ids, rows.metadatas, rows.documents) == (chroma.ids, chroma.metadatas, chroma.documents)
    assert np.array_equal(rows.vectors, chroma.vectors)


def test_edit_reembeds_only_the_changed_chunks_and_deletes_removed(small_settings):
    first, _ = ingest(small_settings, [])
    page = small_settings.knowledge_base / "guide" / "en" / "alpha.md"
    page.write_text(page.read_text().replace("explains expert", "describes expert"), encoding="utf-8")
    (small_settings.knowledge_base / "guide" / "en" / "beta.md").unlink()
    second, _ = ingest(small_settings, [])
    assert second.added == 1
    assert second.removed >= 3
    assert second.total < first.total
    hits = HybridRetriever(small_settings).search("describes expert parallel sizing", k=3).hits
    assert hits and "describes" in hits[0].text
    assert all("beta" not in h.source for h in HybridRetriever(small_settings).search("beta", k=10).hits)


def test_interrupted_ingest_leaves_previous_index_usable(small_settings, monkeypatch):
    first, _ = ingest(small_settings, [])
    page = small_settings.knowledge_base / "guide" / "en" / "alpha.md"
    page.write_text(page.read_text() + "\n## Third {#third}\n\nnew words about pipelines\n", encoding="utf-8")

    def crash(*_args, **_kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(ingest_store, "_add_chunks", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(small_settings, [])
    assert current_generation(small_settings) == first.generation
    assert HybridRetriever(small_settings).search("expert parallel sizing", k=3).hits
    monkeypatch.undo()
    third, _ = ingest(small_settings, [])
    assert third.added == 1
    assert not list(index_root(small_settings).glob(".staging-*"))


def test_extra_documents_are_remembered_until_they_disappear(small_settings, tmp_path):
    note = tmp_path / "our-cluster.md"
    note.write_text(
        "# Our cluster\n\n## Quota {#quota}\n\nEach team gets zebracorn quota.\n", encoding="utf-8"
    )
    ingest(small_settings, [note])
    again, _ = ingest(small_settings, [])
    assert again.changed == 0
    assert HybridRetriever(small_settings).search("zebracorn quota", k=1).hits[0].source.endswith("#quota")
    note.unlink()
    report, warnings = ingest(small_settings, [])
    assert report.removed >= 1
    assert any("no longer exists" in w for w in warnings)


def test_bad_extra_path_is_rejected_before_anything_is_written(small_settings, tmp_path):
    first, _ = ingest(small_settings, [])
    with pytest.raises(UserError):
        ingest(small_settings, [tmp_path / "missing.md"])
    blob = tmp_path / "blob.txt"
    blob.write_bytes(b"\x00\xff" * 100)
    with pytest.raises(UserError, match="binary"):
        ingest(small_settings, [blob])
    assert current_generation(small_settings) == first.generation


def run_cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    exe = Path(sys.executable).with_name("autorecipe")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=300)


def test_cli_bad_inputs_give_messages_not_tracebacks(small_settings, tmp_path):
    env = {
        "AUTORECIPE_DATA_DIR": str(small_settings.data_dir),
        "AUTORECIPE_KNOWLEDGE_BASE": str(small_settings.knowledge_base),
    }
    unreadable = tmp_path / "secret.md"
    unreadable.write_text("# x\n")
    unreadable.chmod(0)
    blob = tmp_path / "blob.md"
    blob.write_bytes(b"\x00" * 64)
    cases = [
        ("ingest", str(tmp_path / "nope.md")),
        ("ingest", str(blob)),
        ("search", "   "),
        ("search", "anything"),  # before any ingest: says to run ingest
    ]
    if os.geteuid() != 0:  # root reads anything, so only an ordinary user sees the permission error
        cases.append(("ingest", str(unreadable)))
    for args in cases:
        result = run_cli(*args, env_extra=env)
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr + result.stdout, args
        assert "error:" in result.stderr, (args, result.stderr)


NO_NETWORK = """
import socket, sys
real_connect = socket.socket.connect
def guarded(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and (host.startswith("127.") or host in ("::1", "localhost") or "/" in host):
        return real_connect(self, address)
    raise OSError(f"network attempt to {address!r}")
socket.socket.connect = guarded
socket.create_connection = lambda address, *a, **k: guarded(socket.socket(), address)
from assistant.settings import Settings
from ingest.build import ingest
report, _ = ingest(Settings(data_dir=sys.argv[1], knowledge_base=sys.argv[2]), [])
print(report.added)
"""


def test_ingest_makes_no_network_attempt(tmp_path):
    kb = small_kb(tmp_path / "kb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    result = subprocess.run(
        [sys.executable, "-c", NO_NETWORK, str(tmp_path / "data"), str(kb)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.strip().splitlines()[-1]) > 0
    assert "network attempt" not in result.stderr
