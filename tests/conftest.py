"""Shared fixtures: offline environment, and one real index of the bundled knowledge base per session."""

from __future__ import annotations

import os

for _var, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ[_var] = _value

import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from assistant.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SKILL_SEED = REPO.parent / "shared" / "seeds" / "000_7a19b8649c0bf7c3.txt"


@pytest.fixture(scope="session", autouse=True)
def shared_model_export(tmp_path_factory):
    """One ONNX export of the embedding model for the whole run, whatever data directory a test uses."""
    os.environ["AUTORECIPE_EMBEDDING_EXPORT_DIR"] = str(tmp_path_factory.mktemp("models"))
    yield
    os.environ.pop("AUTORECIPE_EMBEDDING_EXPORT_DIR", None)


@pytest.fixture(scope="session")
def index_settings(tmp_path_factory) -> Settings:
    """Settings whose data directory holds a real index of the bundled knowledge base (built once)."""
    from ingest.build import ingest

    settings = Settings(data_dir=tmp_path_factory.mktemp("index"))
    ingest(settings, [])
    return settings


@pytest.fixture(scope="session")
def retriever(index_settings):
    from assistant.retrieval import make_retriever

    return make_retriever(index_settings)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen, seconds: float = 120) -> None:
    """Poll `url` until it answers; fail with the server's stderr if it exits or never comes up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited early: {process.stderr.read() if process.stderr else ''}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    process.kill()
    pytest.fail(f"{url} did not come up within {seconds:.0f} s")


def empty_knowledge_base(root: Path) -> Path:
    """A knowledge base with no guide pages and no catalogs: only what a test ingests itself."""
    (root / "guide").mkdir(parents=True)
    (root / "catalogs").mkdir()
    return root
