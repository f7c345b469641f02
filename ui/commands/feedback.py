"""`autorecipe feedback list`: the stored thumbs, newest last, or as golden-row stubs."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from assistant.errors import UserError
from assistant.feedback import feedback_path, golden_row, read_feedback
from assistant.settings import get_settings
from ui.tables import Column, print_rows

feedback_app = typer.Typer(
    help="Answer feedback (thumbs up/down) stored in the data dir.", no_args_is_help=True
)


@feedback_app.command("list")
def list_feedback(
    verdict: str = typer.Option(None, "--verdict", help="Only up or only down."),
    as_json: bool = typer.Option(False, "--json", help="One stored entry per line (JSONL)."),
    as_golden: bool = typer.Option(False, "--golden", help="Golden-row stubs for evals/golden/qa.jsonl."),
) -> None:
    """List stored feedback; `--golden --verdict down` starts golden rows from the thumbs-down."""
    if verdict not in (None, "up", "down"):
        raise UserError(f"--verdict must be up or down, not {verdict!r}")
    settings = get_settings()
    entries = [e for e in read_feedback(settings) if verdict is None or e.verdict == verdict]
    if as_json or as_golden:
        for entry in entries:
            row = golden_row(entry) if as_golden else entry.to_json()
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    columns = (Column("at", identifier=True), Column("verdict", identifier=True),
               Column("version", identifier=True), Column("question"), Column("comment"))  # fmt: skip
    rows = [(e.at, e.verdict, e.version, e.question, e.comment) for e in entries]
    print_rows(Console(), f"{len(entries)} feedback entries in {feedback_path(settings)}", columns, rows)


def register(app: typer.Typer) -> None:
    app.add_typer(feedback_app, name="feedback")
