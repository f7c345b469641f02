"""Errors that are the user's to fix: the front ends print their message, never a traceback."""


class UserError(Exception):
    """Bad input or a missing prerequisite; the message says what to do. `zh` is the same message in
    Chinese, for answers to a Chinese question (the English text is used where none is given)."""

    def __init__(self, message: str, *, zh: str | None = None) -> None:
        super().__init__(message)
        self.zh = zh

    def in_language(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else str(self)
