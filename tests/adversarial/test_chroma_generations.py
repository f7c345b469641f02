"""Server mode (AUTORECIPE_CHROMA_MODE=http) against a real `chroma run` on loopback: readers follow the
current generation across ingests, a reader whose generation was pruned under it reads the pointer again
once, and searches running while ingests switch generations never fail."""

from __future__ import annotations

import threading

import pytest

from assistant import vectorstore
from assistant.retrieval import make_retriever
from assistant.settings import Settings
from ingest.build import ingest
from ingest.store import KEEP_GENERATIONS
from tests.test_chroma_server import chroma_server  # noqa: F401 - the fixture
from tests.test_ingest import small_kb

# builds Chroma indexes with the embedding model and runs a Chroma server: 170 s of the fast set
pytestmark = pytest.mark.slow


@pytest.fixture()
def server_settings(chroma_server, tmp_path):  # noqa: F811 - the fixture above
    return Settings(
        data_dir=tmp_path / "data",
        knowledge_base=small_kb(tmp_path / "kb"),
        chroma_mode="http",
        chroma_port=chroma_server,
    )


def _edit(settings: Settings, n: int) -> None:
    page = settings.knowledge_base / "guide" / "en" / "alpha.md"
    page.write_text(page.read_text().replace("sizing", f"sizing v{n}", 1), encoding="utf-8")


def _generations(settings: Settings) -> list[str]:
    client = vectorstore.http_client(settings)
    return sorted(
        c.name for c in client.list_collections() if c.name.startswith(f"{settings.collection}__gen-")
    )


@pytest.mark.timeout(600)
def test_readers_follow_the_current_generation(server_settings):
    first, _ = ingest(server_settings, [])
    assert make_retriever(server_settings).generation == first.generation
    for n in (1, 2, 3):
        _edit(server_settings, n)
        report, _ = ingest(server_settings, [])
        retriever = make_retriever(server_settings)
        assert retriever.generation == report.generation  # not the first one, cached forever
        assert retriever.search(f"sizing v{n}", k=3).hits
    assert len(_generations(server_settings)) == KEEP_GENERATIONS


@pytest.mark.timeout(600)
def test_a_pruned_generation_is_retried_once_on_the_current_one(server_settings, monkeypatch):
    ingest(server_settings, [])
    for n in (1, 2):
        _edit(server_settings, n)
        current, _ = ingest(server_settings, [])
    real = vectorstore.current_generation
    stale = iter(["gen-20000101-000000-abcdef"])  # read just before two ingests pruned it
    monkeypatch.setattr(vectorstore, "current_generation", lambda s, c=None: next(stale, None) or real(s, c))
    assert make_retriever(server_settings).generation == current.generation


@pytest.mark.timeout(900)
def test_searches_during_ingests_never_fail(server_settings):
    ingest(server_settings, [])
    errors: list[str] = []
    searches = 0
    done = threading.Event()

    def reader() -> None:
        nonlocal searches
        while not done.is_set():
            try:
                assert make_retriever(server_settings).search("expert parallel sizing", k=3).hits
                searches += 1
            except Exception as error:  # noqa: BLE001 - every failure is counted, none may happen
                errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for n in range(1, 6):
            _edit(server_settings, n)
            ingest(server_settings, [])
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=60)
    assert errors == [] and searches > 0
