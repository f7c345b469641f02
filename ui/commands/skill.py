"""`autorecipe skill export`: write a coding-agent skill generated from one version's catalog."""

from __future__ import annotations

from pathlib import Path

import typer

skill_app = typer.Typer(help="Coding-agent skills generated from a version's catalog.", no_args_is_help=True)


@skill_app.command("export")
def export(
    version: str = typer.Option(
        None, "--version", help="Megatron-Bridge version: 0.3.1, 0.5.1, 0.6.0 or main."
    ),
    out: Path = typer.Option(..., "--out", help="Skill directory to write (replaced whole if it is one)."),
    lang: str = typer.Option("en", "--lang", help="Language of the skill's text: en or zh."),
    source: Path = typer.Option(
        None, "--from", help="A Megatron-Bridge checkout or wheel instead of a bundled one."
    ),
) -> None:
    """Write SKILL.md, references/recipe-index.md and evals/evals.json for one version."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import load_catalog
    from ui.skill_export import catalog_from_source, render_skill, write_skill

    catalog = catalog_from_source(source, version) if source is not None else load_catalog(version)
    written = write_skill(render_skill(catalog, lang), out)
    typer.echo(f"wrote {written}: Megatron-Bridge {catalog.version} skill ({lang})")


def register(app: typer.Typer) -> None:
    app.add_typer(skill_app, name="skill")
