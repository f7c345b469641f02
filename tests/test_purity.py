"""rules/ and estimate/ do no I/O: their functions, run on real catalog records with the data loaded
beforehand, open no file, list no directory and start no process (a `sys.addaudithook` hook watches).

A lazy import inside one of their functions would open a .py file and fail here too. Above them, the
library modules of assistant/ take the KnowledgeBase as an argument instead of looking up the settings' one.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from assistant.catalog import load_catalog
from assistant.estimate.features import RunFeatures, features_from_fields
from assistant.estimate.memory import estimate_memory
from assistant.estimate.run import RunSettings
from assistant.estimate.throughput import estimate_throughput
from assistant.kb import knowledge_base
from assistant.models import load_model_arch, recipe_arch
from assistant.planning.resize import resize
from assistant.records import Cluster, Plan
from assistant.rules.classify import classify
from assistant.rules.commands import choose_dataset, commands
from assistant.rules.config import build_config, parse_overrides
from assistant.rules.repair import errors_of, self_check
from assistant.rules.validate import validate

# Audit events that touch files, directories, processes or the network.
IO_EVENTS = frozenset(
    {"open", "os.listdir", "os.scandir", "os.remove", "os.rename", "glob.glob", "shutil.copyfile",
     "subprocess.Popen", "os.system", "socket.connect", "urllib.Request", "import"}
)  # fmt: skip
_ARMED: list[list[tuple[str, tuple]]] = []  # the audit hook cannot be removed, so it records only when armed


def _hook(event: str, args: tuple) -> None:
    if _ARMED and event in IO_EVENTS:
        _ARMED[-1].append((event, args[:1]))


sys.addaudithook(_hook)


@contextmanager
def no_io() -> Iterator[list[tuple[str, tuple]]]:
    """Record the I/O events raised inside the block."""
    events: list[tuple[str, tuple]] = []
    _ARMED.append(events)
    try:
        yield events
    finally:
        _ARMED.pop()


def test_the_hook_sees_a_file_being_opened(tmp_path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("x")
    with no_io() as events:
        path.read_text()
    assert [event for event, _ in events] == ["open"]


def _cases(version: str, limit: int) -> list[tuple]:
    """(record, arch, cluster, plan) for the first `limit` recipes with an architecture and a plan."""
    kb = knowledge_base()
    out = []
    for record in load_catalog(version).recipes:
        arch = recipe_arch(record, knowledge_base())
        if arch is None:
            continue
        gpu = record.gpu_type if record.gpu_type in kb.hardware else "h100"
        cluster = Cluster(num_gpus=record.encoded_gpus or record.min_gpus or 8, gpu_type=gpu)
        result = resize(record, arch, cluster, version=version, kb=knowledge_base())
        if result.plan is not None:
            out.append((record, arch, cluster, result.plan))
        if len(out) == limit:
            break
    return out


@pytest.mark.parametrize("version", ["0.5.1", "0.6.0"])
def test_rules_do_no_io(version: str) -> None:
    kb = knowledge_base()
    catalog = load_catalog(version)
    cases = _cases(version, 25)
    specs = {case[2].gpu_type: kb.gpu_spec(case[2].gpu_type) for case in cases}
    hardware = kb.hardware
    assert cases
    # Hydra's grammar is imported lazily (a module import, not data I/O): load it first
    parse_overrides(["model.tensor_model_parallel_size=2"])
    with no_io() as events:
        for record, arch, cluster, plan in cases:
            config = build_config(record, ["train.micro_batch_size=1"], version=version)
            validate(config, arch, cluster, version, catalog.launcher, gpu=specs[cluster.gpu_type])
            dataset = choose_dataset(version, record.mode, catalog.launcher, vlm=arch.is_vlm)
            commands(version, record, plan, cluster, dataset, catalog.launcher, {"model.seq_length": 4096})
            errors_of(record, {}, arch, cluster, version, catalog.launcher, hardware=hardware)
            self_check(record, arch, version, hardware=hardware)
            classify("model.tensor_model_parallel_size", 2)
            parse_overrides(["model.tensor_model_parallel_size=2", "peft=lora"])
    assert events == []


def test_estimators_do_no_io() -> None:
    kb = knowledge_base()
    cases = _cases("0.6.0", 25)
    specs = {case[2].gpu_type: kb.gpu_spec(case[2].gpu_type) for case in cases}
    calibration, overheads = kb.calibration, kb.memory_overheads
    dense = load_model_arch("meta-llama/Meta-Llama-3-8B", kb=knowledge_base())
    assert dense is not None
    fsdp = Plan.sized(num_gpus=8, tp=1, pp=1, cp=1, mbs=1, gbs=8, vp=None, ep=1, etp=None, sp=False)
    with no_io() as events:
        for record, arch, _cluster, plan in cases:
            run = RunSettings(
                seq_length=record.seq_length or 4096,
                mode=record.mode or "pretrain",
                precision=record.precision or "bf16",
                features=features_from_fields(record.fields),
            )
            hw = specs[_cluster.gpu_type]
            estimate_memory(arch, plan, hw, run, overheads=overheads)
            if not hw.peaks_unknown:
                estimate_throughput(arch, plan, hw, run, calibration=calibration)
        offload = RunSettings(seq_length=4096, fsdp=True, offload_layers=8, features=RunFeatures())
        estimate_memory(dense, fsdp, kb.gpu_spec("gb200"), offload, overheads=overheads)
        estimate_throughput(dense, fsdp, kb.gpu_spec("gb200"), offload, calibration=calibration)
        estimate_memory(dense, fsdp, kb.gpu_spec("h100"), RunSettings(seq_length=4096, mode="peft"))
    assert events == []


GLOBAL_READERS = ("assistant.settings", "assistant.kb", "assistant.catalog", "assistant.models")
PURE_PACKAGES = (Path("assistant/rules"), Path("assistant/estimate"))


def global_reads(source: str) -> list[str]:
    """Imports (top-level or inside a function) of a module that reads settings or knowledge_base/."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        found += [f"line {node.lineno}: {name}" for name in names if name.startswith(GLOBAL_READERS)]
    return found


def test_the_global_read_check_sees_one() -> None:
    planted = "def f():\n    from assistant.kb import knowledge_base\n    return knowledge_base()\n"
    assert global_reads(planted) == ["line 2: assistant.kb"]


def test_rules_and_estimators_get_their_data_passed_in() -> None:
    """No module of rules/ or estimate/ imports the settings or the knowledge base: the caller builds the
    KnowledgeBase once from Settings and passes the records down."""
    offenders = {
        str(path): reads
        for package in PURE_PACKAGES
        for path in sorted(package.rglob("*.py"))
        if (reads := global_reads(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


# Where the settings' knowledge base may be looked up: the reader itself, the catalog and glossary readers
# (their `kb` argument defaults to it for the CLI, the retriever and tests), the retriever factory (settings
# default to the environment's) and the service, which resolves it once per turn from the Settings it is
# given. Every other module of assistant/ gets it passed in.
KB_LOOKUPS_ALLOWED = {
    "assistant/kb.py",
    "assistant/catalog.py",
    "assistant/lexical.py",
    "assistant/retrieval.py",
    "assistant/service.py",
}


def settings_kb_lookups(source: str) -> list[str]:
    """Calls of `knowledge_base()` / `get_settings()`: the global lookups a passed-in kb replaces."""
    found = []
    for node in ast.walk(ast.parse(source)):
        func = node.func if isinstance(node, ast.Call) else None
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("knowledge_base", "get_settings"):
            found.append(f"line {node.lineno}: {name}()")
    return found


def test_the_lookup_check_sees_one() -> None:
    planted = "def f(x):\n    return x or knowledge_base()\n"
    assert settings_kb_lookups(planted) == ["line 2: knowledge_base()"]


def test_library_modules_get_the_knowledge_base_passed_in() -> None:
    """The planning layer, the recommender, the troubleshooter and the tables take the KnowledgeBase as an
    argument: one built from other Settings reaches every fact of the answer."""
    offenders = {
        str(path): calls
        for path in sorted(Path("assistant").rglob("*.py"))
        if str(path) not in KB_LOOKUPS_ALLOWED
        and (calls := settings_kb_lookups(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


# The knowledge base's own files and folders: a module that joins one of these names to a path, imports the
# bundled directory or reads `Settings.knowledge_base` is reading knowledge_base/ behind the reader's back.
KB_ENTRIES = frozenset(p.name for p in Path("knowledge_base").iterdir()) - {
    "__init__.py",
    "README.md",
    "__pycache__",
}
KB_PATH_ALLOWED = {"assistant/kb.py", "assistant/settings.py"}  # the reader, and where its root is resolved


def kb_path_uses(source: str) -> list[str]:
    """Places that build or take a knowledge_base/ path instead of asking the KnowledgeBase for the data."""
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "knowledge_base" and id(node) not in called:
            found.append(f"line {line}: .knowledge_base")
        elif isinstance(node, ast.ImportFrom) and (
            node.module == "knowledge_base" or any(a.name == "KNOWLEDGE_BASE" for a in node.names)
        ):
            found.append(f"line {line}: import {node.module}")
        elif isinstance(node, ast.Import) and any(a.name == "knowledge_base" for a in node.names):
            found.append(f"line {line}: import knowledge_base")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [side.value for side in (node.left, node.right) if isinstance(side, ast.Constant)]
            named = [p for p in parts if isinstance(p, str) and (p == "knowledge_base" or p in KB_ENTRIES)]
            found.extend(f'line {line}: / "{p}"' for p in named)
    return found


def test_the_kb_path_check_sees_them() -> None:
    planted = (
        "from assistant.settings import KNOWLEDGE_BASE\n"
        "def f(settings, root):\n"
        '    a = settings.knowledge_base / "x"\n'
        '    b = root / "topics.json"\n'
        '    return Path(__file__).parent / "knowledge_base" / "guide", a, b\n'
    )
    assert sorted(kb_path_uses(planted)) == [
        "line 1: import assistant.settings",
        "line 3: .knowledge_base",
        'line 4: / "topics.json"',
        'line 5: / "guide"',
        'line 5: / "knowledge_base"',
    ]
    assert kb_path_uses('def f(kb):\n    return kb.json("topics.json"), knowledge_base(settings)\n') == []


def test_only_the_reader_opens_knowledge_base_files() -> None:
    """assistant/ and ui/ read knowledge_base/ through the KnowledgeBase (assistant/kb.py) alone: no module
    takes `Settings.knowledge_base`, imports the bundled directory or joins one of its file names to a path,
    so AUTORECIPE_KNOWLEDGE_BASE moves every table and one reader caches them."""
    offenders = {
        str(path): uses
        for package in (Path("assistant"), Path("ui"))
        for path in sorted(package.rglob("*.py"))
        if str(path) not in KB_PATH_ALLOWED and (uses := kb_path_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
