"""`autorecipe eval`: run the golden Q&A set, write the report, exit non-zero when a quality gate fails."""

from __future__ import annotations

from pathlib import Path

import typer

from evals import run as eval_run


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""

    @app.command("eval")
    def eval_command(
        set_file: Path = typer.Option(eval_run.DEFAULT_SET, "--set", help="Golden Q&A JSONL file."),
        report: Path = typer.Option(
            Path("eval-report"), "--report", help="Directory for summary.json, report.md and accuracy.png."
        ),
        version: str | None = typer.Option(
            None, "--version", help="Only the rows of this Megatron-Bridge version."
        ),
        retrieval_set: Path = typer.Option(
            eval_run.DEFAULT_RETRIEVAL_SET,
            "--retrieval-set",
            help="Retrieval queries JSONL (skipped when the file is absent).",
        ),
        skip_retrieval: bool = typer.Option(
            False, "--skip-retrieval", help="Do not run retrieval; its gate fails."
        ),
        no_archive: bool = typer.Option(
            False, "--no-archive", help="Do not copy summary.json to evals/results/."
        ),
    ) -> None:
        """Evaluate the assistant on the golden set and enforce the CI thresholds."""
        code, result = eval_run.main(
            set_path=set_file,
            report_dir=report,
            version=version,
            retrieval_path=retrieval_set,
            results_dir=None if no_archive else eval_run.RESULTS_DIR,
            skip_retrieval=skip_retrieval,
        )
        data = result.summary.data
        typer.echo(f"{data['rows_passed']}/{data['rows']} rows fully correct; report in {report}/report.md")
        for gate in result.summary.gates:
            shown = "not run" if gate.value is None else gate.value
            typer.secho(
                f"  {'PASS' if gate.ok else 'FAIL'}  {gate.name} = {shown} ({gate.threshold})",
                fg=typer.colors.GREEN if gate.ok else typer.colors.RED,
            )
        raise typer.Exit(code)
