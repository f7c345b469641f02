"""Which bundled catalog answers a question: one rule for every front end (CLI ask/plan/check/recipes,
Gradio, Slack, MCP, batch eval) and for a detected checkout version.

A version written in the question wins over the front end's selector (`--version`, the dropdown), and
the answer says so in one line. A version between two bundled releases is answered from the nearest
earlier bundled one, with a notice; a version outside the bundled range is refused, because answering
0.9 from main's catalog would be an invented fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.errors import UserError
from assistant.kb import KnowledgeBase
from assistant.messages import words
from assistant.rules.versions import normalize_version, version_key

INDEX_HINT = "autorecipe recipes index"


@dataclass(frozen=True)
class VersionChoice:
    """The catalog to answer from, and the one line that explains a choice the user did not make."""

    version: str
    note_en: str = ""
    note_zh: str = ""

    def note(self, lang: str) -> str:
        return self.note_zh if lang == "zh" else self.note_en


def unknown_version_error(raw: str, bundled: list[str]) -> UserError:
    listed = ", ".join(bundled)
    return UserError.keyed("version_resolve.unknown", raw=raw, listed=listed, index_hint=INDEX_HINT)


def bundled_choice(raw: str, bundled: list[str]) -> VersionChoice:
    """Map one version string to a bundled catalog, or refuse it (UserError).

    Exact: itself. Between two bundled releases (0.4.1): the nearest earlier one, with a notice. The
    next minor after the newest release (0.7.x) is what main develops: main, with a notice. Anything
    older than the oldest or newer than that is refused with the bundled list and how to index one.
    """
    try:
        normalized = normalize_version(str(raw))
    except UserError as error:
        raise unknown_version_error(str(raw), bundled) from error
    if normalized in bundled:
        return VersionChoice(normalized)
    key = version_key(normalized)
    releases = sorted((v for v in bundled if v != "main"), key=version_key)
    if not releases or key < version_key(releases[0]):
        raise unknown_version_error(str(raw), bundled)
    newest = version_key(releases[-1])
    if key[:2] == (newest[0], newest[1] + 1) and "main" in bundled:
        return VersionChoice(
            "main",
            words("en", "version_resolve.next_minor", normalized=normalized),
            words("zh", "version_resolve.next_minor", normalized=normalized),
        )
    if key[:2] > newest[:2]:
        raise unknown_version_error(str(raw), bundled)
    earlier = [v for v in releases if version_key(v) < key][-1]
    return VersionChoice(
        earlier,
        words("en", "version_resolve.earlier", normalized=normalized, earlier=earlier),
        words("zh", "version_resolve.earlier", normalized=normalized, earlier=earlier),
    )


def selected_choice(selected: str | None, kb: KnowledgeBase) -> VersionChoice:
    """A front end's own pick (flag, dropdown, batch line) in `kb`: exact, the nearest earlier bundled
    release with a notice, or refused; nothing picked: the knowledge base's default version."""
    return bundled_choice(selected, kb.catalog_versions()) if selected else VersionChoice(kb.default_version)


def resolve(selected: str | None, named: str | None, default: str, bundled: list[str]) -> VersionChoice:
    """The version to answer for: the one named in the question, else the selector's, else the default.

    `selected` is what the front end chose (flag, dropdown), `named` what the question's text says.
    """
    if not named:
        return bundled_choice(selected, bundled) if selected else VersionChoice(default)
    chosen = bundled_choice(named, bundled)
    if not selected:
        return chosen
    try:
        picked = normalize_version(selected)
    except UserError:
        picked = selected
    if picked == chosen.version or picked == normalize_version(named):
        return chosen
    said = {"named": named, "selected": selected, "version": chosen.version}
    en, zh = words("en", "version_resolve.named", **said), words("zh", "version_resolve.named", **said)
    return VersionChoice(
        chosen.version,
        words("en", "sep.sentence").join(s for s in (en, chosen.note_en) if s),
        words("zh", "sep.sentence").join(s for s in (zh, chosen.note_zh) if s),
    )
