"""Server mode: a real `chroma run` on loopback, shared by ingest and the retriever."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.retrieval import HybridRetriever
from assistant.settings import Settings
from ingest.build import ingest
from tests.conftest import free_port, wait_until_serving
from tests.test_ingest import small_kb

pytestmark = pytest.mark.slow  # a `chroma run` server and the embedding model


@pytest.fixture()
def chroma_server(tmp_path):
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port = free_port()
    process = subprocess.Popen(
        [chroma, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until_serving(f"http://127.0.0.1:{port}/api/v2/heartbeat", process, seconds=60)
    yield port
    process.terminate()
    process.wait(timeout=20)


def test_ingest_and_search_through_a_chroma_server(chroma_server, tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data",
        knowledge_base=small_kb(tmp_path / "kb"),
        chroma_mode="http",
        chroma_port=chroma_server,
    )
    first, _ = ingest(settings, [])
    assert first.added > 0
    second, _ = ingest(settings, [])
    assert second.changed == 0
    page = settings.knowledge_base / "guide" / "en" / "alpha.md"
    page.write_text(page.read_text().replace("explains", "clarifies"), encoding="utf-8")
    third, _ = ingest(settings, [])
    assert (third.added, third.removed) == (1, 1)
    hits = HybridRetriever(settings).search("clarifies expert parallel sizing", k=5).hits
    alpha = [h.text for h in hits if h.source == "guide/en/alpha.md#first"]
    assert alpha == ["Alpha > First section\n\nalpha clarifies expert parallel sizing."]


def test_unreachable_server_is_a_clear_error(tmp_path):
    from assistant.errors import UserError

    settings = Settings(data_dir=tmp_path, chroma_mode="http", chroma_port=free_port())
    with pytest.raises(UserError, match="Chroma server"):
        HybridRetriever(settings)
