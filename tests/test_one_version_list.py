"""The bundled version list and the default version are written once, in assistant/rules/versions.py.

Every other module derives from BUNDLED_VERSIONS / DEFAULT_VERSION; a second literal list (a tuple, list,
set or Literal[...] naming two or more bundled versions) or a second "0.6.0" default would drift when a
release is added. Data tables keyed by version (dict keys) are fine.
"""

from __future__ import annotations

import ast
from pathlib import Path

from assistant.rules.versions import BUNDLED_VERSIONS, DEFAULT_VERSION

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant", "ingest", "ui", "evals", "benchmarks")
HOME = Path("assistant/rules/versions.py")
VERSIONS = set(BUNDLED_VERSIONS)


def version_literals(source: str) -> list[str]:
    """Where `source` writes a version list or the default version itself, as "line N: what"."""
    tree = ast.parse(source)
    dict_keys = {id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys if key}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            named = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in VERSIONS]
            if len(named) >= 2:
                found.append(f"line {node.lineno}: a list of versions {named}")
        elif isinstance(node, ast.Constant) and node.value == DEFAULT_VERSION and id(node) not in dict_keys:
            found.append(f"line {node.lineno}: the default version {DEFAULT_VERSION!r}")
    return found


def test_the_detector_finds_a_second_list_and_a_second_default() -> None:
    planted = 'A = ("0.5.1", "main")\nB: Literal["0.3.1", "0.6.0"]\ndef f(v="0.6.0"): ...\nT = {"0.6.0": 1}\n'
    found = version_literals(planted)
    assert sorted(f.split(":")[0] for f in found) == ["line 1", "line 2", "line 2", "line 3"], found


def test_versions_are_listed_in_one_module() -> None:
    offenders = [
        f"{path.relative_to(REPO)} {where}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path.relative_to(REPO) != HOME
        for where in version_literals(path.read_text(encoding="utf-8"))
    ]
    hint = "use assistant.rules.versions.BUNDLED_VERSIONS / DEFAULT_VERSION:\n"
    assert not offenders, hint + "\n".join(offenders)
