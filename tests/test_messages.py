"""The message catalogs: every key in every language, with the same placeholders."""

from __future__ import annotations

from string import Formatter

import pytest

from assistant.messages import CATALOGS, Message, words

# Placeholders a language may leave out: the English plural ending ("GPU{s}") has no Chinese counterpart.
LANGUAGE_ONLY = {"en": {"s"}, "zh": set()}
# Keys whose sentence in one language leaves a value out (the Chinese does not repeat the training mode,
# nor the estimator's English reason for a hybrid model it cannot describe).
OMITTED = {("mode-dataset", "en"): {"mode"}, ("fit-note.unmodelled", "en"): {"reason"}}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


def test_every_key_is_in_every_language() -> None:
    keys = {lang: set(catalog) for lang, catalog in CATALOGS.items()}
    assert keys["en"] == keys["zh"], keys["en"] ^ keys["zh"]


@pytest.mark.parametrize("key", sorted(CATALOGS["en"]))
def test_the_languages_fill_the_same_placeholders(key: str) -> None:
    filled = {
        lang: placeholders(catalog[key]) - LANGUAGE_ONLY[lang] - OMITTED.get((key, lang), set())
        for lang, catalog in CATALOGS.items()
    }
    assert filled["en"] == filled["zh"]


def test_a_message_is_rendered_in_the_asked_language_and_english_otherwise() -> None:
    message = Message("section.min_gpus", {"n": 2, "s": "s"})
    assert message.render("en") == "needs at least 2 GPUs"
    assert message.render("zh") == "至少需要 2 张 GPU"
    assert words("fr", "section.min_gpus", n=1, s="") == "needs at least 1 GPU"
