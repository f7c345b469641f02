"""Errors that are the user's to fix: the front ends print their message, never a traceback."""

from __future__ import annotations

from typing import Any

from assistant.messages import words


class UserError(Exception):
    """Bad input or a missing prerequisite; the message says what to do. `zh` is the same message in
    Chinese, for answers to a Chinese question (the English text is used where none is given)."""

    def __init__(self, message: str, *, zh: str | None = None) -> None:
        super().__init__(message)
        self.zh = zh

    @classmethod
    def keyed(cls, key: str, /, **params: Any) -> UserError:
        """The error whose sentence is the catalog message `key`: English, with its Chinese twin."""
        return cls(words("en", key, **params), zh=words("zh", key, **params))

    def in_language(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else str(self)
