"""Terminal tables whose identifiers stay copyable at any width.

Identifier columns (recipe names, dotted keys, flags) never wrap: when they and a minimum for every
prose column do not fit the terminal, the rows print as a list (`name: value` lines) instead, which a
narrow terminal wraps only inside prose. Missing values print as "-", never "None".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

PROSE_MIN = 16  # narrowest prose column still readable word by word
BORDER = 3  # Rich's padding and rule per column


@dataclass(frozen=True)
class Column:
    name: str
    identifier: bool = False  # never wrapped


def cell(value: Any) -> str:
    """A value as a table shows it: "-" for missing, booleans and numbers as written."""
    if value is None or value == "":
        return "-"
    return str(value)


def _fits(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> bool:
    need = 1
    for i, column in enumerate(columns):
        longest = max([len(column.name)] + [len(row[i]) for row in rows])
        wide_words = max([len(w) for row in rows for w in row[i].split()] or [0])
        need += BORDER + (longest if column.identifier else max(min(longest, PROSE_MIN), wide_words))
    return need <= width


def print_rows(
    console: Console, title: str, columns: Sequence[Column], rows: Sequence[Sequence[Any]]
) -> None:
    """A table when it fits without breaking an identifier or a word, else one block per row."""
    texts = [[cell(value) for value in row] for row in rows]
    if _fits(columns, texts, console.width):
        table = Table(title=title, show_lines=any(not c.identifier for c in columns) and len(columns) > 2)
        for column in columns:
            overflow = "ignore" if column.identifier else "fold"
            table.add_column(column.name, no_wrap=column.identifier, overflow=overflow)
        for row in texts:
            table.add_row(*(escape(value) for value in row))
        console.print(table)
        return
    console.print(f"[bold]{escape(title)}[/]")
    for row in texts:
        first, *rest = zip(columns, row, strict=True)
        console.print(f"- {escape(first[1])}", soft_wrap=True, highlight=False)
        for column, value in rest:
            # identifiers stay on one line (copyable); prose wraps between words
            console.print(f"    {column.name}: {escape(value)}", soft_wrap=column.identifier, highlight=False)
