"""`autorecipe mcp`: serve the tools to a coding agent over stdio (default) or streamable HTTP."""

from __future__ import annotations

import typer

from assistant.errors import UserError

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def mcp_command(
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface for --http (loopback unless you mean it)."
    ),
    port: int = typer.Option(8765, "--port", help="Port for --http."),
) -> None:
    """Run the MCP server: recommend, check, plan, estimate, explain_error, search_guide and the catalogs."""
    if not 0 < port < 65536:
        raise UserError(f"--port must be between 1 and 65535, got {port}")
    if http and host not in LOOPBACK:
        typer.secho(f"note: serving on {host}, reachable beyond this machine", fg="yellow", err=True)
    # deferred: only this command loads it, so the CLI's other commands start fast
    from ui.mcp_server import serve

    serve(http=http, host=host, port=port)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_command)
