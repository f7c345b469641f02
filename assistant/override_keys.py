"""Refuse override keys a release's config does not have, naming the closest real ones.

The field list is what the catalog extracted from that release's recipes (every dotted path a recipe
sets) plus the launcher's shortcut targets. It is not the whole ConfigContainer, so a key is refused
only when it is certainly wrong: its section (`trian.`, `foo.`) is not a config section, a part is a
dunder (`__class__`), or it is a near-spelling of a listed field it is not (`tensor_model_paralel_size`).
Other keys of a known section pass: the release may have them although no recipe sets them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from assistant.errors import UserError
from assistant.memo import per_object
from assistant.messages import words
from assistant.records import Catalog
from assistant.rules.config import SHORTCUTS

TYPO_CUTOFF = 0.9  # ratio of a one- or two-letter slip in a long dotted name; unrelated names stay below
SUGGEST_CUTOFF = 0.6
SUGGESTIONS = 3


@per_object  # a loaded catalog never changes; computing this took about 30 ms a question
def release_fields(catalog: Catalog) -> frozenset[str]:
    """Every dotted config path the release's recipes set, and what the launcher's shortcuts expand to."""
    fields = {path for record in catalog.recipes for path in record.fields}
    fields |= {target for targets in SHORTCUTS.values() for target in targets}
    return frozenset(fields)


def _problem(key: str, fields: frozenset[str], sections: frozenset[str]) -> bool:
    if key in fields or key in SHORTCUTS or any(f.startswith(key + ".") for f in fields):
        return False
    parts = key.split(".")
    if any(part.startswith("__") for part in parts):
        return True
    if parts[0] not in sections:
        return True
    if any(key.startswith(f + ".") for f in fields):  # inside a listed structured value
        return False
    return bool(difflib.get_close_matches(key, fields, n=1, cutoff=TYPO_CUTOFF))


def unknown_keys(keys: Iterable[str], fields: frozenset[str]) -> dict[str, list[str]]:
    """Each certainly-wrong key with up to three closest real keys (empty when none is close)."""
    sections = frozenset(f.split(".")[0] for f in fields)
    return {
        key: difflib.get_close_matches(key, sorted(fields), n=SUGGESTIONS, cutoff=SUGGEST_CUTOFF)
        for key in keys
        if _problem(key, fields, sections)
    }


def check_override_keys(keys: Iterable[str], catalog: Catalog) -> None:
    """UserError listing every unknown key of this release with its closest real keys."""
    keys = [k.lstrip("+~") for k in keys]
    bad = unknown_keys(keys, release_fields(catalog)) if keys else {}
    if not bad:
        return

    def said(lang: str) -> str:
        listed = words(lang, "sep.clause").join(
            words(lang, "override_keys.closest", key=key, hint=", ".join(near))
            if near
            else words(lang, "override_keys.no_similar", key=key)
            for key, near in bad.items()
        )
        return words(lang, "override_keys.unknown", version=catalog.version, listed=listed)

    raise UserError(said("en"), zh=said("zh"))
