"""Catalog rows -> retrievable recipe-table passages (one per recipe function and version)."""

from __future__ import annotations

from collections import defaultdict

from assistant.records import Catalog, RecipeRecord
from ingest.docs import Chunk


def _value(value) -> str:
    return "unset" if value is None else str(value)


def describe_recipe(record: RecipeRecord, aliases: list[str]) -> str:
    """A flat, greppable description; numbers exactly as the catalog holds them."""
    p = record.parallelism
    lines = [
        f"Recipe {record.canonical} ({record.kind} recipe, Megatron-Bridge {record.version})",
        f"family {record.family}; mode {_value(record.mode)}; HF model {_value(record.hf_model_id)}",
        f"TP {_value(p.tp)} PP {_value(p.pp)} VP {_value(p.vp)} CP {_value(p.cp)} EP {_value(p.ep)} "
        f"ETP {_value(p.etp)} SP {_value(p.sp)}",
        f"seq_length {_value(record.seq_length)}; global_batch_size {_value(record.global_batch_size)}; "
        f"micro_batch_size {_value(record.micro_batch_size)}",
        f"min GPUs {_value(record.min_gpus)}; GPUs in name {_value(record.encoded_gpus)}; "
        f"GPU {_value(record.gpu_type)}; precision {_value(record.precision)}",
        f"source {record.source.path}:{record.source.line}",
    ]
    if aliases:
        lines.insert(1, "also exported as: " + ", ".join(aliases))
    return "\n".join(lines)


def recipe_chunks(catalog: Catalog) -> list[Chunk]:
    by_function: dict[tuple[str, str], list[RecipeRecord]] = defaultdict(list)
    for record in catalog.recipes:
        by_function[(record.kind, record.canonical)].append(record)
    chunks = []
    for (kind, canonical), records in sorted(by_function.items()):
        main = next((r for r in records if r.name == canonical), records[0])
        aliases = sorted({r.name for r in records if r.name != canonical} | set(main.aliases))
        chunks.append(
            Chunk(
                text=describe_recipe(main, aliases),
                source=f"catalog/{catalog.version}/{kind}#{canonical}",
                heading=f"{canonical} ({catalog.version})",
                doc_type="recipe",
                lang="en",
                version=catalog.version,
                topic=main.family,
                part="recipe",
            )
        )
    return chunks
