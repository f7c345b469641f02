"""`autorecipe ingest` (build the index) and `autorecipe search` (query it)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from assistant.errors import UserError
from assistant.settings import get_settings


def ingest(
    paths: list[Path] = typer.Argument(
        None, help="Extra Markdown/text files, folders or a Megatron-Bridge checkout."
    ),
    forget: list[Path] = typer.Option(None, "--forget", help="Stop indexing a previously added path."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Build or update the index: the bundled knowledge base plus any extra documents (offline)."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from ingest.build import ingest as run_ingest

    report, warnings = run_ingest(get_settings(), list(paths or []), forget=list(forget or []))
    if report.repaired:
        warnings = [f"the previous index was damaged ({report.repaired}); rebuilt it from scratch", *warnings]
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    summary = {
        "generation": report.generation,
        "added": report.added,
        "removed": report.removed,
        "unchanged": report.unchanged,
        "changed": report.changed,
        "total": report.total,
        "seconds": round(report.seconds, 2),
        "repaired": report.repaired,
    }
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        typer.echo(
            f"ingest: {report.changed} changed chunks ({report.added} added, {report.removed} removed, "
            f"{report.unchanged} unchanged; {report.total} total) in {report.seconds:.1f}s "
            f"-> {report.generation}"
        )


def search_payload(query: str, k: int, lang: str | None, version: str | None) -> dict:
    """What `search --json` prints (also the MCP tool): the query, the abstain signal and the hits."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.retrieval import make_retriever

    if lang not in (None, "en", "zh"):
        raise UserError(f"--lang must be en or zh, not {lang!r}")
    result = make_retriever().search(query, k=k, lang=lang, version=version)
    return {
        "query": result.query,
        "abstain": result.abstain,
        "hits": [
            h.model_dump(include={"chunk_id", "source", "heading", "doc_type", "lang", "text", "score"})
            for h in result.hits
        ],
    }


def search(
    query: str = typer.Argument(..., help="Question, error message or config key."),
    k: int = typer.Option(5, "--k", min=1, max=50, help="Number of passages."),
    lang: str = typer.Option(None, "--lang", help="Only passages in this language: en or zh."),
    version: str = typer.Option(
        None, "--version", help="Only passages valid for this Megatron-Bridge version."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Search the knowledge base (hybrid dense + BM25)."""
    payload = search_payload(query, k, lang, version)
    if as_json:
        typer.echo(json.dumps(payload, ensure_ascii=False))
        return
    if payload["abstain"]:
        typer.echo("No relevant passage found. Try naming a model, a config key or the exact error text.")
        return
    table = Table("#", "source", "heading", "score")
    for n, hit in enumerate(payload["hits"], 1):
        table.add_row(str(n), hit["source"], hit["heading"], f"{hit['score']:.4f}")
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("search")(search)
