"""Catalog rows -> retrievable recipe-table passages.

One passage per recipe function whose facts are identical across bundled versions (0.6.0 and main share
most), tagged with every version it holds for; this keeps the index small enough to embed in under a
minute on two cores.
"""

from __future__ import annotations

from collections import defaultdict

from assistant.records import Catalog, RecipeRecord
from ingest.docs import Chunk


def _value(value) -> str:
    return "-" if value is None else str(value)


def describe_recipe(record: RecipeRecord, aliases: list[str]) -> str:
    """A flat, greppable description; numbers exactly as the catalog holds them."""
    p = record.parallelism
    lines = [
        f"{record.canonical}: {record.kind} {_value(record.mode)} recipe, {record.family}, "
        f"{_value(record.hf_model_id)}",
        f"TP {_value(p.tp)} PP {_value(p.pp)} VP {_value(p.vp)} CP {_value(p.cp)} EP {_value(p.ep)} "
        f"ETP {_value(p.etp)}; seq {_value(record.seq_length)} GBS {_value(record.global_batch_size)} "
        f"MBS {_value(record.micro_batch_size)}; min GPUs {_value(record.min_gpus)}, "
        f"named GPUs {_value(record.encoded_gpus)} {_value(record.gpu_type)} {_value(record.precision)}",
        f"file {record.source.path}",
    ]
    if aliases:
        lines.insert(1, "also: " + ", ".join(aliases))
    return "\n".join(lines)


def recipe_chunks(catalogs: list[Catalog]) -> list[Chunk]:
    versions_of: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    family_of: dict[tuple[str, str, str], str] = {}
    for catalog in catalogs:
        by_function: dict[tuple[str, str], list[RecipeRecord]] = defaultdict(list)
        for record in catalog.recipes:
            by_function[(record.kind, record.canonical)].append(record)
        for (kind, canonical), records in by_function.items():
            main = next((r for r in records if r.name == canonical), records[0])
            aliases = sorted({r.name for r in records if r.name != canonical} | set(main.aliases))
            key = (kind, canonical, describe_recipe(main, aliases))
            versions_of[key].append(catalog.version)
            family_of[key] = main.family
    return [
        Chunk(
            text=text,
            source=f"catalog/{kind}#{canonical}",
            heading=f"{canonical} ({', '.join(versions)})",
            doc_type="recipe",
            lang="en",
            version=",".join(versions),
            topic=family_of[(kind, canonical, text)],
            part="recipe",
            section=canonical,
        )
        for (kind, canonical, text), versions in sorted(versions_of.items())
    ]
