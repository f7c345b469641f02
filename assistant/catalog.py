"""Load the bundled recipe catalogs, resolve recipe names and detect the user's Megatron-Bridge version.

Catalogs are JSON files written by `python -m ingest.catalog_build` into knowledge_base/catalogs/.
Version detection reads text only (git metadata, package_info.py, pyproject.toml, installed
package metadata); it never imports megatron.bridge.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from assistant.errors import UserError
from assistant.kb import KnowledgeBase, knowledge_base
from assistant.records import Catalog, EnvValue, RecipeRecord, RecipeVariant
from assistant.rules.commands import forward_step
from assistant.rules.versions import normalize_version
from assistant.settings import Settings, get_settings
from assistant.version_resolve import bundled_choice, unknown_version_error


def default_version(settings: Settings | None = None) -> str:
    """The version answers use when none is named or detected (Settings.default_version)."""
    return (settings or get_settings()).default_version


def available_versions(kb: KnowledgeBase | None = None) -> list[str]:
    """Bundled catalog versions, oldest first, "main" last."""
    return (kb or knowledge_base()).catalog_versions()


@lru_cache(maxsize=16)
def _load(kb: KnowledgeBase, version: str) -> Catalog:
    return _with_mixed_precision(_with_forward_steps(kb.catalog_payload(version), kb), kb)


def _forward_step_table(kb: KnowledgeBase) -> tuple[tuple[str, str], ...]:
    table = kb.json("forward_steps.json", required=False)
    return tuple((prefix, step) for prefix, step in table["prefixes"]) if table else ()


def forward_step_of(recipe_name: str, kb: KnowledgeBase | None = None) -> str | None:
    """The non-text forward step Bridge registers for a recipe (VLM, diffusion, audio, omni), or None for a
    text model (forward_steps.json, extracted from Bridge's own recipe->step table)."""
    return forward_step(recipe_name, _forward_step_table(kb or knowledge_base()))


def _with_mixed_precision(catalog: Catalog, kb: KnowledgeBase) -> Catalog:
    """Give the launcher the mixed_precision preset names of its release (extracted from its
    mixed_precision.py by `python -m ingest.mixed_precision`); none when the table does not know it."""
    table = kb.json("mixed_precision.json", required=False)
    if not table:
        return catalog
    presets = table["versions"].get(catalog.version, {}).get("presets", [])
    return catalog.model_copy(
        update={"launcher": catalog.launcher.model_copy(update={"mixed_precision_presets": presets})}
    )


def _with_forward_steps(catalog: Catalog, kb: KnowledgeBase) -> Catalog:
    """Give a launcher that defaults --step_func to the text step (0.3.x-0.5.x) the recipe->step table, kept
    to the steps its --step_func accepts; 0.6.0+ launchers infer the step themselves."""
    flag = next((f for f in catalog.launcher.flags if "--step_func" in f.names), None)
    if flag is None or flag.default is None or not flag.choices:
        return catalog
    steps = [(prefix, step) for prefix, step in _forward_step_table(kb) if step in flag.choices]
    launcher = catalog.launcher.model_copy(update={"forward_steps": steps})
    return catalog.model_copy(update={"launcher": launcher})


def load_catalog(version: str | None = None, kb: KnowledgeBase | None = None) -> Catalog:
    """The catalog of `version` (default: the settings' default version) in `kb` (default: the settings'
    knowledge base); cached per process."""
    kb = kb or knowledge_base()
    version = normalize_version(version or kb.default_version)
    if version not in available_versions(kb):
        raise unknown_version_error(version, available_versions(kb))
    return _load(kb, version)


def _index(version: str | None = None, kb: KnowledgeBase | None = None) -> dict[str, list[RecipeRecord]]:
    """The records of a version's catalog by name, built once per catalog: a 1,000-line estimate batch
    resolves every name twice."""
    kb = kb or knowledge_base()
    load_catalog(version, kb)  # refuses an unknown version in the user's words
    return _indexed(kb, normalize_version(version or kb.default_version))


@lru_cache(maxsize=16)
def _indexed(kb: KnowledgeBase, version: str) -> dict[str, list[RecipeRecord]]:
    by_name: dict[str, list[RecipeRecord]] = {}
    for record in _load(kb, version).recipes:
        by_name.setdefault(record.name, []).append(record)
    return by_name


KINDS = ("library", "benchmark")


def records_named(
    name: str, version: str | None = None, kb: KnowledgeBase | None = None
) -> list[RecipeRecord]:
    """Every record of exactly this name in a version's catalog (a library and a benchmark record may share
    it), from the per-catalog index."""
    return _index(version, kb).get(name, [])


def split_kind(name: str, kind: str | None = None) -> tuple[str, str | None]:
    """`library:NAME` / `benchmark:NAME` -> (NAME, kind); a --kind that contradicts the prefix is refused."""
    head, sep, rest = name.strip().partition(":")
    if not sep or head not in KINDS:
        return name, kind
    if kind is not None and kind != head:
        raise UserError(f"'{name}' names a {head} recipe but --kind is {kind}; drop one of them")
    return rest, head


def resolve_recipe(
    name: str, version: str | None = None, kind: str | None = None, kb: KnowledgeBase | None = None
) -> RecipeRecord:
    """The record of an exact recipe name or alias (`library:NAME`/`benchmark:NAME` qualify it); library
    wins over benchmark when kind is None (resolution_note says so when both exist)."""
    name, kind = split_kind(name, kind)
    if kind is not None and kind not in KINDS:
        raise UserError(f"--kind must be one of {', '.join(KINDS)}, not '{kind}'")
    catalog = load_catalog(version, kb)
    wanted = name.strip().removeprefix("megatron.bridge.recipes.").removesuffix("()")
    matches = [r for r in _index(version, kb).get(wanted, []) if kind is None or r.kind == kind]
    if matches:
        return sorted(matches, key=lambda r: r.kind != "library")[0]
    candidates = sorted({r.name for r in catalog.recipes if kind is None or r.kind == kind})
    close = _closest(wanted, candidates)
    hint = f" Closest names: {', '.join(close)}." if close else ""
    what = f"{kind} recipe" if kind else "recipe"
    raise UserError(f"no {what} named '{wanted}' in Megatron-Bridge {catalog.version}.{hint}")


def resolution_note(
    name: str, record: RecipeRecord, kind: str | None = None, kb: KnowledgeBase | None = None
) -> dict[str, Any]:
    """Which record a recipe name resolved to and how: `ambiguous` when the version has both a library and
    a benchmark recipe of that name and neither --kind nor a `kind:` prefix chose."""
    _, kind = split_kind(name, kind)
    others = sorted(
        {r.kind for r in _index(record.version, kb).get(record.name, []) if r.kind != record.kind}
    )
    ambiguous = bool(others) and kind is None
    if ambiguous:
        note = (
            f"{record.name} is both a library and a benchmark recipe in Megatron-Bridge {record.version}; "
            f"used the {record.kind} one (pass --kind {others[0]} or {others[0]}:{record.name} for the other)"
        )
    else:
        note = f"used the {record.kind} recipe {record.name}" + (f" ({kind}, as asked)" if kind else "")
    return {"kind": record.kind, "ambiguous": ambiguous, "other_kinds": others, "note": note}


def _closest(name: str, candidates: list[str], limit: int = 3) -> list[str]:
    """Names that contain what was typed, then near spellings; nothing rather than unrelated names."""
    key = name.lower()
    containing = [c for c in candidates if len(key) >= 3 and key in c.lower()]
    near = difflib.get_close_matches(name, candidates, n=limit, cutoff=0.6)
    return list(dict.fromkeys(containing[:limit] + near))[:limit]


def find_recipes(
    version: str | None = None,
    family: str | None = None,
    mode: str | None = None,
    kind: str | None = None,
    hf_model_id: str | None = None,
    kb: KnowledgeBase | None = None,
) -> list[RecipeRecord]:
    """Records matching every given filter, in catalog order (kind, name)."""
    catalog = load_catalog(version, kb)
    hf = hf_model_id.lower() if hf_model_id else None
    return [
        r
        for r in catalog.recipes
        if (family is None or r.family == family)
        and (mode is None or r.mode == mode)
        and (kind is None or r.kind == kind)
        and (hf is None or (r.hf_model_id or "").lower() == hf)
    ]


# ---------------------------------------------------------------------------- version detection


def detect_version(path: str | Path | None = None, kb: KnowledgeBase | None = None) -> str | None:
    """The bundled catalog that answers for the Megatron-Bridge at `path` (a checkout or package dir), or
    for the installed `megatron-bridge` distribution when path is None, by the one resolver
    (assistant/version_resolve.py). None when nothing is found or no bundled catalog answers for it."""
    raw = source_version(path)
    if not raw:
        return None
    try:
        return bundled_choice(raw, available_versions(kb)).version
    except UserError:
        return None


def source_version(path: str | Path | None = None) -> str | None:
    """The version string a checkout/package dir (or the installed distribution) declares, unmapped."""
    return _raw_version_from_path(Path(path)) if path is not None else _installed_version()


def _installed_version() -> str | None:
    for dist in ("megatron-bridge", "megatron_bridge"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _raw_version_from_path(path: Path) -> str | None:
    path = path.expanduser()
    if not path.exists():
        raise UserError(f"{path} does not exist; pass a Megatron-Bridge checkout or an installed package dir")
    for reader in (_git_tag, _package_info, _pyproject, _dist_info):
        found = reader(path)
        if found:
            return found
    return None


def _git_tag(path: Path) -> str | None:
    """The exact tag of HEAD, only when `path` is the top of its own repository (not a folder inside ours)."""
    try:
        top = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != path.resolve():
            return None
        result = subprocess.run(
            ["git", "-C", str(path), "describe", "--tags", "--exact-match"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    tag = result.stdout.strip()
    return tag if result.returncode == 0 and re.match(r"v?\d+\.\d+", tag) else None


def _package_info(path: Path) -> str | None:
    for candidate in (
        path / "src/megatron/bridge/package_info.py",
        path / "megatron/bridge/package_info.py",
        path / "package_info.py",
    ):
        if candidate.is_file():
            return _version_from_package_info(candidate.read_text(encoding="utf-8", errors="replace"))
    return None


def _version_from_package_info(text: str) -> str | None:
    """MAJOR/MINOR/PATCH literals (or a literal __version__) of package_info.py, read with ast."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = node.value.value
    if isinstance(values.get("__version__"), str):
        return str(values["__version__"])
    if all(isinstance(values.get(k), int) for k in ("MAJOR", "MINOR", "PATCH")):
        return f"{values['MAJOR']}.{values['MINOR']}.{values['PATCH']}"
    return None


def _pyproject(path: Path) -> str | None:
    candidate = path / "pyproject.toml"
    if not candidate.is_file():
        return None
    match = re.search(
        r'(?m)^version\s*=\s*"([^"]+)"', candidate.read_text(encoding="utf-8", errors="replace")
    )
    return match.group(1) if match else None


def _dist_info(path: Path) -> str | None:
    """site-packages/megatron_bridge-X.dist-info next to an installed megatron/bridge dir."""
    for base in (path, path.parent, path.parent.parent):
        for info in base.glob("megatron_bridge-*.dist-info"):
            match = re.match(r"megatron_bridge-(.+)\.dist-info", info.name)
            if match:
                return match.group(1)
    return None


# ---------------------------------------------------------------------------- calls and environments


def variant_for(record: RecipeRecord, mode: str | None) -> RecipeVariant | None:
    """The recorded call of `record` that trains in `mode` (full SFT: peft=None), if it has one."""
    return next((v for v in record.variants if v.mode == mode), None) if mode else None


def for_goal(record: RecipeRecord, goal: str | None) -> RecipeRecord | None:
    """`record` as called for `goal`: itself when its own call trains that way, else its recorded variant
    for the goal applied (0.3.1 ministral3_8b_finetune_config with peft=None: full SFT at TP 2); None when
    neither does."""
    if goal is None or record.mode == goal:
        return record
    variant = variant_for(record, goal)
    if variant is None:
        return None
    return record.model_copy(
        update={
            "mode": variant.mode,
            "parallelism": variant.parallelism,
            "min_gpus": variant.min_gpus,
            "global_batch_size": variant.global_batch_size,
            "micro_batch_size": variant.micro_batch_size,
            "peft": variant.peft,
            "fields": {**record.fields, **variant.changed},
        }
    )


def on_gpu(record: RecipeRecord, gpu_type: str | None) -> RecipeRecord:
    """`record` with each GPU-dependent field set to its value on `gpu_type` (what upstream's helper sets
    there), and `gpu_dependent[...].assumed` naming that GPU; unchanged when the GPU is not in the table."""
    if not gpu_type or not record.gpu_dependent:
        return record
    known = {path: value for path, value in record.gpu_dependent.items() if gpu_type in value.by_gpu}
    if not known:
        return record
    fields = {**record.fields, **{path: value.by_gpu[gpu_type] for path, value in known.items()}}
    dependent = {
        path: value.model_copy(update={"assumed": gpu_type}) if path in known else value
        for path, value in record.gpu_dependent.items()
    }
    return record.model_copy(update={"fields": fields, "gpu_dependent": dependent})


def gpu_dependent_values(record: RecipeRecord, gpu_type: str | None) -> list[tuple[str, EnvValue, Any]]:
    """(field path, its per-GPU record, the value on `gpu_type` or None when not known) for each field whose
    value differs between GPUs."""
    rows = []
    for path, value in record.gpu_dependent.items():
        if len({json.dumps(v, sort_keys=True) for v in value.by_gpu.values()}) < 2:
            continue
        rows.append((path, value, value.by_gpu.get(gpu_type or "")))
    return rows
