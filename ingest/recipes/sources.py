"""Read-only views of a Megatron-Bridge source: a checkout, an installed package dir or a wheel.

A view maps module names to file texts and never imports anything. Files above a size cap are
skipped with a warning, so a hostile tree cannot make the extractor read gigabytes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_FILE_BYTES = 2_000_000

# The only subpackages whose code the interpreter follows; other imports become opaque names.
INDEXED_PACKAGES = (
    "megatron.bridge.recipes",
    "megatron.bridge.perf_recipes",
    "megatron.bridge.diffusion.recipes",
    "megatron.bridge.models",
    "megatron.bridge.package_info",
    # Environment-dependent config helpers recipes call last (run per environment, interpreter.py).
    "megatron.bridge.training.flex_dispatcher_backend",
    "megatron.bridge.utils.cuda_graph",
)


@dataclass
class SourceTree:
    """Relative posix paths -> (size, reader); `package_prefix` is where `megatron/` sits."""

    label: str
    kind: str  # "checkout" | "installed" | "wheel"
    package_prefix: str  # "src/" for a checkout, "" for a wheel or an installed dir
    entries: dict[str, tuple[int, Callable[[], bytes]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def has(self, relpath: str) -> bool:
        return relpath in self.entries

    def read_text(self, relpath: str) -> str | None:
        """File text, or None (with a warning) when missing, oversized or not UTF-8."""
        entry = self.entries.get(relpath)
        if entry is None:
            return None
        size, reader = entry
        if size > MAX_FILE_BYTES:
            self.warnings.append(f"skipped {relpath}: {size} bytes exceeds the {MAX_FILE_BYTES}-byte cap")
            return None
        try:
            return reader().decode("utf-8")
        except (OSError, UnicodeDecodeError, zipfile.BadZipFile) as error:
            self.warnings.append(f"skipped {relpath}: {error}")
            return None

    def paths_under(self, prefix: str) -> list[str]:
        return sorted(p for p in self.entries if p.startswith(prefix))

    def module_file(self, module: str, root: str) -> tuple[str, bool] | None:
        """(relpath, is_package) of `module` under `root` (a dir prefix ending in '/'), if present."""
        base = root + module.replace(".", "/")
        if f"{base}/__init__.py" in self.entries:
            return f"{base}/__init__.py", True
        if f"{base}.py" in self.entries:
            return f"{base}.py", False
        return None


def _file_reader(path: Path) -> Callable[[], bytes]:
    return path.read_bytes


def _from_directory(root: Path, label: str, kind: str, package_prefix: str, base: Path) -> SourceTree:
    tree = SourceTree(label=label, kind=kind, package_prefix=package_prefix)
    for path in sorted(base.rglob("*.py")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = PurePosixPath(path.relative_to(root)).as_posix()
        tree.entries[rel] = (path.stat().st_size, _file_reader(path))
    return tree


def _zip_reader(archive: zipfile.ZipFile, name: str) -> Callable[[], bytes]:
    return lambda: archive.read(name)


def open_source(path: str | Path) -> SourceTree:
    """A view of a checkout (has src/megatron/bridge), a `megatron/bridge` dir, or a .whl file."""
    path = Path(path).expanduser()
    if path.is_file() and path.suffix in {".whl", ".zip"}:
        archive = zipfile.ZipFile(path)
        tree = SourceTree(label=str(path), kind="wheel", package_prefix="")
        for info in archive.infolist():
            if info.filename.endswith(".py") and info.filename.startswith("megatron/bridge/"):
                tree.entries[info.filename] = (info.file_size, _zip_reader(archive, info.filename))
        return tree
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a directory nor a wheel file")
    if (path / "src" / "megatron" / "bridge").is_dir():
        tree = _from_directory(path, str(path), "checkout", "src/", path / "src" / "megatron" / "bridge")
        scripts = path / "scripts"
        if scripts.is_dir():
            tree.entries.update(_from_directory(path, "", "checkout", "", scripts).entries)
        return tree
    if (path / "megatron" / "bridge").is_dir():
        return _from_directory(path, str(path), "installed", "", path / "megatron" / "bridge")
    if path.name == "bridge" and path.parent.name == "megatron":
        root = path.parent.parent
        return _from_directory(root, str(path), "installed", "", path)
    raise FileNotFoundError(
        f"{path} holds no megatron/bridge package (expected src/megatron/bridge, megatron/bridge or a wheel)"
    )
