"""Regenerate the bundled recipe catalogs in knowledge_base/catalogs/ from real upstream source.

Usage:
    python -m ingest.catalog_build                      # all bundled versions
    python -m ingest.catalog_build --versions 0.6.0 main
    python -m ingest.catalog_build --git /path/to/Megatron-Bridge/.git \
        --wheel megatron_bridge-0.3.1-py3-none-any.whl

Sources: 0.5.1, 0.6.0 and main come from a Megatron-Bridge git repository (a bare mirror is
fine: the text files a catalog needs are materialised into a temp dir with `git ls-tree` +
`git cat-file --batch`, because `git archive` fails on mirrors with missing large blobs).
0.3.1 is the PyPI wheel (downloaded with `pip download --no-deps` when --wheel is not given);
the wheel has no scripts/, so its launcher and old benchmark configs come from git tag v0.3.1.
Nothing fetched is kept: only the extracted JSON is written, atomically, with each record's `self_check`
(ingest/self_check.py: do the recipe's defaults pass the rule module on its own GPU count?).

Mirrors: --git (or AUTORECIPE_BRIDGE_GIT) is the Megatron-Bridge git dir; --mcore-git (or
AUTORECIPE_MCORE_GIT) the Megatron-LM git dir, read at the commit each release pins as its
3rdparty/Megatron-LM submodule (which TransformerConfig fields exist decides upstream's cuda_graph helpers;
without it those helpers' effects are recorded as unknown).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assistant.kb import knowledge_base
from assistant.records import CatalogSource
from assistant.rules.versions import BUNDLED_VERSIONS
from ingest.layout_builders import annotate as annotate_layout_builders
from ingest.recipes.build import build_catalog, write_catalog
from ingest.recipes.interpreter import McoreFacts
from ingest.recipes.mcore import ENUMS, MODEL_PARALLEL_CONFIG, TRANSFORMER_CONFIG, mcore_facts
from ingest.recipes.sources import SourceTree, open_source
from ingest.self_check import annotate

BRIDGE_GIT_SETTING = "AUTORECIPE_BRIDGE_GIT"
MCORE_GIT_SETTING = "AUTORECIPE_MCORE_GIT"
MCORE_SUBMODULE = "3rdparty/Megatron-LM"
WHEEL_CACHE = Path.home() / ".cache" / "autorecipe" / "wheels"
MATERIALISED_PREFIXES = (
    "src/megatron/bridge/recipes/",
    "src/megatron/bridge/perf_recipes/",
    "src/megatron/bridge/diffusion/recipes/",
    "src/megatron/bridge/models/",
    "src/megatron/bridge/data/builders/",
    "src/megatron/bridge/training/config.py",
    "src/megatron/bridge/training/flex_dispatcher_backend.py",
    "src/megatron/bridge/utils/cuda_graph.py",
    "src/megatron/bridge/package_info.py",
    "scripts/training/",
    "scripts/performance/",
)


@dataclass(frozen=True)
class BundledVersion:
    version: str
    ref: str  # git tag or commit
    from_wheel: bool = False


MAIN_REF = "067f987df03b8355b03192d88d70f1709fedf51a"  # the main commit the "main" catalog is built from
FROM_WHEEL = frozenset({"0.3.1"})  # built from the published wheel, not the tag
BUNDLED = tuple(
    BundledVersion(
        version, MAIN_REF if version == "main" else f"v{version}", from_wheel=version in FROM_WHEEL
    )
    for version in BUNDLED_VERSIONS
)


def bridge_git_dir(given: Path | None = None) -> Path:
    """The Megatron-Bridge git dir from the argument or AUTORECIPE_BRIDGE_GIT; a clear error when neither
    names an existing directory."""
    value = given or (Path(os.environ[BRIDGE_GIT_SETTING]) if os.environ.get(BRIDGE_GIT_SETTING) else None)
    if value is None:
        raise SystemExit(
            f"no Megatron-Bridge git mirror given: pass --git DIR or set {BRIDGE_GIT_SETTING} "
            "(a bare clone of https://github.com/NVIDIA-NeMo/Megatron-Bridge is fine)"
        )
    if not value.is_dir():
        raise SystemExit(
            f"Megatron-Bridge git mirror {value} does not exist (from --git or {BRIDGE_GIT_SETTING})"
        )
    return value


def mcore_git_dir(given: Path | None = None) -> Path | None:
    """The Megatron-LM git dir from the argument or AUTORECIPE_MCORE_GIT, or None when not given."""
    value = given or (Path(os.environ[MCORE_GIT_SETTING]) if os.environ.get(MCORE_GIT_SETTING) else None)
    if value is not None and not value.is_dir():
        raise SystemExit(
            f"Megatron-LM git mirror {value} does not exist (from --mcore-git or {MCORE_GIT_SETTING})"
        )
    return value


def pinned_mcore(git_dir: Path, ref: str, mcore_git: Path | None) -> McoreFacts | None:
    """Facts of the Megatron Core commit `ref` pins as its submodule (None without a Megatron-LM mirror)."""
    if mcore_git is None:
        return None
    entry = _git(git_dir, "ls-tree", ref, MCORE_SUBMODULE).split()
    if len(entry) < 3 or entry[1] != "commit":
        return None
    commit = entry[2]
    try:
        texts = [
            _git(mcore_git, "show", f"{commit}:{path}")
            for path in (TRANSFORMER_CONFIG, MODEL_PARALLEL_CONFIG, ENUMS)
        ]
    except subprocess.CalledProcessError:
        return None
    return mcore_facts(commit, *texts)


def checkout_mcore(path: Path, mcore_git: Path | None) -> McoreFacts | None:
    """Facts of the Megatron Core a Megatron-Bridge checkout pins: from its checked-out submodule when it is
    there, else from the Megatron-LM mirror at the commit the checkout's git records; None without either
    (a wheel, or a plain tree with no mirror)."""
    submodule = path / MCORE_SUBMODULE
    files = [submodule / name for name in (TRANSFORMER_CONFIG, MODEL_PARALLEL_CONFIG, ENUMS)]
    if all(file.is_file() for file in files):
        entry = _git(path, "ls-tree", "HEAD", MCORE_SUBMODULE).split() if (path / ".git").exists() else []
        commit = entry[2] if len(entry) >= 3 else "unknown"
        return mcore_facts(commit, *(file.read_text() for file in files))
    if mcore_git is None or not (path / ".git").exists():
        return None
    try:
        return pinned_mcore(path, "HEAD", mcore_git)
    except subprocess.CalledProcessError:
        return None


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def materialise(git_dir: Path, ref: str, out: Path) -> str:
    """Write the .py files a catalog needs at `ref` under `out`; returns the commit id."""
    commit = _git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
    listing = _git(git_dir, "ls-tree", "-r", commit)
    wanted: list[tuple[str, str]] = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _, kind, blob = meta.split()
        if kind == "blob" and path.endswith(".py") and path.startswith(MATERIALISED_PREFIXES):
            wanted.append((blob, path))
    batch = subprocess.Popen(
        ["git", "-C", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert batch.stdin is not None and batch.stdout is not None
    batch.stdin.write("".join(f"{blob}\n" for blob, _ in wanted).encode())
    batch.stdin.close()
    for _, path in wanted:
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    batch.wait()
    return commit


def download_wheel(version: str, cache: Path = WHEEL_CACHE) -> Path:
    """The megatron-bridge wheel for `version`, fetched once with pip into `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    pattern = f"megatron_bridge-{version}-*.whl"
    found = sorted(cache.glob(pattern))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                f"megatron-bridge=={version}",
                "-d",
                str(cache),
            ],
            check=True,
            capture_output=True,
        )
        found = sorted(cache.glob(pattern))
    if not found:
        raise FileNotFoundError(f"pip download did not produce {pattern} in {cache}")
    return found[0]


def with_scripts(tree: SourceTree, scripts_from: SourceTree) -> SourceTree:
    """`tree` plus the scripts/ files of another tree (the wheel lacks them)."""
    merged = SourceTree(
        label=tree.label,
        kind=tree.kind,
        package_prefix=tree.package_prefix,
        entries=dict(tree.entries),
        warnings=tree.warnings,
    )
    merged.entries.update({p: e for p, e in scripts_from.entries.items() if p.startswith("scripts/")})
    return merged


def build_version(
    bundled: BundledVersion, git_dir: Path, wheel: Path | None, out_dir: Path, mcore_git: Path | None = None
) -> Path:
    mcore = pinned_mcore(git_dir, bundled.ref, mcore_git)
    with tempfile.TemporaryDirectory(prefix=f"autorecipe-{bundled.version}-") as temp:
        commit = materialise(git_dir, bundled.ref, Path(temp))
        git_tree = open_source(temp)
        if bundled.from_wheel:
            wheel = wheel or download_wheel(bundled.version)
            tree = with_scripts(open_source(wheel), git_tree)
            source = CatalogSource(
                kind="wheel", ref=f"megatron-bridge=={bundled.version} ({wheel.name})", commit=commit
            )
            notes = [
                f"recipes read from the PyPI wheel; the wheel has no scripts/, so the launcher and the "
                f"scripts/performance benchmark configs come from git tag {bundled.ref} ({commit[:9]})"
            ]
            catalog = build_catalog(
                tree, bundled.version, source, launcher_tree=git_tree, notes=notes, mcore=mcore
            )
        else:
            source = CatalogSource(kind="git", ref=bundled.ref, commit=commit)
            catalog = build_catalog(git_tree, bundled.version, source, mcore=mcore)
        if not bundled.from_wheel:
            # The layout builder each recipe registers for run_recipe.py (private, so not extracted).
            catalog = annotate_layout_builders(catalog, git_dir)
        # Each record says whether its own defaults pass the rule module on its own GPUs.
        return write_catalog(annotate(catalog), out_dir / f"{bundled.version}.json")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--git",
        type=Path,
        default=None,
        help=f"Megatron-Bridge git dir (bare is fine; else ${BRIDGE_GIT_SETTING})",
    )
    parser.add_argument(
        "--mcore-git", type=Path, default=None, help=f"Megatron-LM git dir (else ${MCORE_GIT_SETTING})"
    )
    parser.add_argument(
        "--wheel", type=Path, default=None, help="megatron_bridge-0.3.1 wheel (else pip download)"
    )
    parser.add_argument("--versions", nargs="*", default=[b.version for b in BUNDLED])
    parser.add_argument("--out", type=Path, default=knowledge_base().catalog_dir)
    args = parser.parse_args(argv)
    known = {b.version: b for b in BUNDLED}
    git_dir, mcore_git = bridge_git_dir(args.git), mcore_git_dir(args.mcore_git)
    if mcore_git is None:
        print(f"warning: no Megatron-LM git (--mcore-git, ${MCORE_GIT_SETTING}); cuda_graph effects unknown")
    for version in args.versions:
        if version not in known:
            parser.error(f"unknown version {version}; bundled: {', '.join(known)}")
        path = build_version(known[version], git_dir, args.wheel, args.out, mcore_git)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
