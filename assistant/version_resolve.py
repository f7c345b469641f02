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
    return UserError(
        f"Megatron-Bridge {raw} is not bundled (bundled: {listed}). To answer for your own checkout, "
        f"index it: `{INDEX_HINT} PATH_TO_CHECKOUT --version X.Y.Z --out CATALOG_DIR/X.Y.Z.json` "
        "(CATALOG_DIR is the catalogs folder of your knowledge base), then pass that version.",
        zh=f"没有内置 Megatron-Bridge {raw} 的配方目录（内置：{listed}）。如需针对你自己的代码，请先运行 "
        f"`{INDEX_HINT} 代码路径 --version X.Y.Z --out CATALOG_DIR/X.Y.Z.json` 建立目录"
        "（CATALOG_DIR 为知识库的 catalogs 文件夹），再指定该版本。",
    )


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
            f"Megatron-Bridge {normalized} is not released in the bundled catalogs; answering from `main`, "
            f"its development line.",
            f"内置目录中没有已发布的 Megatron-Bridge {normalized}；以下按其开发分支 `main` 回答。",
        )
    if key[:2] > newest[:2]:
        raise unknown_version_error(str(raw), bundled)
    earlier = [v for v in releases if version_key(v) < key][-1]
    return VersionChoice(
        earlier,
        f"Megatron-Bridge {normalized} is not bundled; answering from {earlier}, the nearest earlier bundled "
        f"release. Names and flags may differ in {normalized}.",
        f"没有内置 Megatron-Bridge {normalized}；以下按最接近的较早内置版本 {earlier} 回答，"
        f"{normalized} 中的名称和参数可能不同。",
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
    en = (
        f"The question names Megatron-Bridge {named}, the selector says {selected}: "
        f"answering for {chosen.version}, as the question says."
    )
    zh = f"问题中写的是 Megatron-Bridge {named}，而选择的是 {selected}：按问题中的 {chosen.version} 回答。"
    return VersionChoice(
        chosen.version,
        " ".join(s for s in (en, chosen.note_en) if s),
        "".join(s for s in (zh, chosen.note_zh) if s),
    )
