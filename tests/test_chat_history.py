"""The Gradio chat rebuilds its memory from the history on every turn; a refused turn must not break that."""

from __future__ import annotations

import pytest

from assistant.settings import Settings
from ui.gradio_app import replay, respond

pytestmark = pytest.mark.slow  # Gradio: seconds to import


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "no-index")


def test_a_refused_turn_in_the_history_does_not_break_the_next_answer(settings):
    history = [
        {"role": "user", "content": "LoRA Llama 3 8B on 0 GPUs"},
        {"role": "assistant", "content": "I cannot use part of this request: ..."},
        {"role": "user", "content": "SFT Qwen3 8B on 8 H100"},
        {"role": "assistant", "content": "..."},
    ]
    conversation = replay(history, "0.6.0")
    assert conversation.slots.model_stem == "qwen3_8b" and conversation.slots.num_gpus == 8
    *_, (markdown, card, *_) = respond("and on 16 GPUs?", history, "0.6.0", "auto", settings=settings)
    assert "qwen3_8b_sft_config" in card and "16" in markdown
