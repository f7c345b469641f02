"""What one turn carries besides its slots: its deadline and its one-line notices.

Each answer has a time budget (AUTORECIPE_ANSWER_BUDGET_S), counted in CPU seconds of the thread that
answers: a loaded machine gives the same answer, only later (wall time would drop parts of answers at
random when other work shares the cores). The facts (recipe, plan, commands, rule findings) are always
computed; the optional parts (the layout search, citations, the LLM rephrasing) are skipped once the
budget is spent, and the answer says so in one line. Both live in context variables, so concurrent
sessions (Gradio's worker threads, Slack's pool) never see each other's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from assistant.messages import Message, msg

Notice = Message  # a catalog message, put in words in the answer's language

BUDGET_SPENT: Notice = msg("notice.budget_spent")

_deadline: ContextVar[float | None] = ContextVar("answer_deadline", default=None)
_notices: ContextVar[tuple[Notice, ...]] = ContextVar("answer_notices", default=())


@contextmanager
def turn(budget_s: float) -> Iterator[None]:
    """One answer's scope: a fresh deadline and no notices yet."""
    deadline = _deadline.set(time.thread_time() + budget_s)
    notices = _notices.set(())
    try:
        yield
    finally:
        _deadline.reset(deadline)
        _notices.reset(notices)


def notice(line: Notice) -> None:
    if line not in _notices.get():
        _notices.set((*_notices.get(), line))


def notices() -> tuple[Notice, ...]:
    return _notices.get()


def seconds_left() -> float | None:
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.thread_time()


def spent() -> bool:
    """True once the budget is gone (and records the notice): the caller skips its optional part."""
    left = seconds_left()
    if left is None or left > 0:
        return False
    notice(BUDGET_SPENT)
    return True
