"""Markdown / plain-text documents -> retrievable chunks.

Rules that matter for our knowledge (mostly tables and commands):
- every chunk carries its heading path and a stable `source` (path + heading anchor);
- a table is never split mid-row: it stays whole under its heading, and each row is also its own chunk
  with the header row prepended;
- code fences stay intact;
- chunk ids are content hashes, so re-ingesting unchanged text changes nothing.

Hand-written, not langchain-text-splitters: on the bundled guide its MarkdownHeaderTextSplitter keeps
`{#anchor}` marks in heading paths and strips the indentation of code and list lines, the experimental
Markdown splitter cuts code blocks away from their prose, and the size splitters cut tables mid-table.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from assistant.catalog import available_versions
from assistant.errors import UserError
from assistant.lexical import is_chinese
from assistant.rules.versions import version_key
from assistant.vectorstore import version_flag

MAX_CHUNK_CHARS = 1400
MAX_FILE_BYTES = 5_000_000
TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".rst", ""}

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_ANCHOR_RE = re.compile(r"\s*\{#([A-Za-z0-9_\-]+)\}\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = tuple("。.,，;；!！:：")


@dataclass(frozen=True)
class Chunk:
    """One retrievable passage and the metadata Chroma stores with it (scalars only)."""

    text: str
    source: str
    heading: str
    doc_type: str
    lang: str
    version: str = "all"
    topic: str = ""
    part: str = "section"  # section | intro (text before a section's subsections) | table | row | recipe
    section: str = ""  # the innermost heading, whole (a title may itself contain " > ")

    @property
    def chunk_id(self) -> str:
        digest = hashlib.sha1(
            "\x1f".join((self.source, self.heading, self.section, self.part, self.version, self.text)).encode(
                "utf-8"
            )
        )
        return digest.hexdigest()[:20]

    def metadata(self) -> dict[str, str | bool]:
        """Scalars only (Chroma); `in_<version>` flags let a filter match a passage of many versions."""
        flags = {version_flag(v): True for v in self.version.split(",") if v and v != "all"}
        return flags | {
            "chunk_id": self.chunk_id,
            "source": self.source,
            "heading": self.heading,
            "doc_type": self.doc_type,
            "lang": self.lang,
            "version": self.version,
            "topic": self.topic,
            "part": self.part,
            "section": self.section,
        }


@dataclass
class _Section:
    path: list[str]
    anchor: str
    lines: list[str] = field(default_factory=list)


def slugify(heading: str) -> str:
    """GitHub-style anchor: lower-case, punctuation dropped, spaces to dashes (CJK kept)."""
    slug = re.sub(r"[^\w\- \u3400-\u9fff]", "", heading.strip().lower())
    return re.sub(r"[\s]+", "-", slug).strip("-") or "section"


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    meta = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    return meta, text[end + 4 :].lstrip("\n")


def _markdown_sections(body: str) -> list[_Section]:
    sections = [_Section(path=[], anchor="")]
    stack: list[tuple[int, str]] = []
    in_fence = False
    for line in body.splitlines():
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING_RE.match(line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            explicit = _ANCHOR_RE.search(title)
            title = _ANCHOR_RE.sub("", title).strip()
            anchor = explicit.group(1) if explicit else slugify(title)
            stack = [(lvl, t) for lvl, t in stack if lvl < level] + [(level, title)]
            sections.append(_Section(path=[t for _, t in stack], anchor=anchor))
        else:
            sections[-1].lines.append(line)
    return [s for s in sections if any(line.strip() for line in s.lines) or s.path]


def _is_text_heading(block: list[str]) -> bool:
    if len(block) != 1:
        return False
    line = block[0].strip()
    return (
        0 < len(line) <= 40
        and "\t" not in line
        and not line.endswith(_SENTENCE_END)
        and not line.startswith(("#", "uv ", "python", "•", "│", "├", "└", "'", "-", "|"))
    )


def _text_sections(body: str) -> list[_Section]:
    """Plain text (the original skill): `---` separates chapters, a lone short line is a heading."""
    sections: list[_Section] = []
    lines = body.splitlines()
    title = next((line.strip() for line in lines if line.strip()), "")
    chapter: str | None = None
    block: list[str] = []
    current = _Section(path=[title], anchor=slugify(title))
    sections.append(current)
    after_separator = True

    def flush() -> None:
        nonlocal current, chapter, after_separator
        if not block:
            return
        if _is_text_heading(block) and block[0].strip() != title:
            heading = block[0].strip()
            if after_separator or chapter is None:
                chapter, path = heading, [title, heading]
            else:
                path = [title, chapter, heading]
            current = _Section(path=path, anchor=slugify(heading))
            sections.append(current)
        else:
            if current.lines:
                current.lines.append("")
            current.lines.extend(block)
        after_separator = False
        block.clear()

    for line in lines:
        if line.strip() == "---":
            flush()
            after_separator = True
        elif not line.strip():
            flush()
        else:
            block.append(line)
    flush()
    return [s for s in sections if any(line.strip() for line in s.lines)]


def _is_table_line(line: str, tab_tables: bool) -> bool:
    stripped = line.strip()
    return stripped.startswith("|") or (tab_tables and "\t" in stripped)


def _split_blocks(lines: list[str], tab_tables: bool) -> list[tuple[str, list[str]]]:
    """Group section lines into ('text'|'table'|'code', lines) blocks."""
    blocks: list[tuple[str, list[str]]] = []
    in_fence = False
    for line in lines:
        if _FENCE_RE.match(line):
            if not in_fence:
                blocks.append(("code", [line]))
            else:
                blocks[-1][1].append(line)
            in_fence = not in_fence
            continue
        if in_fence:
            blocks[-1][1].append(line)
            continue
        kind = "table" if _is_table_line(line, tab_tables) else "text"
        if not line.strip():
            # A blank line ends a paragraph: paragraphs are where long sections may be split.
            if blocks and blocks[-1][0] == "text":
                blocks[-1][1].append(line)
            blocks.append(("text", []))
            continue
        if blocks and blocks[-1][0] == kind and (kind == "table" or blocks[-1][1]):
            blocks[-1][1].append(line)
        else:
            blocks.append((kind, [line]))
    return [(kind, lines) for kind, lines in blocks if lines]


def _table_rows(table: list[str]) -> tuple[list[str], list[str]]:
    """(header lines, data rows) of a pipe or tab table."""
    if table[0].strip().startswith("|"):
        has_rule = len(table) > 1 and set(table[1].replace("|", "").strip()) <= set("-: ")
        header = table[:2] if has_rule else table[:1]
        return header, table[len(header) :]
    return table[:1], table[1:]


INTRO_MAX_CHARS = 500  # longer text before subsections says something of its own
# A release mark the guide puts on a section: "(v0.3.1)", "(v0.4.x–v0.5.1)", "(v0.6.0+)" (also in full-width
# brackets in Chinese).
_RELEASE = r"v(\d+)\.(\d+|x)(?:\.(\d+|x))?"
_VERSION_MARK_RE = re.compile(rf"[(（]{_RELEASE}(\+|[–-]{_RELEASE})?[)）]")


def _bound(major: str, minor: str, patch: str | None, *, upper: bool) -> tuple[int, int, int]:
    """A release of a mark as a version_key bound: "x" (or no patch) spans the whole minor line."""
    wild = 10**6 if upper else 0
    return (
        int(major),
        wild if minor == "x" else int(minor),
        wild if patch in (None, "x") or minor == "x" else int(patch),
    )


def marked_versions(text: str, versions: list[str]) -> list[str] | None:
    """The `versions` a section is about when it carries exactly one release mark; None when it has none or
    several (a section that contrasts releases is about all of them)."""
    marks = set(_VERSION_MARK_RE.findall(text))
    if len(marks) != 1:
        return None
    major, minor, patch, tail, *upper = marks.pop()
    low = _bound(major, minor, patch, upper=False)
    if tail == "+":
        high = (10**6, 0, 0)
    elif tail:
        high = _bound(*upper, upper=True)
    else:
        high = _bound(major, minor, patch, upper=True)
    return [v for v in versions if low <= version_key(v) <= high]


def chunk_text(
    text: str,
    *,
    source: str,
    doc_type: str,
    lang: str | None = None,
    version: str = "all",
    markdown: bool = True,
) -> list[Chunk]:
    """Split one document into section, table and row chunks."""
    meta, body = _front_matter(text) if markdown else ({}, text)
    topic = meta.get("topic", "")
    version = meta.get("versions", version)
    doc_type = meta.get("doc_type", doc_type)
    sections = _markdown_sections(body) if markdown else _text_sections(body)
    chunks: list[Chunk] = []
    for index, section in enumerate(sections):
        heading = " > ".join(section.path)
        following = sections[index + 1].path if index + 1 < len(sections) else []
        leads_in = len(following) > len(section.path) and following[: len(section.path)] == section.path
        # A short paragraph that only leads into the subsections below it ("the rules below ...") is an
        # intro: retrieval still finds it, but an answer quotes the subsections first.
        short = len("\n".join(section.lines).strip()) <= INTRO_MAX_CHARS
        prose_part = "intro" if leads_in and short else "section"
        prefix = f"{heading}\n\n" if heading else ""
        anchor = f"#{section.anchor}" if section.anchor else ""
        chunk_lang = lang or ("zh" if is_chinese(heading + "".join(section.lines)) else "en")
        section_version = _section_version(version, heading + "\n" + "\n".join(section.lines))

        def emit(
            body_text: str,
            part: str,
            *,
            _prefix=prefix,
            _anchor=anchor,
            _lang=chunk_lang,
            _heading=heading,
            _section=section.path[-1] if section.path else "",
            _version=section_version,
        ) -> None:
            if body_text.strip():
                chunks.append(
                    Chunk(
                        text=_prefix + body_text.strip(),
                        source=f"{source}{_anchor}",
                        heading=_heading,
                        doc_type=doc_type,
                        lang=_lang,
                        version=_version,
                        topic=topic,
                        part=part,
                        section=_section,
                    )
                )

        pending: list[str] = []
        for kind, lines in _split_blocks(section.lines, tab_tables=not markdown):
            block = "\n".join(lines)
            if kind == "table":
                header, rows = _table_rows(lines)
                emit("\n".join(pending), prose_part)
                pending = []
                emit(block, "table")
                for row in rows:
                    emit("\n".join([*header, row]), "row")
                continue
            if pending and len("\n".join(pending)) + len(block) > MAX_CHUNK_CHARS:
                emit("\n".join(pending), prose_part)
                pending = []
            pending.extend([*lines, ""] if kind == "code" else lines)
        emit("\n".join(pending), prose_part)
    return chunks


def _section_version(document_version: str, text: str) -> str:
    """Narrow a document's versions to the releases its section is marked for (a "(v0.6.0+)" section of a
    page about every release is not an answer for v0.3.1)."""
    versions = available_versions() if document_version == "all" else document_version.split(",")
    marked = marked_versions(text, versions)
    return ",".join(marked) if marked else document_version


def read_document(path: Path) -> str:
    """Read a text file for ingest, or explain why it cannot be."""
    if not path.exists():
        raise UserError(f"{path}: no such file or directory")
    if path.is_dir():
        raise UserError(f"{path}: is a directory; pass a Markdown/text file or a Megatron-Bridge checkout")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise UserError(f"{path}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit for one document")
        raw = path.read_bytes()
    except PermissionError as error:
        raise UserError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
    if b"\x00" in raw[:8192]:
        raise UserError(f"{path}: looks binary; only Markdown or plain-text files can be ingested")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: is not UTF-8 text ({error.reason} at byte {error.start})") from error


def chunk_file(path: Path, *, source: str, doc_type: str, version: str = "all") -> list[Chunk]:
    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise UserError(f"{path}: unsupported file type {path.suffix!r}; use .md or .txt")
    text = read_document(path)
    markdown = path.suffix.lower() in {".md", ".markdown"}
    lang = path.parent.name if path.parent.name in {"en", "zh"} else None
    return chunk_text(text, source=source, doc_type=doc_type, lang=lang, version=version, markdown=markdown)
