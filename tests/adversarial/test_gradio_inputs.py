"""The hostile-input corpus through the Gradio handler (issue 20, item 7): the same clear messages as the
service gives (tests/adversarial/test_corpus.py). Its own module because importing Gradio costs seconds,
which keeps it out of `make test-fast`."""

from __future__ import annotations

import pytest

from assistant.settings import Settings
from tests.adversarial.test_corpus import HANG_GUARD_S, QUESTIONS, _assert_clear
from ui.gradio_app import respond

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("no-index"))


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize(
    ("question", "message", "may_plan"), QUESTIONS[:8], ids=[m for _, m, _ in QUESTIONS[:8]]
)
def test_the_gradio_handler_gives_the_same_message(settings, question, message, may_plan):
    *_, last = respond(question, [], "0.6.0", "auto", settings)
    _assert_clear(last[0])
    assert message in last[0]


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize(
    ("version", "history", "message"),
    [("9.9.9", [], "Megatron-Bridge 9.9.9 is not bundled"), ("0.6.0", "not a list", "Hi!")],
)
def test_the_gradio_api_answers_bad_arguments_clearly(settings, version, history, message):
    *_, last = respond("hi", history, version, "auto", settings)
    _assert_clear(last[0])
    assert message in last[0]


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize("lang", ["fr", "", "EN", None, 7])
def test_an_unsupported_answer_language_falls_back_in_the_page_too(settings, lang):
    *_, last = respond("Llama3 8B SFT on 8 H100", [], "0.6.0", lang, settings)
    assert "answers are in English or Chinese" in last[0]
