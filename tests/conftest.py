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

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from assistant.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SKILL_SEED = REPO.parent / "shared" / "seeds" / "000_7a19b8649c0bf7c3.txt"


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
