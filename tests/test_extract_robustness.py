"""A hostile source tree is indexed without executing anything, in bounded time and memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.recipes.extract import extract
from ingest.recipes.sources import MAX_FILE_BYTES, open_source

EVIL = """
import os
import subprocess

os.system("touch {marker}/system")
open("{marker}/opened", "w").write("x")
subprocess.run(["touch", "{marker}/subprocess"])
exec("open('{marker}/exec', 'w')")
__import__("os").remove("{marker}/keep")

while True:
    pass

for _ in range(10 ** 12):
    pass

HUGE_STRING = "a" * 10 ** 10
HUGE_LIST = [0] * 10 ** 9
HUGE_POWER = 2 ** 10 ** 10
HUGE_SHIFT = 1 << 10 ** 10


def _recurse(n):
    return _recurse(n + 1)


def _spin():
    while True:
        x = 1


def evil_pretrain_config():
    os.system("touch {marker}/in_recipe")
    cfg = _recurse(0)
    return cfg


def spin_pretrain_config():
    _spin()
    return None


def budget_pretrain_config():
    for i in range(2000):
        for j in range(2000):
            for k in range(2000):
                x = i + j + k
    return x


def deep_pretrain_config():
    return {deep_expression}


__all__ = ["evil_pretrain_config", "spin_pretrain_config", "deep_pretrain_config", "budget_pretrain_config"]
"""

GOOD = """
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def good_pretrain_config():
    cfg = ConfigContainer(train=TrainingConfig(global_batch_size=64))
    cfg.model.tensor_model_parallel_size = 2
    return cfg


__all__ = ["good_pretrain_config"]
"""


@pytest.fixture()
def hostile_tree(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "markers"
    marker.mkdir()
    (marker / "keep").write_text("must survive")
    recipes = tmp_path / "tree" / "src" / "megatron" / "bridge" / "recipes"
    recipes.mkdir(parents=True)
    deep = "(" * 50 + "1" + ")" * 50 + " + 1" * 1_500  # parses, nests 1500 BinOps deep
    (recipes / "evil.py").write_text(EVIL.format(marker=marker, deep_expression=deep))
    (recipes / "deeper.py").write_text("X = 1" + " + 1" * 100_000 + "\n")  # too deep for the parser
    (recipes / "good.py").write_text(GOOD)
    (recipes / "broken.py").write_text("def broken_pretrain_config(:\n    return 1\n")
    (recipes / "nested.py").write_text("X = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    with (recipes / "big.py").open("w") as stream:  # 50 MB
        line = "# " + "x" * 1000 + "\n"
        for _ in range(50 * 1024):
            stream.write(line)
    (recipes / "__init__.py").write_text(
        "from megatron.bridge.recipes.evil import *\n"
        "from megatron.bridge.recipes.good import *\n"
        "from megatron.bridge.recipes.broken import *\n"
        "from megatron.bridge.recipes.nested import *\n"
        "from megatron.bridge.recipes.deeper import *\n"
        "from megatron.bridge.recipes.big import *\n"
    )
    return tmp_path / "tree", marker


@pytest.mark.timeout(120)
def test_hostile_tree_is_indexed_without_side_effects(hostile_tree, monkeypatch) -> None:
    tree_path, marker = hostile_tree
    monkeypatch.chdir(marker)
    extraction = extract(open_source(tree_path), "0.6.0")

    assert sorted(p.name for p in marker.iterdir()) == ["keep"]  # nothing ran, nothing was deleted

    records = {r.name: r for r in extraction.records}
    good = records["good_pretrain_config"]
    assert (good.parallelism.tp, good.global_batch_size) == (2, 64)

    assert "call depth limit" in records["evil_pretrain_config"].unknown["*"]
    assert "budget" in records["budget_pretrain_config"].unknown["*"]
    assert "*" in records["spin_pretrain_config"].unknown  # the while loop is cut off, never run forever
    assert "*" in records["deep_pretrain_config"].unknown

    warnings = "\n".join(extraction.warnings)
    assert "big.py" in warnings and str(MAX_FILE_BYTES) in warnings
    assert "broken.py: cannot parse" in warnings
    assert "nested.py" in warnings and "deeper.py" in warnings  # too deep to parse: skipped, not fatal
    assert "broken_pretrain_config" not in records


def test_size_cap_applies_to_wheels(tmp_path: Path) -> None:
    import zipfile

    wheel = tmp_path / "megatron_bridge-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("megatron/bridge/recipes/__init__.py", "from megatron.bridge.recipes.big import *\n")
        archive.writestr("megatron/bridge/recipes/big.py", "#" * (MAX_FILE_BYTES + 1))
    extraction = extract(open_source(wheel), "9.9.9")
    assert extraction.records == []
    assert any("big.py" in w and "cap" in w for w in extraction.warnings)


def test_resource_bombs_become_unknown() -> None:
    from ingest.recipes.interpreter import Interpreter
    from ingest.recipes.sources import SourceTree
    from ingest.recipes.values import Unknown

    code = b"""
A = "a" * 100000
REPLACED = A.replace("a", A)
JOINED = ",".join([A] * 2000)
FORMATTED = "{:>1000000000}".format(1)
FSTRING = f"{1:>1000000000}"
PERCENT = "%1000000000d" % 1
NESTED = "{0:{1}}".format(1, 1000000000)
DOUBLED = A
for _ in range(100):
    DOUBLED = DOUBLED + DOUBLED
POWER = 10 ** 10 ** 10
"""
    tree = SourceTree(label="bombs", kind="checkout", package_prefix="")
    tree.entries["megatron/bridge/recipes/bombs.py"] = (len(code), lambda: code)
    module = Interpreter(tree).load_module("megatron.bridge.recipes.bombs")
    assert module is not None and len(module.namespace["A"]) == 100_000
    for name in ("REPLACED", "JOINED", "FORMATTED", "FSTRING", "PERCENT", "NESTED", "DOUBLED", "POWER"):
        assert isinstance(module.namespace[name], Unknown), name
