"""`autorecipe doctor`: the index state, the versions and the model path, in one screen (or --json)."""

from __future__ import annotations

import json

import typer

from assistant.settings import get_settings


def doctor(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """Check the index, versions and embedding model without changing anything (exit 1 if not ok)."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.doctor import doctor_report, render

    report = doctor_report(get_settings())
    typer.echo(json.dumps(report, ensure_ascii=False) if as_json else render(report))
    if not report["ok"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
