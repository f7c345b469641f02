"""The `autorecipe` console script: registers every command group and turns errors into messages."""

from __future__ import annotations

import os
import sys
from importlib import metadata

import typer

from assistant.errors import UserError
from assistant.messages import user_language
from ui.commands import (
    assistant_cmds,
    check_plan,
    doctor,
    estimate,
    evaluate,
    feedback,
    ingest_search,
    mcp,
    recipes,
    skill,
)

app = typer.Typer(
    name="autorecipe",
    help="Auto Recipe: choose, resize and launch Megatron-Bridge recipes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"autorecipe {metadata.version('autorecipe')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the autorecipe version and exit."
    ),
) -> None:
    """Auto Recipe: choose, resize and launch Megatron-Bridge recipes."""


COMMAND_MODULES = (
    ingest_search, recipes, check_plan, estimate, assistant_cmds, feedback, evaluate, mcp, skill, doctor,
)  # fmt: skip
for module in COMMAND_MODULES:
    module.register(app)


def main() -> None:
    """Entry point: a UserError prints its message (exit 2); nothing prints a traceback unless debugging."""
    try:
        app()
    except UserError as error:
        typer.secho(f"error: {error.in_language(user_language(os.environ))}", fg=typer.colors.RED, err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - last line of defence for a CLI
        if os.environ.get("AUTORECIPE_DEBUG"):
            raise
        typer.secho(
            f"internal error: {type(error).__name__}: {error} (set AUTORECIPE_DEBUG=1 for details)",
            fg=typer.colors.RED,
            err=True,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
