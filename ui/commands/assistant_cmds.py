"""`autorecipe ask` (one question or a JSONL batch), `autorecipe chat` (Gradio) and `autorecipe slack`."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markdown import Markdown

from assistant.bounds import batch_line, valid_text
from assistant.errors import UserError
from assistant.messages import user_language
from assistant.settings import get_settings


def _answer_json(question: str, version: str | None, lang: str) -> dict:
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.service import ask

    return ask(question, version=version, lang=lang).to_json()


def _line_language(row: object) -> str:
    """The language of a batch line's error: the line's own `lang`, else its question's, else the locale's."""
    # deferred: only a failing batch line needs the language detector
    from assistant.understand import detect_language

    if isinstance(row, dict) and row.get("lang") in ("en", "zh"):
        return str(row["lang"])
    if isinstance(row, dict) and isinstance(row.get("question"), str):
        return detect_language(row["question"])
    return user_language(os.environ)


def _batch(path: Path) -> None:
    """One JSON object per input line in, one answer (plus its id) per output line out."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as error:
        raise UserError(f"cannot read batch file {path}: {error.strerror or error}") from error
    failures = 0
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        row = None
        try:
            try:
                row = json.loads(batch_line(raw))
            except json.JSONDecodeError as error:
                raise UserError.keyed("bounds.batch_line_json", number=number, reason=error.msg) from error
            if not isinstance(row, dict) or not isinstance(row.get("question"), str):
                raise UserError.keyed("bounds.batch_line_ask_shape")
            payload = _answer_json(row["question"], row.get("version"), row.get("lang", "auto"))
            payload["id"] = row.get("id")
        except (ValueError, UserError) as error:
            failures += 1
            row_id = row.get("id") if isinstance(row, dict) else None
            said = error.in_language(_line_language(row)) if isinstance(error, UserError) else str(error)
            payload = {"id": row_id, "line": number, "error": said}
        typer.echo(valid_text(json.dumps(payload, ensure_ascii=False))[0])  # an id may hold a lone surrogate
    if failures:
        typer.secho(f"{failures} line(s) could not be answered; see their 'error'", fg="yellow", err=True)


def ask_command(
    question: str = typer.Argument(None, help="Your question, in English or Chinese."),
    version: str = typer.Option(None, "--version", help="Megatron-Bridge version (default: newest release)."),
    lang: str = typer.Option("auto", "--lang", help="Answer language: auto, en or zh."),
    batch: Path = typer.Option(None, "--batch", help="JSONL file of {id, question, version} lines."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
) -> None:
    """Ask for a recipe, a resize, a config check or an error explanation."""
    if lang not in ("auto", "en", "zh"):
        raise UserError(f"--lang must be auto, en or zh, not {lang!r}")
    if batch is not None:
        _batch(batch)
        return
    if question is None:
        raise UserError(
            'give a question, e.g. autorecipe ask "Qwen3 30B-A3B SFT on 16 H100", or --batch FILE'
        )
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.service import ask

    answer = ask(question, version=version, lang=lang)
    if as_json:
        typer.echo(json.dumps(answer.to_json(), ensure_ascii=False))
    else:
        # deferred: only this command loads it, so the CLI's other commands start fast
        from ui.answer_export import terminal_markdown

        Console().print(Markdown(terminal_markdown(answer.answer_markdown)))


def _port_free(host: str, port: int) -> None:
    """A busy port is the user's to change: say so and how, before Gradio fails with a bare OSError."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as error:
            raise UserError(
                f"cannot listen on {host}:{port} ({error.strerror or error}): the port is busy or not "
                "allowed; pick another with --port N or the GRADIO_SERVER_PORT variable"
            ) from error


def chat_command(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface to listen on.", envvar="GRADIO_SERVER_NAME"
    ),
    port: int = typer.Option(7860, "--port", help="Port to listen on.", envvar="GRADIO_SERVER_PORT"),
) -> None:
    """Open the Gradio chat in the browser (runs offline on the embedded index)."""
    _port_free(host, port)
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.index_health import check_index
    from ui.gradio_app import launch

    settings = get_settings()
    health = check_index(settings) if settings.chroma_mode == "persistent" else None
    if health is not None and not health.ok:
        typer.secho(f"note: index {health.state} ({health.reason}); answers may lack citations", err=True)
    typer.echo(f"Auto Recipe chat on http://{host}:{port}", err=True)
    sys.stdout.flush()
    launch(host=host, port=port, settings=settings)


def slack_command() -> None:
    """Run the Slack bot (Socket Mode with SLACK_APP_TOKEN, else HTTP with SLACK_SIGNING_SECRET)."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from ui.slack_app import run

    run(get_settings())


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_command)
    app.command("chat")(chat_command)
    app.command("slack")(slack_command)
