"""The sentences of answers and findings, one catalog per language (`en.py`, `zh.py`).

Code names a message by key ("tp-heads" for a finding, "compose.fit_lines" for a section of the answer)
with its values; the catalog of the answer's language gives the words. Catalogs are Python mappings, not
TOML or gettext files: importing them reads no file, so the rule layer stays free of I/O and the wheel
needs no package data for them. A third language is one more module beside these two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant.messages import en, zh

CATALOGS: dict[str, dict[str, str]] = {"en": en.MESSAGES, "zh": zh.MESSAGES}


@dataclass(frozen=True)
class Message:
    """A message not yet put in words: its catalog key and the values of its placeholders."""

    key: str
    params: dict[str, Any] = field(default_factory=dict)

    def render(self, lang: str) -> str:
        return words(lang, self.key, **self.params)


@dataclass(frozen=True)
class Localized:
    """A value that is already words in each language (a note a record carries as `note` and `note_zh`)."""

    en: str | None
    zh: str | None

    def render(self, lang: str) -> str | None:
        return self.zh if lang == "zh" else self.en


def msg(key: str, /, **params: Any) -> Message:
    return Message(key, params)


def words(lang: str, key: str, /, **params: Any) -> str:
    """The message `key` in `lang` ("zh", else English) with its placeholders filled; a placeholder's
    value that is itself a Message or Localized is put in words in the same language."""
    filled = {k: v.render(lang) if isinstance(v, Message | Localized) else v for k, v in params.items()}
    return CATALOGS["zh" if lang == "zh" else "en"][key].format(**filled)


def user_language(environ: Mapping[str, str]) -> str:
    """The CLI user's language from the locale (LC_ALL, LC_MESSAGES, LANG): "zh" for a Chinese one, else "en".
    A flag's or a batch line's error has no question to take the language from."""
    locale = next((environ[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(k)), "")
    return "zh" if locale.lower().startswith("zh") else "en"
