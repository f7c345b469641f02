"""Catalog build step: does each recipe's own config pass the rule module on its own GPUs?

For every record, the rule module (assistant/rules/validate.py) runs on the recipe's defaults at the GPU
count its name encodes (else the minimum world size of its layout) and the result is stored on the record as
`self_check` (see assistant/records.py SelfCheck): `passes`, `gpus`, `gpu_type`, `failing_rules`, the
upstream error texts those checks raise, and a `fix` the rule module re-validates. A recipe that fails is
"broken in this release"; answers that name it say so. ingest/catalog_build.py calls `annotate` before
writing; to re-annotate the bundled catalogs without re-extracting them:

    python -m ingest.self_check                 # every bundled version
    python -m ingest.self_check --versions 0.6.0
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from assistant.kb import knowledge_base
from assistant.models import recipe_arch
from assistant.records import Catalog
from assistant.rules.repair import self_check
from assistant.rules.versions import version_key
from ingest.recipes.build import write_catalog


def annotate(catalog: Catalog) -> Catalog:
    """The catalog with `self_check` set on every record (records themselves are not changed otherwise)."""
    hardware = knowledge_base().hardware
    recipes = [
        record.model_copy(
            update={
                "self_check": self_check(
                    record, recipe_arch(record, knowledge_base()), catalog.version, hardware=hardware
                )
            }
        )
        for record in catalog.recipes
    ]
    return catalog.model_copy(update={"recipes": recipes})


def broken(catalog: Catalog) -> list[str]:
    """Names of the recipes whose defaults fail on their own GPUs."""
    return sorted(r.name for r in catalog.recipes if r.self_check is not None and not r.self_check.passes)


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--versions", nargs="*", help="Default: every catalog in --dir.")
    parser.add_argument("--dir", type=Path, default=knowledge_base().catalog_dir)
    args = parser.parse_args(list(argv) if argv is not None else None)
    args.versions = args.versions or sorted((p.stem for p in args.dir.glob("*.json")), key=version_key)
    for version in args.versions:
        path = args.dir / f"{version}.json"
        catalog = annotate(Catalog(**json.loads(path.read_text(encoding="utf-8"))))
        write_catalog(catalog, path)
        names = broken(catalog)
        print(f"{version}: {len(names)} of {len(catalog.recipes)} fail their own check: {', '.join(names)}")


if __name__ == "__main__":
    main()
