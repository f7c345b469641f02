"""Print how long the static extractor takes on a whole Megatron-Bridge tree (target: <= 5 s on 2 cores).

Usage:
    python benchmarks/bench_extract.py                  # every bundled version from the git mirror
    python benchmarks/bench_extract.py PATH [PATH ...]  # checkouts, megatron/bridge dirs or wheels
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.catalog_build import BUNDLED, bridge_git_dir, materialise, mcore_git_dir, pinned_mcore  # noqa: E402
from ingest.recipes.extract import extract  # noqa: E402
from ingest.recipes.interpreter import McoreFacts  # noqa: E402
from ingest.recipes.launcher import read_launcher  # noqa: E402
from ingest.recipes.sources import open_source  # noqa: E402


def bench(path: Path, label: str, mcore: McoreFacts | None = None) -> None:
    gc.collect()  # do not charge this run for the previous run's garbage
    start = time.perf_counter()
    tree = open_source(path)
    extraction = extract(tree, label, mcore=mcore)
    middle = time.perf_counter()
    read_launcher(tree)
    end = time.perf_counter()
    library = sum(1 for r in extraction.records if r.kind == "library")
    benchmark = len(extraction.records) - library
    print(
        f"{label:>8}: extract {middle - start:5.2f} s ({library} library + {benchmark} benchmark records), "
        f"launcher {end - middle:4.2f} s, total {end - start:5.2f} s  [{path}]"
    )


def main() -> None:
    print(f"cpus available: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.1f}")
    if len(sys.argv) > 1:
        for arg in sys.argv[1:]:
            bench(Path(arg), Path(arg).name)
        return
    git_dir, mcore_git = bridge_git_dir(), mcore_git_dir()  # AUTORECIPE_BRIDGE_GIT, AUTORECIPE_MCORE_GIT
    for bundled in BUNDLED:
        with tempfile.TemporaryDirectory() as temp:
            materialise(git_dir, bundled.ref, Path(temp))
            bench(Path(temp), bundled.version, pinned_mcore(git_dir, bundled.ref, mcore_git))


if __name__ == "__main__":
    main()
