"""Upstream's recipe unit tests as an oracle: their literal assertions on recipe defaults, read with `ast`.

For each bundled version, every test module under tests/unit_tests/recipes/ (and the perf-recipe tests)
is walked without importing it. A test that builds a config from a recipe (`cfg = qwen3_8b_sft_config()`,
`cfg = module.fn(**overrides)`, a function from a parametrised table or a module-level list) and then
asserts a field against a literal (`assert cfg.model.tensor_model_parallel_size == 2`, `is None`,
`isinstance(cfg.peft, LoRA)`) gives one row: recipe, the keyword arguments it was called with, the
environment the test sets up (no CUDA, a fake AutoBridge, the flex-dispatcher helper patched out), the
field path and the expected value. Assert helpers (`_assert_basic_config(cfg)`) are inlined, parametrised
tables expanded, `if` tests decided where the parameters decide them. Assertions made after the test
changed the config (an assignment to it, a call that receives it) are left out and counted, as are
assertions that are not a comparison with a literal.

    python -m ingest.recipes.oracle --git BRIDGE_GIT [--out knowledge_base/recipe_oracle.json]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import itertools
import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.kb import knowledge_base
from ingest.atomic import write_atomic

TEST_ROOTS = ("tests/unit_tests/recipes/", "tests/unit_tests/perf_recipes/")
MAX_ROWS = 400  # parametrised rows per test
UNKNOWN = object()  # a value the walk cannot know
NOT_KNOWN = "<not known statically>"  # in a recorded call: an argument whose value the walk cannot know
# Calls that read a config without changing it.
READERS = {"isinstance", "getattr", "hasattr", "len", "print", "type", "id", "str", "repr", "vars", "list"}
ENV_NO_CUDA, ENV_FAKE_BRIDGE, ENV_HELPER_OFF = "no_cuda", "fake_autobridge", "helper_patched_out"
# The sections of a ConfigContainer: an assertion on anything else is about another config (a dataset helper).
CONFIG_SECTIONS = {
    "model",
    "train",
    "dataset",
    "optimizer",
    "scheduler",
    "ddp",
    "dist",
    "logger",
    "tokenizer",
    "checkpoint",
    "mixed_precision",
    "peft",
    "comm_overlap",
    "rng",
    "profiling",
    "ft",
    "straggler",
    "nvrx_straggler",
    "rerun_state_machine",
    "inprocess_restart",
    "validation",
    "tensor_inspect",
    "optimizer_config_override_provider",
}
RECIPE_PACKAGES = (
    "megatron.bridge.recipes",
    "megatron.bridge.perf_recipes",
    "megatron.bridge.diffusion.recipes",
)


@dataclass
class Func:
    """A recipe function named by a test: the module it is read from and its name there."""

    module: str
    name: str


@dataclass
class Module:
    dotted: str


@dataclass
class Cfg:
    """A config a test built: from which recipe, with which keyword arguments, whether it changed since."""

    func: Func
    call: dict[str, Any] | None
    env: set[str]
    mutated: bool = False


@dataclass
class Walk:
    """What one test module yields."""

    path: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class TestModule:
    """The module-level names of one test file and a small evaluator for its test functions."""

    def __init__(self, path: str, tree: ast.Module):
        self.walk = Walk(path)
        self.names: dict[str, Any] = {}
        self.helpers: dict[str, ast.FunctionDef] = {}
        self.autouse_env: set[str] = set()
        self.tests: list[tuple[str, ast.FunctionDef, dict[str, ast.FunctionDef]]] = []
        for stmt in tree.body:
            self._top(stmt)

    # ------------------------------------------------------------------ module level

    def _top(self, stmt: ast.stmt) -> None:
        if _bind_import(stmt, self.names):
            return
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is not None:
                value = self.ev(stmt.value, {})
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.names[target.id] = value
        elif isinstance(stmt, ast.FunctionDef):
            if stmt.name.startswith("test"):
                self.tests.append((stmt.name, stmt, {}))
            else:
                self.helpers[stmt.name] = stmt
                if any("autouse=True" in ast.unparse(d) for d in stmt.decorator_list):
                    self.autouse_env |= self._env_of(stmt.body)
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            methods = {s.name: s for s in stmt.body if isinstance(s, ast.FunctionDef)}
            for name, method in methods.items():
                if name.startswith("test"):
                    self.tests.append((f"{stmt.name}.{name}", method, methods))
                elif any("autouse=True" in ast.unparse(d) for d in method.decorator_list):
                    self.autouse_env |= self._env_of(method.body)

    def _env_of(self, body: list[ast.stmt]) -> set[str]:
        text = "\n".join(ast.unparse(s) for s in body)
        return _env_from_text(text)

    # ------------------------------------------------------------------ expressions

    def ev(self, node: ast.expr, local: dict[str, Any]) -> Any:
        """A literal, a list/dict of them, a Func or Module; UNKNOWN otherwise."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in local:
                return local[node.id]
            return self.names.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            base = self.ev(node.value, local)
            if isinstance(base, Module):
                if node.attr.endswith("_config") and node.attr == node.attr.lower():
                    return Func(base.dotted, node.attr)
                return Module(f"{base.dotted}.{node.attr}")
            return UNKNOWN
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = [self.ev(e, local) for e in node.elts]
            return items if isinstance(node, ast.List | ast.Set) else tuple(items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return UNKNOWN
            keys = [self.ev(k, local) for k in node.keys]  # type: ignore[arg-type]
            if not all(isinstance(k, str) for k in keys):
                return UNKNOWN
            return {k: self.ev(v, local) for k, v in zip(keys, node.values, strict=True)}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.ev(node.operand, local)
            return -value if isinstance(value, int | float) and not isinstance(value, bool) else UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node, local)
        if isinstance(node, ast.Subscript):
            container, key = self.ev(node.value, local), self.ev(node.slice, local)
            if (
                isinstance(container, list | tuple)
                and isinstance(key, int)
                and -len(container) <= key < len(container)
            ):
                return container[key]
            if isinstance(container, dict) and isinstance(key, str):
                return container.get(key, UNKNOWN)
            return UNKNOWN
        if isinstance(node, ast.JoinedStr):
            parts = [
                v.value if isinstance(v, ast.Constant) else self.ev(v.value, local)
                for v in node.values
                if isinstance(v, ast.Constant | ast.FormattedValue)
            ]
            return "".join(str(p) for p in parts) if all(_is_json(p) for p in parts) else UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node, local)
        if isinstance(node, ast.BoolOp):
            values = [self.ev(v, local) for v in node.values]
            if any(v is UNKNOWN for v in values):
                return UNKNOWN
            return all(values) if isinstance(node.op, ast.And) else any(values)
        return UNKNOWN

    def _compare(self, node: ast.Compare, local: dict[str, Any]) -> Any:
        left, right = self.ev(node.left, local), self.ev(node.comparators[0], local)
        if left is UNKNOWN or right is UNKNOWN or isinstance(left, Func | Module | Cfg):
            return UNKNOWN
        op = node.ops[0]
        try:
            if isinstance(op, ast.Eq):
                return left == right
            if isinstance(op, ast.NotEq):
                return left != right
            if isinstance(op, ast.Is):
                return left is right
            if isinstance(op, ast.IsNot):
                return left is not right
            if isinstance(op, ast.In):
                return left in right
            if isinstance(op, ast.NotIn):
                return left not in right
        except TypeError:
            return UNKNOWN
        return UNKNOWN

    def _call(self, node: ast.Call, local: dict[str, Any]) -> Any:
        dotted = _dotted(node.func) or ""
        args = [self.ev(a, local) for a in node.args]
        if dotted.endswith("import_module") and args and isinstance(args[0], str):
            return Module(args[0])
        if (
            dotted == "getattr"
            and len(args) >= 2
            and isinstance(args[0], Module)
            and isinstance(args[1], str)
        ):
            return Func(args[0].dotted, args[1])
        if dotted in {"pytest.param"}:
            return tuple(args)
        if dotted == "dict" and not args:
            return {k.arg: self.ev(k.value, local) for k in node.keywords if k.arg}
        if isinstance(node.func, ast.Attribute) and node.func.attr == "lower" and not args:
            base = self.ev(node.func.value, local)
            return base.lower() if isinstance(base, str) else UNKNOWN
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not args:
            base = self.ev(node.func.value, local)
            return dict(base) if isinstance(base, dict) else UNKNOWN
        if isinstance(node.func, ast.Name) and node.func.id in self.helpers:
            return self._run_value_helper(self.helpers[node.func.id], args)
        return UNKNOWN

    def _run_value_helper(self, helper: ast.FunctionDef, args: list[Any]) -> Any:
        """A helper that builds a value (a dict of overrides) from literals: run its simple statements."""
        local = {p.arg: (args[i] if i < len(args) else UNKNOWN) for i, p in enumerate(helper.args.args)}
        try:
            return self._value_block(helper.body, local)
        except _Stop:
            return UNKNOWN

    def _value_block(self, body: list[ast.stmt], local: dict[str, Any]) -> Any:
        for stmt in body:
            if isinstance(stmt, ast.Return):
                return self.ev(stmt.value, local) if stmt.value else None
            if isinstance(stmt, ast.If):
                decided = self.ev(stmt.test, local)
                if decided is UNKNOWN:
                    raise _Stop
                result = self._value_block(stmt.body if decided else stmt.orelse, local)
                if result is not _NO_RETURN:
                    return result
                continue
            if not self._plain_stmt(stmt, local):
                raise _Stop
        return _NO_RETURN

    def _plain_stmt(self, stmt: ast.stmt, local: dict[str, Any]) -> bool:
        """Assignments and dict edits on locals; False for anything else."""
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return True  # docstring
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                local[target.id] = self.ev(stmt.value, local)
                return True
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                container, key = local.get(target.value.id), self.ev(target.slice, local)
                if isinstance(container, dict) and isinstance(key, str):
                    container[key] = self.ev(stmt.value, local)
                    return True
            return False
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                container = local.get(call.func.value.id)
                if isinstance(container, dict):
                    args = [self.ev(a, local) for a in call.args]
                    if call.func.attr == "pop" and args and isinstance(args[0], str):
                        container.pop(args[0], None)
                        return True
                    if call.func.attr == "update" and args and isinstance(args[0], dict):
                        container.update(args[0])
                        return True
                    if call.func.attr == "update" and not args:
                        container.update({k.arg: self.ev(k.value, local) for k in call.keywords if k.arg})
                        return True
        return False

    # ------------------------------------------------------------------ tests

    def run_all(self) -> Walk:
        for name, node, methods in self.tests:
            for bindings in self._parametrised(node):
                self._run_test(name, node, bindings, methods)
        return self.walk

    def _parametrised(self, node: ast.FunctionDef) -> list[dict[str, Any]]:
        tables: list[list[dict[str, Any]]] = []
        for decorator in node.decorator_list:
            if not (
                isinstance(decorator, ast.Call) and (_dotted(decorator.func) or "").endswith("parametrize")
            ):
                continue
            if len(decorator.args) < 2:
                continue
            names = self.ev(decorator.args[0], {})
            values = self.ev(decorator.args[1], {})
            if isinstance(names, str):
                names = [n.strip() for n in names.split(",") if n.strip()]
            if not isinstance(names, list | tuple) or not isinstance(values, list | tuple):
                self.walk.left_out["parametrize table not literal"] += 1
                return []
            rows = []
            for value in values:
                if len(names) == 1:
                    value = value[0] if isinstance(value, tuple) and len(value) == 1 else value
                    rows.append({names[0]: value})
                elif isinstance(value, tuple | list) and len(value) >= len(names):
                    rows.append(dict(zip(names, value, strict=False)))
            tables.append(rows)
        combos = [
            dict(itertools.chain.from_iterable(r.items() for r in combo))
            for combo in itertools.product(*tables)
        ]
        return combos[:MAX_ROWS] if tables else [{}]

    def _run_test(
        self, name: str, node: ast.FunctionDef, bindings: dict[str, Any], methods: dict[str, ast.FunctionDef]
    ) -> None:
        local = dict(bindings)
        env = set(self.autouse_env)
        with contextlib.suppress(_Stop):
            self._block(node.body, local, env, name, methods)

    def _block(
        self, body: list[ast.stmt], local: dict[str, Any], env: set[str], test: str, methods: dict
    ) -> None:
        for stmt in body:
            self._stmt(stmt, local, env, test, methods)

    def _stmt(self, stmt: ast.stmt, local: dict[str, Any], env: set[str], test: str, methods: dict) -> None:
        text = ast.unparse(stmt) if not isinstance(stmt, ast.If | ast.For | ast.With | ast.Try) else ""
        env |= _env_from_text(text)
        if isinstance(stmt, ast.Assert):
            self._assert(stmt, local, test)
            return
        if _bind_import(stmt, local):
            return
        if isinstance(stmt, ast.If):
            decided = self.ev(stmt.test, local)
            if decided is UNKNOWN:
                self._count_inside(stmt, local, "inside an `if` the parameters do not decide")
                return
            self._block(stmt.body if decided else stmt.orelse, local, env, test, methods)
            return
        if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
            items = self.ev(stmt.iter, local)
            if not isinstance(items, list | tuple):
                self._count_inside(stmt, local, "inside a loop over values not known statically")
                return
            for item in items:
                local[stmt.target.id] = item
                self._block(stmt.body, local, env, test, methods)
            return
        if isinstance(stmt, ast.With):
            env |= _env_from_text(" ".join(ast.unparse(i.context_expr) for i in stmt.items))
            if any("raises" in ast.unparse(i.context_expr) for i in stmt.items):
                self._count_inside(stmt, local, "inside pytest.raises")
                return
            self._block(stmt.body, local, env, test, methods)
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
            built = self._built(stmt.value, local, env)
            if built is not None and isinstance(stmt.targets[0], ast.Name):
                local[stmt.targets[0].id] = built
                return
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and self._inline_helper(stmt.value, local, env, test, methods)
        ):
            return
        self._mark_mutations(stmt, local)
        if not self._plain_stmt(stmt, local) and isinstance(stmt, ast.Assign | ast.AnnAssign):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    local[target.id] = UNKNOWN

    def _count_inside(self, stmt: ast.stmt, local: dict[str, Any], reason: str) -> None:
        for inner in ast.walk(stmt):
            if isinstance(inner, ast.Assert) and self._mentions_cfg(inner, local):
                self.walk.left_out[reason] += 1

    def _mentions_cfg(self, node: ast.AST, local: dict[str, Any]) -> bool:
        return any(isinstance(n, ast.Name) and isinstance(local.get(n.id), Cfg) for n in ast.walk(node))

    def _built(self, call: ast.Call, local: dict[str, Any], env: set[str]) -> Cfg | None:
        """`recipe(...)` -> the config it builds, with its keyword arguments when they are literal."""
        func = self.ev(call.func, local)
        if not isinstance(func, Func):
            return None
        kwargs: dict[str, Any] | None = {}
        if call.args:
            kwargs = None
        for keyword in call.keywords:
            value = self.ev(keyword.value, local)
            if keyword.arg is None:
                if isinstance(value, dict) and kwargs is not None:
                    kwargs.update(value)
                else:
                    kwargs = None
            elif kwargs is not None:
                kwargs[keyword.arg] = value
        if kwargs is not None:  # which keys are passed is what matters; a value not known is marked
            kwargs = {k: v if _is_json(v) else NOT_KNOWN for k, v in kwargs.items()}
        return Cfg(func, kwargs, set(env))

    def _inline_helper(
        self, call: ast.Call, local: dict[str, Any], env: set[str], test: str, methods: dict
    ) -> bool:
        """`_assert_basic_config(cfg, ...)` or `self._check(cfg)`: run the helper with its arguments."""
        dotted = _dotted(call.func) or ""
        helper = self.helpers.get(dotted) or (methods.get(dotted[5:]) if dotted.startswith("self.") else None)
        if helper is None:
            return False
        params = [p.arg for p in helper.args.args if p.arg != "self"]
        inner: dict[str, Any] = {}
        for param, arg in zip(params, call.args, strict=False):
            inner[param] = self.ev(arg, local)
        for keyword in call.keywords:
            if keyword.arg:
                inner[keyword.arg] = self.ev(keyword.value, local)
        if not any(isinstance(v, Cfg) for v in inner.values()):
            return False
        self._block(helper.body, inner, env, test, methods)
        return True

    def _mark_mutations(self, stmt: ast.stmt, local: dict[str, Any]) -> None:
        """An assignment into a config, or a call that is given one (other than a reader), changes it."""
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    root = target
                    while isinstance(root, ast.Attribute | ast.Subscript):
                        root = root.value
                    if (
                        isinstance(root, ast.Name)
                        and target is not root
                        and isinstance(local.get(root.id), Cfg)
                    ):
                        local[root.id].mutated = True
            if isinstance(node, ast.Call) and (_dotted(node.func) or "") not in READERS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    root = arg
                    while isinstance(root, ast.Attribute | ast.Subscript):
                        root = root.value
                    if isinstance(root, ast.Name) and isinstance(local.get(root.id), Cfg):
                        local[root.id].mutated = True
                receiver = node.func
                while isinstance(receiver, ast.Attribute):
                    receiver = receiver.value
                if (
                    isinstance(receiver, ast.Name)
                    and isinstance(local.get(receiver.id), Cfg)
                    and node.func is not receiver
                ):
                    local[receiver.id].mutated = True

    # ------------------------------------------------------------------ assertions

    def _assert(self, stmt: ast.Assert, local: dict[str, Any], test: str) -> None:
        if not self._mentions_cfg(stmt.test, local):
            return
        parsed = self._comparison(stmt.test, local)
        if parsed is None:
            self.walk.left_out["not a comparison of a field with a literal"] += 1
            return
        cfg, path, expected, op = parsed
        if path.split(".")[0] not in CONFIG_SECTIONS or not cfg.func.module.startswith(RECIPE_PACKAGES):
            self.walk.left_out["not a ConfigContainer field of a recipe (another config builder)"] += 1
            return
        if cfg.mutated:
            self.walk.left_out["made after the test changed the config"] += 1
            return
        self.walk.rows.append(
            {
                "file": self.walk.path,
                "line": stmt.lineno,
                "test": test,
                "module": cfg.func.module,
                "recipe": cfg.func.name,
                "call": cfg.call,
                "env": sorted(cfg.env),
                "path": path,
                "op": op,
                "expected": expected,
            }
        )

    def _comparison(self, test: ast.expr, local: dict[str, Any]) -> tuple[Cfg, str, Any, str] | None:
        if isinstance(test, ast.Call) and _dotted(test.func) == "isinstance" and len(test.args) == 2:
            located = self._field(test.args[0], local)
            cls = self._class_name(test.args[1], local)
            if located and cls and located[1]:
                return located[0], f"{located[1]}._target_", cls, "isinstance"
            return None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        op, right = test.ops[0], test.comparators[0]
        located = self._field(test.left, local)
        if located is None or not located[1]:
            return None
        if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value in (None, True, False):
            return located[0], located[1], right.value, "is"
        if isinstance(op, ast.Eq):
            expected = self._literal(right, local)
            if expected is not UNKNOWN:
                return located[0], located[1], expected, "=="
        return None

    def _class_name(self, node: ast.expr, local: dict[str, Any]) -> str | None:
        """An imported class (not one the test defines or a parameter): its name."""
        dotted = _dotted(node)
        if not dotted or dotted.split(".")[0] in local:
            return None
        root = self.names.get(dotted.split(".")[0])
        return dotted.rsplit(".", 1)[-1] if isinstance(root, Module) else None

    def _field(self, node: ast.expr, local: dict[str, Any]) -> tuple[Cfg, str] | None:
        """cfg.a.b (or getattr(cfg.a, "b", default)) -> (cfg, "a.b")."""
        if isinstance(node, ast.Call) and _dotted(node.func) == "getattr" and len(node.args) >= 2:
            base = self._field(node.args[0], local)
            attr = node.args[1]
            if base and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                return base[0], f"{base[1]}.{attr.value}" if base[1] else attr.value
            return None
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and isinstance(local.get(node.id), Cfg):
            return local[node.id], ".".join(reversed(parts))
        return None

    def _literal(self, node: ast.expr, local: dict[str, Any]) -> Any:
        """A JSON literal, a list of them, or a dotted constant such as torch.bfloat16 (as its text)."""
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            root = (
                self.names.get(dotted.split(".")[0]) if dotted and dotted.split(".")[0] not in local else None
            )
            # torch.bfloat16, CudaGraphScope.attn; not a constant of a recipe module (its value is not here)
            if isinstance(root, Module) and not root.dotted.startswith(RECIPE_PACKAGES):
                return f"{root.dotted}.{dotted.split('.', 1)[1]}"
            return UNKNOWN
        if isinstance(node, ast.List | ast.Tuple):
            items = [self._literal(e, local) for e in node.elts]
            return UNKNOWN if any(i is UNKNOWN for i in items) else items
        value = self.ev(node, local)
        return value if _is_json(value) else UNKNOWN


class _Stop(Exception):
    pass


_NO_RETURN = object()


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _bind_import(stmt: ast.stmt, names: dict[str, Any]) -> bool:
    """`import a.b as c` / `from a import b`: recipe functions by name, everything else as a module path."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            names[alias.asname or alias.name.split(".")[0]] = Module(
                alias.name if alias.asname else alias.name.split(".")[0]
            )
        return True
    if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
        for alias in stmt.names:
            target = alias.asname or alias.name
            if alias.name.endswith("_config") and alias.name == alias.name.lower():
                names[target] = Func(stmt.module, alias.name)
            else:
                names[target] = Module(f"{stmt.module}.{alias.name}")
        return True
    return False


SETENV = re.compile(r"setenv\(\s*['\"]([A-Z0-9_]+)['\"]")


def _env_from_text(text: str) -> set[str]:
    env = {f"env:{name}" for name in SETENV.findall(text)}
    if "is_available" in text and ("False" in text or "lambda" in text):
        env.add(ENV_NO_CUDA)
    if "AutoBridge" in text or "patch_recipe_construction_dependencies" in text:
        env.add(ENV_FAKE_BRIDGE)
    if "patch_recipe_construction_dependencies" in text or "apply_flex_dispatcher_backend" in text:
        env.add(ENV_HELPER_OFF)
    return env


def extract_tests(files: dict[str, str]) -> Walk:
    """Rows and left-out counts of every test module in `files` (path -> text)."""
    total = Walk("")
    for path, text in sorted(files.items()):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            total.left_out["test module does not parse"] += 1
            continue
        walk = TestModule(path, tree).run_all()
        total.rows += walk.rows
        total.left_out.update(walk.left_out)
    return total


# ---------------------------------------------------------------------------- reading upstream


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def test_files(git_dir: Path, ref: str) -> dict[str, str]:
    paths = [
        p
        for p in _git(git_dir, "ls-tree", "-r", "--name-only", ref).splitlines()
        if p.startswith(TEST_ROOTS) and p.rsplit("/", 1)[-1].startswith("test_") and p.endswith(".py")
    ]
    return {p: _git(git_dir, "show", f"{ref}:{p}") for p in paths}


def build(git_dir: Path, refs: dict[str, str]) -> dict[str, Any]:
    versions = {}
    for version, ref in refs.items():
        commit = _git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        files = test_files(git_dir, commit)
        walk = extract_tests(files)
        versions[version] = {
            "ref": ref,
            "commit": commit,
            "test_files": len(files),
            "assertions": walk.rows,
            "left_out": dict(sorted(walk.left_out.items())),
        }
    return {
        "description": (
            "Literal assertions of Megatron-Bridge's own recipe unit tests on recipe defaults, read "
            "statically (ingest/recipes/oracle.py); tests/test_recipe_oracle.py compares them with the "
            "bundled catalogs."
        ),
        "versions": versions,
    }


def dumps(table: dict[str, Any]) -> str:
    """JSON with one assertion per line (small, and a diff shows which assertions changed)."""
    lines = ["{", f' "description": {json.dumps(table["description"])},', ' "versions": {']
    versions = list(table["versions"].items())
    for index, (version, data) in enumerate(versions):
        head = {k: v for k, v in data.items() if k != "assertions"}
        lines.append(f"  {json.dumps(version)}: {{")
        lines += [f"   {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
        rows = [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in data["assertions"]]
        lines.append('   "assertions": [')
        lines += [f"    {row}{',' if i < len(rows) - 1 else ''}" for i, row in enumerate(rows)]
        lines.append("   ]")
        lines.append("  }" + ("," if index < len(versions) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    # deferred: only the command line needs the bundled versions and the mirror setting
    from ingest.catalog_build import BUNDLED, bridge_git_dir

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--git", type=Path, default=None, help="Megatron-Bridge git dir (else $AUTORECIPE_BRIDGE_GIT)"
    )
    parser.add_argument("--out", type=Path, default=knowledge_base().root / "recipe_oracle.json")
    args = parser.parse_args(argv)
    table = build(bridge_git_dir(args.git), {b.version: b.ref for b in BUNDLED})
    write_atomic(args.out, dumps(table))
    for version, data in table["versions"].items():
        print(
            f"{version}: {len(data['assertions'])} assertions from {data['test_files']} test files; "
            f"left out {data['left_out']}"
        )


if __name__ == "__main__":
    main()
