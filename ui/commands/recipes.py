"""`autorecipe recipes list|show|diff|index`: browse the bundled recipe catalogs or index any source."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from assistant.errors import UserError
from assistant.rules.versions import DEFAULT_VERSION
from ui.tables import Column, print_rows

recipes_app = typer.Typer(
    help="Browse Megatron-Bridge recipes per version (read from source, never guessed).", no_args_is_help=True
)

KINDS = ("library", "benchmark")
MODES = ("pretrain", "sft", "peft")
MODE_ALIASES = {"lora": "peft", "dora": "peft"}  # the launcher's --mode lora runs a PEFT recipe


def _par(record: Any) -> str:
    p = record.parallelism
    parts = [f"TP{p.tp or 1}", f"PP{p.pp or 1}"]
    parts += [
        f"{label}{value}"
        for label, value in (("VP", p.vp), ("CP", p.cp), ("EP", p.ep), ("ETP", p.etp))
        if value not in (None, 1)
    ]
    return " ".join(parts)


def _bundled(version: str | None) -> str:
    """The catalog a --version answers from (assistant/version_resolve.py); another release's says so."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.kb import knowledge_base
    from assistant.version_resolve import selected_choice

    choice = selected_choice(version, knowledge_base())
    if choice.note_en:
        typer.secho(f"note: {choice.note_en}", fg=typer.colors.YELLOW, err=True)
    return choice.version


@recipes_app.command("list")
def list_recipes(
    version: str = typer.Option(
        None, "--version", help=f"Megatron-Bridge version (default {DEFAULT_VERSION})."
    ),
    family: str = typer.Option(None, "--family", help="Model family, e.g. llama, qwen, deepseek."),
    mode: str = typer.Option(None, "--mode", help="pretrain, sft or peft (lora is accepted for peft)."),
    kind: str = typer.Option(None, "--kind", help="library or benchmark."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of full records."),
) -> None:
    """List recipes of one version, optionally filtered."""
    records = list_records(_bundled(version), family, mode, kind)
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in records], indent=1))
        return
    columns = [Column("name", identifier=True)]
    columns += [Column(c, identifier=True) for c in ("kind", "mode", "parallelism", "seq", "GBS", "min GPUs")]
    columns.append(Column("GPUs in name", identifier=True))
    rows = [
        (
            r.name if r.name == r.canonical else f"{r.name} -> {r.canonical}",
            r.kind,
            r.mode,
            _par(r),
            r.seq_length,
            r.global_batch_size,
            r.min_gpus,
            f"{r.encoded_gpus or ''} {r.gpu_type or ''}".strip(),
        )
        for r in records
    ]
    print_rows(Console(), f"{len(records)} recipes", columns, rows)


@recipes_app.command("show")
def show(
    name: str = typer.Argument(..., help="Recipe function name or alias."),
    version: str = typer.Option(
        None, "--version", help=f"Megatron-Bridge version (default {DEFAULT_VERSION})."
    ),
    kind: str = typer.Option(None, "--kind", help="library or benchmark (when a name is both)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full record as JSON."),
) -> None:
    """Show one recipe's values and where they were read from (`library:NAME`/`benchmark:NAME` or --kind
    pick one of two records sharing a name)."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import resolution_note, resolve_recipe

    record = resolve_recipe(name, version=_bundled(version), kind=kind)
    resolution = resolution_note(name, record, kind)
    if as_json:
        typer.echo(json.dumps({**record.to_json(), "resolution": resolution}, indent=1))
        return
    console = Console()
    console.print(f"[bold]{record.name}[/bold] ({record.kind}, Megatron-Bridge {record.version})")
    if resolution["ambiguous"]:
        console.print(f"[yellow]note[/yellow]: {resolution['note']}")
    if not record.reachable:
        console.print(f"[yellow]not launchable[/yellow]: {record.unreachable_reason}")
    if record.canonical != record.name:
        console.print(f"alias of {record.canonical}")
    rows = [
        ("family / mode", f"{record.family} / {record.mode}"),
        ("HF model", record.hf_model_id),
        ("parallelism", _par(record) + (" SP" if record.parallelism.sp else "")),
        ("seq length", record.seq_length),
        ("model seq length", record.model_seq_length),
        ("global / micro batch", f"{record.global_batch_size} / {record.micro_batch_size}"),
        ("min GPUs (PP·max(TP·CP, EP·ETP))", record.min_gpus),
        (
            "GPUs / type / variant in name",
            " / ".join(_shown(v) for v in (record.encoded_gpus, record.gpu_type, record.gpu_variant)),
        ),
        ("precision", record.precision),
        ("peft", record.peft),
        ("recompute", record.recompute),
        ("cuda graph", record.cuda_graph.model_dump() if record.cuda_graph else None),
        ("fsdp / packed", f"{_shown(record.fsdp)} / {_shown(record.packed_sequence)}"),
        ("aliases", ", ".join(record.aliases) or None),
        ("source", f"{record.source.path}:{record.source.line}"),
        ("self-check (defaults on its own GPUs)", _self_check(record)),
    ]
    for label, value in rows:
        console.print(f"  {label}: {_shown(value)}")
    for variant in record.variants:
        flags = " ".join(variant.launcher_args) or ("(no flag)" if variant.launcher_default else "")
        call = ", ".join(f"{k}={v!r}" for k, v in variant.call.items())
        console.print(
            f"  called with {call}: {variant.mode}, {_par(variant)}, GBS {variant.global_batch_size} {flags}"
        )
    for path, value in record.gpu_dependent.items():
        per_gpu = ", ".join(f"{gpu} {json.dumps(v)}" for gpu, v in value.by_gpu.items())
        console.print(
            f"  per GPU {path} ({value.rule}, {value.source.path}:{value.source.line}): {per_gpu}; "
            f"fields hold {value.assumed}"
        )
    for field, reason in record.unknown.items():
        console.print(f"  [yellow]unknown[/yellow] {field}: {reason}")


def _shown(value: Any) -> str:
    """A field the recipe does not set prints as '-', never Python's None."""
    return "-" if value is None else str(value)


def _self_check(record: Any) -> str | None:
    check = record.self_check
    if check is None:
        return None
    where = f"{check.gpus} × {check.gpu_type}"
    if check.passes:
        return f"passes on {where}"
    fix = " ".join(f"{k}={v}" for k, v in (check.fix or {}).items()) or "none found"
    return f"BROKEN in this release on {where}: {', '.join(check.failing_rules)}; fix: {fix}"


def _flat(record: Any) -> dict[str, Any]:
    data = record.to_json()
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if key in {"fields", "unknown", "version", "source"}:
            continue
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    flat.update({f"fields.{k}": v for k, v in data["fields"].items()})
    return flat


def list_records(version: str | None, family: str | None, mode: str | None, kind: str | None) -> list[Any]:
    """What `recipes list` lists (also the MCP tool), with the filters checked."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import find_recipes

    if kind is not None and kind not in KINDS:
        raise UserError(f"--kind must be one of {', '.join(KINDS)}, not '{kind}'")
    mode = MODE_ALIASES.get(mode, mode)
    if mode is not None and mode not in MODES:
        raise UserError(f"--mode must be one of {', '.join(MODES)} (lora = peft), not '{mode}'")
    records = find_recipes(version=version, kind=kind)
    families = sorted({r.family for r in records if r.family})
    if family is not None and family not in families:
        near = difflib.get_close_matches(family, families, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(near)}?" if near else f"families: {', '.join(families)}"
        raise UserError(f"no recipe family {family!r} in this version; {hint}")
    return find_recipes(version=version, family=family, mode=mode, kind=kind)


def diff_records(name: str, from_version: str, to_version: str, kind: str | None) -> list[dict[str, Any]]:
    """What `recipes diff --json` prints (also the MCP tool): each field whose value differs."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import resolve_recipe

    old = _flat(resolve_recipe(name, version=from_version, kind=kind))
    new = _flat(resolve_recipe(name, version=to_version, kind=kind))
    return [
        {"field": key, "from": old.get(key), "to": new.get(key)}
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]


@recipes_app.command("diff")
def diff(
    name: str = typer.Argument(..., help="Recipe name or alias."),
    from_version: str = typer.Option(..., "--from", help="Older version."),
    to_version: str = typer.Option(..., "--to", help="Newer version."),
    kind: str = typer.Option(None, "--kind", help="library or benchmark."),
    as_json: bool = typer.Option(False, "--json", help="Print the changes as JSON."),
) -> None:
    """Field-by-field differences of one recipe name between two versions."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import resolution_note, resolve_recipe

    from_version, to_version = _bundled(from_version), _bundled(to_version)
    for version in (from_version, to_version):
        resolution = resolution_note(name, resolve_recipe(name, version=version, kind=kind), kind)
        if resolution["ambiguous"]:
            typer.secho(f"note: {resolution['note']}", fg=typer.colors.YELLOW, err=True)
    changes = diff_records(name, from_version, to_version, kind)
    if as_json:
        typer.echo(json.dumps(changes, indent=1))
        return
    if not changes:
        typer.echo(f"{name}: no differences between {from_version} and {to_version}")
        return
    columns = (Column("field", identifier=True), Column(from_version), Column(to_version))
    rows = [(c["field"], json.dumps(c["from"]), json.dumps(c["to"])) for c in changes]
    print_rows(Console(), f"{name}: {from_version} -> {to_version} ({len(changes)} changes)", columns, rows)


@recipes_app.command("index")
def index(
    path: Path = typer.Argument(..., help="Checkout, installed megatron/bridge dir or .whl file."),
    out: Path = typer.Option(..., "--out", help="Catalog JSON to write (atomically)."),
    version: str = typer.Option(None, "--version", help="Version label (default: detected from the source)."),
) -> None:
    """Extract every recipe from any Megatron-Bridge source without importing or running it."""
    # deferred: only this command loads it, so the CLI's other commands start fast
    from assistant.catalog import source_version
    from assistant.records import CatalogSource
    from ingest.recipes.build import build_catalog, write_catalog
    from ingest.recipes.sources import open_source

    try:
        tree = open_source(path)
    except (FileNotFoundError, OSError, ValueError) as error:
        raise UserError(str(error)) from error
    label = version or (source_version(path) if path.is_dir() else _wheel_version(path)) or "unknown"
    source = CatalogSource(kind=tree.kind, ref=str(path))  # type: ignore[arg-type]
    catalog = build_catalog(tree, label, source)
    written = write_catalog(catalog, out)
    counts = {k: sum(1 for r in catalog.recipes if r.kind == k) for k in KINDS}
    for warning in catalog.warnings[:20]:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    typer.echo(
        f"wrote {written}: {counts['library']} library and {counts['benchmark']} benchmark recipes "
        f"(version {label})"
    )


def _wheel_version(path: Path) -> str | None:
    parts = path.name.split("-")
    return parts[1] if path.suffix == ".whl" and len(parts) > 2 else None


def register(app: typer.Typer) -> None:
    """Add the `recipes` command group to the root app."""
    app.add_typer(recipes_app, name="recipes")
