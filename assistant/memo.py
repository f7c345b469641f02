"""Memoise pure computations that a long-running front end repeats: a function per its arguments' content
(the layout search, assistant/planning/cached.py), and what is derived from one loaded catalog.

The key is the arguments' content (records by their JSON, a KnowledgeBase by identity), so equal inputs hit
however they were built; callers get a deep copy, so nothing one answer does to its result reaches another.
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from pydantic import BaseModel

Result = TypeVar("Result")
SEARCH_ENTRIES = 256  # distinct (model, cluster, run) inputs kept; each result is a few layouts


class _Unkeyable(Exception):
    """An argument without a content key: the call is simply not memoised."""


def _content_key(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return type(value).__qualname__, value.model_dump_json()
    if isinstance(value, list | tuple):
        return tuple(_content_key(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _content_key(item)) for key, item in value.items()))
    try:
        hash(value)
    except TypeError as error:
        raise _Unkeyable from error
    return value


def memoised_by_content(function: Callable[..., Result]) -> Callable[..., Result]:
    """`function` memoised per argument content; least recently used out."""
    entries: OrderedDict[Any, Result] = OrderedDict()
    lock = threading.Lock()

    @wraps(function)
    def memoised(*args: Any, **kwargs: Any) -> Result:
        try:
            key = (_content_key(args), _content_key(kwargs))
        except _Unkeyable:
            return function(*args, **kwargs)
        with lock:
            hit = entries.get(key)
            if hit is not None:
                entries.move_to_end(key)
                return copy.deepcopy(hit)
        value = function(*args, **kwargs)
        with lock:
            entries[key] = value
            while len(entries) > SEARCH_ENTRIES:
                entries.popitem(last=False)
        return copy.deepcopy(value)

    memoised.cache_clear = entries.clear  # type: ignore[attr-defined]
    return memoised


def per_object(function: Callable[[Any], Result]) -> Callable[[Any], Result]:
    """`function` of one object computed once per live object (a loaded catalog is cached per process and
    never changed). The result must be immutable: it is shared."""
    entries: dict[int, tuple[weakref.ref, Result]] = {}
    lock = threading.Lock()

    @wraps(function)
    def memoised(obj: Any) -> Result:
        with lock:
            hit = entries.get(id(obj))
        if hit is not None and hit[0]() is obj:
            return hit[1]
        value = function(obj)
        key = id(obj)

        def forget(_ref: weakref.ref) -> None:
            entries.pop(key, None)

        with lock:
            entries[key] = (weakref.ref(obj, forget), value)
        return value

    return memoised
