"""Errors that are the user's to fix: the front ends print their message, never a traceback."""


class UserError(Exception):
    """Bad input or a missing prerequisite; the message says what to do."""
