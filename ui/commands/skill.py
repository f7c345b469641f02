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
    mcore_git: Path = typer.Option(
        None, "--mcore-git", help="Megatron-LM git dir for a checkout's pinned core."
    ),
) -> None:
    """Write SKILL.md, references/recipe-index.md and evals/evals.json for one version."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import load_catalog
    from ingest.catalog_build import checkout_mcore, mcore_git_dir
    from ui.skill_export import catalog_from_source, render_skill, write_skill

    if source is None:
        catalog = load_catalog(version)
    else:
        mcore = checkout_mcore(source, mcore_git_dir(mcore_git))
        if mcore is None:
            typer.echo(
                f"warning: no Megatron-Core source for {source} (no checked-out 3rdparty/Megatron-LM, and no "
                "--mcore-git with a git checkout): defaults Megatron-Core decides, such as some recipes' "
                "CUDA-graph implementation, stay unresolved, and so do the estimates that read them",
                err=True,
            )
        catalog = catalog_from_source(source, version, mcore=mcore)
    written = write_skill(render_skill(catalog, lang), out)
    typer.echo(f"wrote {written}: Megatron-Bridge {catalog.version} skill ({lang})")


def register(app: typer.Typer) -> None:
    app.add_typer(skill_app, name="skill")
