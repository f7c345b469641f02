"""A small abstract interpreter over `ast` that runs recipe functions without executing them.

It never imports or runs indexed code. It walks statements, binds arguments to parameters
(with defaults, `*args`, `**kwargs`), follows calls into functions of the indexed packages, and
models everything else as opaque values:
- constructors of external classes (`TrainingConfig(...)`, `LoRA(...)`) become attribute bags;
- `AutoBridge.from_hf_pretrained(ID).to_megatron_provider()` becomes a provider tagged with ID;
- a test it cannot decide runs both branches "tainted": every write in them becomes Unknown;
- the last write wins because objects are shared by reference, as in Python.
Budgets (steps, call depth, loop iterations, collection and string sizes, expression depth)
bound time and memory on hostile input.
"""

from __future__ import annotations

import ast
import gc
import operator
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ingest.recipes.environments import (
    HELPER_PATCHED_OUT,
    PATCHED_OUT_IN_TESTS,
    Environment,
    environments,
    fake_provider_environment,
)
from ingest.recipes.names import MIXED_PRECISION_TO_TOKEN
from ingest.recipes.sources import INDEXED_PACKAGES, SourceTree
from ingest.recipes.values import (
    BoundMethod,
    Builtin,
    ClassRef,
    EnvDependent,
    Ext,
    Func,
    LazyImport,
    Module,
    Obj,
    Partial,
    Unknown,
)


@dataclass(frozen=True)
class Limits:
    module_steps: int = 200_000
    call_steps: int = 400_000
    call_depth: int = 32
    loop_iterations: int = 2_000
    collection_size: int = 10_000
    string_size: int = 100_000
    expression_depth: int = 120
    integer_bits: int = 4_096  # a recipe's numbers are sizes and counts; `x = x * x` in a loop stops here
    file_steps: int = 1_000_000  # all recipe calls of one file together (real files use at most 30,000)


@dataclass(frozen=True)
class McoreFacts:
    """What the pinned Megatron Core defines, read statically from its source (catalog_build): the
    TransformerConfig field names and the class names of megatron/core/transformer/enums.py."""

    commit: str
    transformer_fields: frozenset[str]
    enum_classes: frozenset[str]


@contextmanager
def paused_gc() -> Iterator[None]:
    """The interpreter allocates many short-lived acyclic objects; the cycle collector only costs time
    (about a third of a whole-tree run). Memory stays bounded by the step budgets."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _fits_bits(op: ast.operator, left: int, right: int, limits: Limits) -> bool:
    """Whether an integer operation's result stays within the integer budget, judged before computing it
    (bit length of a product is at most the sum, of a power the exponent times the base's)."""
    bits = max(left.bit_length(), right.bit_length())
    if isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    elif isinstance(op, ast.Pow):
        bits = left.bit_length() * max(right, 0)
    elif isinstance(op, ast.LShift):
        bits = left.bit_length() + max(right, 0)
    return bits <= limits.integer_bits


class BudgetExceeded(Exception):
    """The step budget of the current task ran out."""


class RaiseSignal(Exception):
    """The interpreted code raised (e.g. `raise NotImplementedError`)."""


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# Megatron Core TransformerConfig defaults read by recipes before they assign them (survey H3).
PROVIDER_DEFAULTS: dict[str, Any] = {
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
    "expert_tensor_parallel_size": None,
    "virtual_pipeline_model_parallel_size": None,
    "sequence_parallel": False,
    "recompute_granularity": None,
    "recompute_method": None,
    "recompute_num_layers": None,
    "recompute_modules": None,
    "pipeline_model_parallel_layout": None,
    "account_for_embedding_in_pipeline_split": False,
    "account_for_loss_in_pipeline_split": False,
    "cuda_graph_impl": "none",
    "cuda_graph_scope": None,
}

# Names that are entry points into the bridge runtime; never followed even when present in the tree.
OPAQUE_NAMES = {"AutoBridge", "AutoConfig", "AutoTokenizer", "AutoModel"}
HF_CONSTRUCTORS = {"from_hf_pretrained", "from_pretrained", "from_hf_config"}
PROVIDER_METHODS = {
    "to_megatron_provider",
    "get_model_config",
    "to_text_provider",
    "provider_bridge",
    "provider",
}
ARGPARSE_CLASSES = {"ArgumentParser", "_ArgumentGroup", "_MutuallyExclusiveGroup"}
# Mixed-precision preset functions (also model-specific ones such as nanov2_bf16_with_..._mixed).
MIXED_PRECISION_PRESETS = tuple(MIXED_PRECISION_TO_TOKEN)
# Upstream helpers whose effect depends on the run-time environment (torch.cuda): a call from a recipe runs
# the helper once per environment (ingest/recipes/environments.py) and records what differs.
ENVIRONMENT_MODULES = (
    "megatron.bridge.training.flex_dispatcher_backend",
    "megatron.bridge.utils.cuda_graph",
)
CAMEL = re.compile(r"^_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9_]*$")

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_STR_METHODS = {
    "lower",
    "upper",
    "startswith",
    "endswith",
    "replace",
    "split",
    "rsplit",
    "strip",
    "lstrip",
    "rstrip",
    "format",
    "join",
    "removeprefix",
    "removesuffix",
    "title",
    "capitalize",
    "isdigit",
    "count",
    "find",
}
# A format field or %-spec with a width/precision of 5+ digits, or a nested field: too big to evaluate.
_HUGE_FORMAT = re.compile(r"%[-+ #0]*\d{5,}|%[-+ #0]*\d*\.\d{5,}|\{[^{}]*\{|\{[^}]*:[^}]*\d{5,}")
_PURE_BUILTINS = {
    "len",
    "int",
    "float",
    "str",
    "bool",
    "min",
    "max",
    "abs",
    "range",
    "list",
    "tuple",
    "dict",
    "set",
    "sorted",
    "isinstance",
    "getattr",
    "hasattr",
    "round",
    "sum",
    "any",
    "all",
    "enumerate",
    "zip",
    "reversed",
    "print",
    "frozenset",
}


def is_plain(value: Any) -> bool:
    """True for values Python itself could compare and hash safely (no abstract parts)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(is_plain(k) and is_plain(v) for k, v in value.items())
    return False


class Frame:
    """Locals of one function call (or the module namespace at module level)."""

    def __init__(
        self, module: Module, local: dict[str, Any] | None, closure: list[dict[str, Any]], name: str
    ):
        self.module = module
        self.local = local
        self.closure = closure
        self.name = name
        self.globals_declared: set[str] = set()

    def set(self, name: str, value: Any) -> None:
        if self.local is None or name in self.globals_declared:
            self.module.namespace[name] = value
        else:
            self.local[name] = value


class Interpreter:
    """Loads modules of one source tree lazily and evaluates functions abstractly."""

    def __init__(
        self,
        tree: SourceTree,
        extra_roots: tuple[str, ...] = (),
        limits: Limits | None = None,
        mcore: McoreFacts | None = None,
    ):
        self.tree = tree
        self.mcore = mcore
        self.env: Environment | None = None  # set while an environment-dependent helper runs
        self._cuda_readers: dict[str, bool] = {}  # helper module -> whether it reads torch.cuda
        self.extra_roots = extra_roots
        self.limits = limits or Limits()
        self.modules: dict[str, Module] = {}
        self.warnings = tree.warnings
        self.taint: list[str] = []
        self.notes: dict[str, str] = {}
        self.steps = 0
        self.budget = self.limits.module_steps
        self.file_steps: dict[str, int] = {}  # steps spent in recipe calls, per source file
        self.depth = 0
        self.expr_depth = 0
        self.parsers: list[Obj] = []  # argparse parsers built while evaluating (launcher extraction)
        self.class_ancestors: dict[str, set[str]] = {}  # external class name -> base names

    # ------------------------------------------------------------------ budgets

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise BudgetExceeded(f"step budget of {self.budget} exhausted")

    def run_task(self, budget: int, fn: Callable[[], Any], *, file: str | None = None) -> Any:
        """Run fn with its own step budget, restoring the caller's budget afterwards. With `file`, the
        steps also count against that file's total budget (all its recipe calls together)."""
        if file is not None:
            left = self.limits.file_steps - self.file_steps.get(file, 0)
            if left <= 0:
                raise BudgetExceeded(f"work budget of {self.limits.file_steps} steps for {file} exhausted")
            budget = min(budget, left)
        saved = (self.steps, self.budget, self.taint, self.depth, self.expr_depth)
        self.steps, self.budget, self.taint, self.depth, self.expr_depth = 0, budget, [], 0, 0
        try:
            return fn()
        finally:
            if file is not None:
                self.file_steps[file] = self.file_steps.get(file, 0) + self.steps
            self.steps, self.budget, self.taint, self.depth, self.expr_depth = saved

    # ------------------------------------------------------------------ modules

    def _locate(self, name: str) -> tuple[str, bool] | None:
        if name == "megatron.bridge" or name.startswith("megatron.bridge."):
            if not any(name == p or name.startswith(p + ".") for p in INDEXED_PACKAGES):
                return None
            return self.tree.module_file(name, self.tree.package_prefix)
        for root in self.extra_roots:
            found = self.tree.module_file(name, root)
            if found:
                return found
        return None

    def is_indexed(self, name: str) -> bool:
        return self._locate(name) is not None

    def load_module(self, name: str) -> Module | None:
        """The module's namespace after running its top level once (None if not indexed)."""
        if name in self.modules:
            return self.modules[name]
        located = self._locate(name)
        if located is None:
            return None
        relpath, is_package = located
        module = Module(name=name, relpath=relpath, is_package=is_package)
        module.namespace["__name__"] = name
        self.modules[name] = module
        text = self.tree.read_text(relpath)
        if text is None:
            return module
        try:
            tree = ast.parse(text, filename=relpath)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            self.warnings.append(f"skipped {relpath}: cannot parse ({type(error).__name__}: {error})")
            return module
        self.run_task(self.limits.module_steps, lambda: self._exec_module(module, tree))
        names = module.namespace.get("__all__")
        if isinstance(names, list | tuple) and all(isinstance(n, str) for n in names):
            module.all_names = list(names)
        return module

    def _exec_module(self, module: Module, tree: ast.Module) -> None:
        frame = Frame(module, None, [], module.name)
        for stmt in tree.body:
            try:
                self.exec_stmt(stmt, frame)
            except (BudgetExceeded, RaiseSignal, RecursionError, _Return, _Break, _Continue) as error:
                self.warnings.append(
                    f"{module.relpath}:{getattr(stmt, 'lineno', 0)}: top-level statement not evaluated "
                    f"({type(error).__name__}: {error})"
                )
                if isinstance(error, BudgetExceeded):
                    return

    def star_names(self, module: Module) -> list[str]:
        if module.all_names is not None:
            return module.all_names
        return [n for n in module.namespace if not n.startswith("_")]

    def resolve(self, value: Any, hops: int = 0) -> Any:
        """Follow LazyImport placeholders to the value they name."""
        while isinstance(value, LazyImport) and hops < 16:
            hops += 1
            if value.attr in OPAQUE_NAMES:
                return Ext(f"{value.module}.{value.attr}")
            module = self.load_module(value.module)
            if module is None:
                return Ext(f"{value.module}.{value.attr}")
            if value.attr in module.namespace:
                value = module.namespace[value.attr]
                continue
            sub = self.load_module(f"{value.module}.{value.attr}")
            if sub is not None:
                return sub
            return Unknown(f"{value.module} defines no {value.attr}")
        if isinstance(value, LazyImport):
            return Unknown("import cycle")
        return value

    def _absolute(self, frame: Frame, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        package = frame.module.name if frame.module.is_package else frame.module.name.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{module}" if module else package

    def _import_from(self, node: ast.ImportFrom, frame: Frame) -> None:
        base = self._absolute(frame, node.module, node.level)
        indexed = self.is_indexed(base)
        for alias in node.names:
            if alias.name == "*":
                module = self.load_module(base) if indexed else None
                if module is None:
                    self.warnings.append(
                        f"{frame.module.relpath}:{node.lineno}: star import of external {base}"
                    )
                    continue
                for name in self.star_names(module):
                    frame.set(
                        name, module.namespace.get(name, Unknown(f"{base}.__all__ lists missing {name}"))
                    )
                continue
            target = alias.asname or alias.name
            if indexed and alias.name not in OPAQUE_NAMES or self.is_indexed(f"{base}.{alias.name}"):
                frame.set(target, LazyImport(base, alias.name))
            else:
                frame.set(target, Ext(f"{base}.{alias.name}"))

    def _import(self, node: ast.Import, frame: Frame) -> None:
        for alias in node.names:
            if alias.asname:
                module = self.load_module(alias.name)
                frame.set(alias.asname, module if module is not None else Ext(alias.name))
            else:
                head = alias.name.split(".")[0]
                frame.set(head, Ext(head))

    # ------------------------------------------------------------------ statements

    def exec_block(self, stmts: list[ast.stmt], frame: Frame) -> None:
        for stmt in stmts:
            self.exec_stmt(stmt, frame)

    def _tainted(self, reason: str, fn: Callable[[], None]) -> None:
        """Run fn with every write replaced by Unknown(reason); returns/breaks end only that branch."""
        self.taint.append(reason)
        try:
            fn()
        except (_Return, _Break, _Continue):
            pass
        except RaiseSignal:
            pass
        finally:
            self.taint.pop()

    def _write(self, value: Any) -> Any:
        return Unknown(self.taint[-1]) if self.taint else value

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        self.step()
        match stmt:
            case ast.Expr(value=value):
                self.eval(value, frame)
            case ast.Assign(targets=targets, value=value):
                result = self.eval(value, frame)
                for target in targets:
                    self.assign(target, result, frame)
                    self._mark_origin(target, result, frame, stmt.lineno)
            case ast.AnnAssign(target=target, value=value):
                if value is not None:
                    self.assign(target, self.eval(value, frame), frame)
            case ast.AugAssign(target=target, op=op, value=value):
                current = self.eval(target, frame)
                self.assign(target, self.binop(op, current, self.eval(value, frame)), frame)
            case ast.If(test=test, body=body, orelse=orelse):
                decided = self.truth(self.eval(test, frame))
                if decided is True:
                    self.exec_block(body, frame)
                elif decided is False:
                    self.exec_block(orelse, frame)
                else:
                    reason = self._condition_reason(test, frame)
                    self._tainted(reason, lambda: self.exec_block(body, frame))
                    self._tainted(reason, lambda: self.exec_block(orelse, frame))
            case ast.For(target=target, iter=iter_node, body=body, orelse=orelse):
                self._exec_for(target, self.eval(iter_node, frame), body, orelse, frame, stmt)
            case ast.While(test=test, body=body):
                self._exec_while(test, body, frame, stmt)
            case ast.FunctionDef() | ast.AsyncFunctionDef():
                func = Func(stmt.name, stmt, frame.module, self._closure_of(frame))
                frame.set(stmt.name, func)  # decorators (cache, deprecated) do not change values
            case ast.ClassDef():
                frame.set(stmt.name, ClassRef(stmt.name, stmt, frame.module))
            case ast.Return(value=value):
                raise _Return(self.eval(value, frame) if value is not None else None)
            case ast.Raise(exc=exc):
                raise RaiseSignal(ast.unparse(exc)[:120] if exc is not None else "re-raise")
            case ast.Import():
                self._import(stmt, frame)
            case ast.ImportFrom():
                self._import_from(stmt, frame)
            case ast.Try() | ast.TryStar():
                self._exec_try(stmt, frame)
            case ast.With(items=items, body=body) | ast.AsyncWith(items=items, body=body):
                for item in items:
                    self.eval(item.context_expr, frame)
                    if item.optional_vars is not None:
                        self.assign(item.optional_vars, Unknown("context manager value"), frame)
                self.exec_block(body, frame)
            case ast.Break():
                raise _Break()
            case ast.Continue():
                raise _Continue()
            case ast.Global(names=names):
                frame.globals_declared.update(names)
            case ast.Delete(targets=targets):
                for target in targets:
                    self._delete(target, frame)
            case _:
                pass  # pass, assert, nonlocal, match: no effect on recipe values

    def _mark_origin(self, target: ast.expr, value: Any, frame: Frame, line: int) -> None:
        """Remember which module constant first named an object (perf config aliases, survey H17)."""
        if (
            frame.local is None
            and isinstance(target, ast.Name)
            and isinstance(value, Obj)
            and value.origin is None
        ):
            value.origin = (target.id, frame.module.relpath, line)

    def _closure_of(self, frame: Frame) -> list[dict[str, Any]]:
        return [*frame.closure, frame.local] if frame.local is not None else []

    def _condition_reason(self, test: ast.expr, frame: Frame) -> str:
        return f"depends on `{ast.unparse(test)[:80]}` ({frame.module.relpath}:{test.lineno})"

    def _exec_try(self, stmt: ast.Try | ast.TryStar, frame: Frame) -> None:
        try:
            self.exec_block(stmt.body, frame)
        except RaiseSignal:
            if stmt.handlers:
                self.exec_block(stmt.handlers[0].body, frame)
        else:
            self.exec_block(stmt.orelse, frame)
        finally:
            self.exec_block(stmt.finalbody, frame)

    def _iterable(self, value: Any) -> list[Any] | None:
        value = self.resolve(value)
        if isinstance(value, range):
            return list(value) if len(value) <= self.limits.loop_iterations else None
        if isinstance(value, list | tuple | str | set | frozenset):
            return list(value) if len(value) <= self.limits.loop_iterations else None
        if isinstance(value, dict):
            return list(value) if len(value) <= self.limits.loop_iterations else None
        return None

    def _exec_for(self, target, iterable, body, orelse, frame: Frame, stmt: ast.stmt) -> None:
        items = self._iterable(iterable)
        if items is None:
            reason = f"loop over a value not known statically ({frame.module.relpath}:{stmt.lineno})"

            def once() -> None:
                self.assign(target, Unknown(reason), frame)
                self.exec_block(body, frame)

            self._tainted(reason, once)
            return
        for item in items:
            self.assign(target, item, frame)
            try:
                self.exec_block(body, frame)
            except _Break:
                return
            except _Continue:
                continue
        self.exec_block(orelse, frame)

    def _exec_while(self, test: ast.expr, body: list[ast.stmt], frame: Frame, stmt: ast.stmt) -> None:
        for _ in range(self.limits.loop_iterations):
            decided = self.truth(self.eval(test, frame))
            if decided is False:
                return
            if decided is None:
                break
            try:
                self.exec_block(body, frame)
            except _Break:
                return
            except _Continue:
                continue
        reason = f"while loop not bounded statically ({frame.module.relpath}:{stmt.lineno})"
        self._tainted(reason, lambda: self.exec_block(body, frame))

    def _delete(self, target: ast.expr, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            scope = frame.local if frame.local is not None else frame.module.namespace
            scope.pop(target.id, None)
        elif isinstance(target, ast.Subscript):
            container = self.resolve(self.eval(target.value, frame))
            key = self.eval(target.slice, frame)
            if isinstance(container, dict) and is_plain(key) and not self.taint:
                container.pop(key, None)

    # ------------------------------------------------------------------ assignment

    def assign(self, target: ast.expr, value: Any, frame: Frame) -> None:
        value = self._write(value)
        if isinstance(target, ast.Name):
            frame.set(target.id, value)
        elif isinstance(target, ast.Attribute):
            self.set_attr(self.eval(target.value, frame), target.attr, value)
        elif isinstance(target, ast.Subscript):
            container = self.resolve(self.eval(target.value, frame))
            key = self.eval(target.slice, frame)
            if (
                isinstance(container, dict)
                and is_plain(key)
                or isinstance(container, list)
                and isinstance(key, int)
                and -len(container) <= key < len(container)
            ):
                container[key] = value
            elif isinstance(container, Obj) and isinstance(key, str):
                container.attrs[key] = value
        elif isinstance(target, ast.Tuple | ast.List):
            items = self._iterable(value) if not isinstance(value, str | dict) else None
            if (
                items is not None
                and len(items) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in target.elts)
            ):
                for elt, item in zip(target.elts, items, strict=True):
                    self.assign(elt, item, frame)
            else:
                for elt in target.elts:
                    inner = elt.value if isinstance(elt, ast.Starred) else elt
                    self.assign(inner, Unknown("unpacking of a value not known statically"), frame)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, frame)

    def set_attr(self, obj: Any, name: str, value: Any) -> None:
        obj = self.resolve(obj)
        if isinstance(obj, Obj):
            obj.attrs[name] = value
        elif isinstance(obj, Module):
            obj.namespace[name] = value

    # ------------------------------------------------------------------ expressions

    def eval(self, node: ast.expr, frame: Frame) -> Any:
        self.step()
        self.expr_depth += 1
        try:
            if self.expr_depth > self.limits.expression_depth:
                return Unknown("expression nested too deeply")
            return self._eval(node, frame)
        finally:
            self.expr_depth -= 1

    def _eval(self, node: ast.expr, frame: Frame) -> Any:
        kind = type(node)  # fast path for the node types recipes are made of
        if kind is ast.Constant:
            return node.value  # type: ignore[attr-defined]
        if kind is ast.Name:
            return self.lookup(node.id, frame)  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            return self.get_attr(self.eval(node.value, frame), node.attr)  # type: ignore[attr-defined]
        if kind is ast.Call:
            return self._eval_call(node, frame)  # type: ignore[arg-type]
        match node:
            case ast.Constant(value=value):
                return value
            case ast.Name(id=name):
                return self.lookup(name, frame)
            case ast.Attribute(value=value, attr=attr):
                return self.get_attr(self.eval(value, frame), attr)
            case ast.Subscript(value=value, slice=index):
                return self._subscript(self.eval(value, frame), self.eval(index, frame))
            case ast.Call():
                return self._eval_call(node, frame)
            case ast.BinOp(left=left, op=op, right=right):
                return self.binop(op, self.eval(left, frame), self.eval(right, frame))
            case ast.UnaryOp(op=op, operand=operand):
                return self._unary(op, self.eval(operand, frame))
            case ast.BoolOp(op=op, values=values):
                return self._boolop(op, values, frame)
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self._compare(left, ops, comparators, frame)
            case ast.IfExp(test=test, body=body, orelse=orelse):
                decided = self.truth(self.eval(test, frame))
                if decided is True:
                    return self.eval(body, frame)
                if decided is False:
                    return self.eval(orelse, frame)
                return Unknown(self._condition_reason(test, frame))
            case ast.List(elts=elts) | ast.Tuple(elts=elts) | ast.Set(elts=elts):
                items = self._elements(elts, frame)
                if isinstance(items, Unknown):
                    return items
                if isinstance(node, ast.Tuple):
                    return tuple(items)
                if isinstance(node, ast.Set):
                    return set(items) if is_plain(items) else Unknown("set of abstract values")
                return items
            case ast.Dict(keys=keys, values=values):
                return self._dict(keys, values, frame)
            case ast.JoinedStr(values=values):
                return self._fstring(values, frame)
            case ast.FormattedValue(value=value):
                inner = self.eval(value, frame)
                return str(inner) if is_plain(inner) else Unknown("formatted value not known statically")
            case ast.Lambda():
                return Func("<lambda>", node, frame.module, self._closure_of(frame))
            case ast.NamedExpr(target=target, value=value):
                result = self.eval(value, frame)
                self.assign(target, result, frame)
                return result
            case ast.ListComp() | ast.SetComp() | ast.GeneratorExp() | ast.DictComp():
                return self._comprehension(node, frame)
            case ast.Slice(lower=lower, upper=upper, step=step_node):
                parts = [self.eval(p, frame) if p is not None else None for p in (lower, upper, step_node)]
                if all(p is None or isinstance(p, int) for p in parts):
                    return slice(*parts)
                return Unknown("slice bounds not known statically")
            case ast.Starred(value=value):
                return self.eval(value, frame)
            case _:
                return Unknown(f"unsupported expression {type(node).__name__}")

    def lookup(self, name: str, frame: Frame) -> Any:
        scopes: list[dict[str, Any]] = []
        if frame.local is not None and name not in frame.globals_declared:
            scopes.append(frame.local)
        scopes.extend(reversed(frame.closure))
        scopes.append(frame.module.namespace)
        for scope in scopes:
            if name in scope:
                value = scope[name]
                if isinstance(value, LazyImport):
                    value = self.resolve(value)
                    scope[name] = value
                return value
        if name in _PURE_BUILTINS:
            return Builtin(name)
        if name in {"True", "False", "None"}:
            return {"True": True, "False": False, "None": None}[name]
        return Ext(f"builtins.{name}")

    def _elements(self, elts: list[ast.expr], frame: Frame) -> list[Any] | Unknown:
        items: list[Any] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                inner = self._iterable(self.eval(elt.value, frame))
                if inner is None:
                    return Unknown("starred value not known statically")
                items.extend(inner)
            else:
                items.append(self.eval(elt, frame))
            if len(items) > self.limits.collection_size:
                return Unknown("collection too large")
        return items

    def _dict(self, keys, values, frame: Frame) -> Any:
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(keys, values, strict=True):
            if key_node is None:
                spread = self.resolve(self.eval(value_node, frame))
                if isinstance(spread, dict):
                    result.update(spread)
                elif isinstance(spread, Obj) and spread.kind == "config":
                    result.update(spread.attrs)
                else:
                    self.notes["kwargs"] = "a `**` mapping was not known statically"
                continue
            key = self.eval(key_node, frame)
            if not is_plain(key):
                return Unknown("dict key not known statically")
            result[key] = self.eval(value_node, frame)
            if len(result) > self.limits.collection_size:
                return Unknown("collection too large")
        return result

    def _fstring(self, values: list[ast.expr], frame: Frame) -> Any:
        parts: list[str] = []
        for value in values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            assert isinstance(value, ast.FormattedValue)
            inner = self.eval(value.value, frame)
            if not is_plain(inner):
                return Unknown("f-string with a value not known statically")
            spec = self._fstring(value.format_spec.values, frame) if value.format_spec else ""
            if not isinstance(spec, str):
                return spec
            if _HUGE_FORMAT.search("{:" + spec + "}"):
                return Unknown("f-string format width too large")
            try:
                parts.append(format(inner, spec))
            except (ValueError, TypeError):
                return Unknown("f-string format not evaluable")
        text = "".join(parts)
        return text if len(text) <= self.limits.string_size else Unknown("string too large")

    def _comprehension(self, node, frame: Frame) -> Any:
        local: dict[str, Any] = {}
        inner = Frame(frame.module, local, self._closure_of(frame), frame.name)
        results: list[Any] = []

        def walk(index: int) -> bool:
            if index == len(node.generators):
                if isinstance(node, ast.DictComp):
                    results.append((self.eval(node.key, inner), self.eval(node.value, inner)))
                else:
                    results.append(self.eval(node.elt, inner))
                return len(results) <= self.limits.collection_size
            gen = node.generators[index]
            items = self._iterable(self.eval(gen.iter, inner if index else frame))
            if items is None:
                return False
            for item in items:
                self.assign(gen.target, item, inner)
                conditions = [self.truth(self.eval(cond, inner)) for cond in gen.ifs]
                if any(c is None for c in conditions):
                    return False
                if all(conditions) and not walk(index + 1):
                    return False
            return True

        if not walk(0):
            return Unknown("comprehension over values not known statically")
        if isinstance(node, ast.DictComp):
            if not all(is_plain(k) for k, _ in results):
                return Unknown("dict key not known statically")
            return dict(results)
        if isinstance(node, ast.SetComp):
            return set(results) if is_plain(results) else Unknown("set of abstract values")
        return results

    def truth(self, value: Any) -> bool | None:
        value = self.resolve(value)
        if isinstance(value, Unknown | Ext) or (isinstance(value, Obj) and value.kind == "vivified"):
            return None
        if isinstance(value, Obj | Func | ClassRef | Module | Partial | Builtin | BoundMethod):
            return True
        try:
            return bool(value)
        except Exception:  # noqa: BLE001 - abstract values inside containers are still truthy
            return None

    def _imported_name_is_bound(self, value: Any) -> Any:
        """While an environment-dependent helper runs, a name imported from Megatron Core is bound (not None)
        when the pinned Megatron Core defines it; `CudaGraphModule is not None` is then decided."""
        if self.env is None or self.mcore is None or not isinstance(value, Ext):
            return value
        module, _, short = value.dotted.rpartition(".")
        if module == "megatron.core.transformer.enums":
            return Builtin(value.dotted) if short in self.mcore.enum_classes else None
        return value

    def _opaque(self, value: Any) -> bool:
        return isinstance(value, Unknown | Ext) or (isinstance(value, Obj) and value.kind == "vivified")

    def binop(self, op: ast.operator, left: Any, right: Any) -> Any:
        left, right = self.resolve(left), self.resolve(right)
        if isinstance(left, Unknown):
            return left
        if isinstance(right, Unknown):
            return right
        if isinstance(op, ast.BitOr) and isinstance(left, dict) and isinstance(right, dict):
            return {**left, **right}
        if isinstance(op, ast.Add) and isinstance(left, list | tuple) and type(left) is type(right):
            if len(left) + len(right) > self.limits.collection_size:
                return Unknown("collection too large")
            return left + right
        if not (is_plain(left) and is_plain(right)):
            return Unknown(f"operation on values not known statically ({type(op).__name__})")
        if not self._safe_binop(op, left, right):
            return Unknown(f"integer budget: the result would exceed {self.limits.integer_bits} bits")
        try:
            return _BINOPS[type(op)](left, right)
        except Exception as error:  # noqa: BLE001 - interpreted code may divide by zero etc.
            return Unknown(f"operation failed: {type(error).__name__}")

    def _safe_binop(self, op: ast.operator, left: Any, right: Any) -> bool:
        if isinstance(left, int) and isinstance(right, int) and not _fits_bits(op, left, right, self.limits):
            return False
        if isinstance(op, ast.Pow):
            return isinstance(right, int | float) and abs(right) <= 64 and abs(left) <= 2**64
        if isinstance(op, ast.LShift):
            return isinstance(right, int) and right <= 64
        if isinstance(op, ast.Mult):
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(count, int):
                    limit = self.limits.string_size if isinstance(seq, str) else self.limits.collection_size
                    return len(seq) * max(count, 0) <= limit
        if isinstance(op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return len(left) + len(right) <= self.limits.string_size
        if isinstance(op, ast.Mod) and isinstance(left, str):
            return len(left) <= self.limits.string_size and not _HUGE_FORMAT.search(left)
        return True

    def _unary(self, op: ast.unaryop, operand: Any) -> Any:
        operand = self.resolve(operand)
        if isinstance(op, ast.Not):
            decided = self.truth(operand)
            return Unknown("negation of a value not known statically") if decided is None else not decided
        unary = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(op)]
        if isinstance(operand, int) or (isinstance(operand, float) and not isinstance(op, ast.Invert)):
            return unary(operand)
        return Unknown("unary operation on a value not known statically")

    def _boolop(self, op: ast.boolop, values: list[ast.expr], frame: Frame) -> Any:
        result: Any = None
        for value_node in values:
            result = self.eval(value_node, frame)
            decided = self.truth(result)
            if decided is None:
                return Unknown(self._condition_reason(value_node, frame))
            if isinstance(op, ast.And) and not decided:
                return result
            if isinstance(op, ast.Or) and decided:
                return result
        return result

    def _compare(self, left_node, ops, comparators, frame: Frame) -> Any:
        left = self.resolve(self.eval(left_node, frame))
        for op, right_node in zip(ops, comparators, strict=True):
            right = self.resolve(self.eval(right_node, frame))
            if isinstance(op, ast.Is | ast.IsNot):
                left, right = self._imported_name_is_bound(left), self._imported_name_is_bound(right)
                if (self._opaque(left) or self._opaque(right)) and left is not right:
                    return Unknown(self._condition_reason(left_node, frame))
                outcome = (left is right) if isinstance(op, ast.Is) else (left is not right)
            elif isinstance(op, ast.In | ast.NotIn) and isinstance(right, str) and isinstance(left, str):
                outcome = (left in right) if isinstance(op, ast.In) else (left not in right)
            elif isinstance(op, ast.In | ast.NotIn) and isinstance(
                right, dict | list | tuple | set | frozenset
            ):
                if not is_plain(left):
                    return Unknown(self._condition_reason(left_node, frame))
                members = list(right)
                found = any(is_plain(m) and m == left for m in members)
                if not found and not all(is_plain(m) for m in members):
                    return Unknown(self._condition_reason(left_node, frame))
                outcome = found if isinstance(op, ast.In) else not found
            elif is_plain(left) and is_plain(right):
                try:
                    outcome = _CMPOPS[type(op)](left, right)
                except TypeError:
                    return Unknown("comparison of incompatible values")
            else:
                return Unknown(self._condition_reason(left_node, frame))
            if not outcome:
                return False
            left = right
        return True

    def _subscript(self, container: Any, key: Any) -> Any:
        container = self.resolve(container)
        if isinstance(container, dict) and is_plain(key):
            if key in container:
                return container[key]
            if all(is_plain(k) for k in container):
                return Unknown(f"key {key!r} missing")
            return Unknown("lookup in a mapping not known statically")
        if isinstance(container, list | tuple | str) and isinstance(key, int | slice):
            try:
                return container[key]
            except IndexError:
                return Unknown("index out of range")
        if isinstance(container, Ext) and isinstance(key, str) and CAMEL.match(container.short):
            # An enum member by name (CudaGraphModule["attn"]); Megatron Core's are recorded by their name,
            # as recipes that assign strings are.
            if container.dotted.startswith("megatron.core.transformer.enums."):
                return key
            return Ext(f"{container.dotted}.{key}")
        if isinstance(container, Ext | ClassRef):
            return container  # type subscription such as Optional[int] or Unpack[...]
        return Unknown("subscript of a value not known statically")

    # ------------------------------------------------------------------ attributes

    def get_attr(self, obj: Any, name: str) -> Any:
        obj = self.resolve(obj)
        if isinstance(obj, Module):
            if name in obj.namespace:
                value = self.resolve(obj.namespace[name])
                obj.namespace[name] = value
                return value
            sub = self.load_module(f"{obj.name}.{name}")
            return sub if sub is not None else Unknown(f"{obj.name} defines no {name}")
        if isinstance(obj, Obj):
            return self._obj_attr(obj, name)
        if isinstance(obj, Ext):
            parent = obj.dotted.rsplit(".", 2)
            if name == "name" and len(parent) == 3 and CAMEL.match(parent[1]):
                return parent[2]  # an enum member's name: CudaGraphScope.attn.name
            return Ext(f"{obj.dotted}.{name}")
        if isinstance(obj, ClassRef):
            namespace = self.class_namespace(obj)
            return namespace.get(name, Ext(f"{obj.module.name}.{obj.name}.{name}"))
        if isinstance(obj, Unknown):
            return obj
        if isinstance(obj, str | dict | list | tuple | set):
            return BoundMethod(obj, name)
        return Unknown(f"attribute {name} of a value not known statically")

    def _obj_attr(self, obj: Obj, name: str) -> Any:
        if name in obj.attrs:
            return obj.attrs[name]
        if obj.class_ref is not None:
            member = self._class_member(obj.class_ref, name)
            if isinstance(member, Func):
                if self._is_property(member):
                    return self.call(member, [obj], {})
                return BoundMethod(obj, name)
        if obj.kind == "hf":
            if name in {"text_config", "config", "language_config"}:
                return Obj(cls=f"{obj.cls}.{name}", kind="hf", hf_model_id=obj.hf_model_id)
            return BoundMethod(obj, name)
        if obj.kind == "provider":
            if name in PROVIDER_DEFAULTS:
                return PROVIDER_DEFAULTS[name]
            if name.startswith(("to_", "get_", "finalize", "provide")):
                return BoundMethod(obj, name)
            return Unknown(f"model.{name} is not set statically (HF-derived or an upstream default)")
        if obj.cls in ARGPARSE_CLASSES:
            return BoundMethod(obj, name)
        child = Obj(cls=name, kind="vivified")
        obj.attrs[name] = child
        return child

    def _is_property(self, func: Func) -> bool:
        node = func.node
        return isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d) in {"property", "cached_property", "functools.cached_property"}
            for d in node.decorator_list
        )

    def class_namespace(self, cref: ClassRef) -> dict[str, Any]:
        """Class-body names of cref (evaluated once), not including bases."""
        if cref.body_ns is None:
            cref.body_ns = {}
            frame = Frame(cref.module, cref.body_ns, [], cref.name)
            for stmt in cref.node.body:
                try:
                    self.exec_stmt(stmt, frame)
                except (RaiseSignal, _Return, _Break, _Continue):
                    continue
        return cref.body_ns

    def class_bases(self, cref: ClassRef) -> list[Any]:
        if cref.bases is None:
            frame = Frame(cref.module, None, [], cref.name)
            cref.bases = [self.resolve(self.eval(base, frame)) for base in cref.node.bases]
        return cref.bases

    def _mro(self, cref: ClassRef, seen: set[int] | None = None) -> list[ClassRef]:
        seen = seen if seen is not None else set()
        if id(cref) in seen or len(seen) > 32:
            return []
        seen.add(id(cref))
        order = [cref]
        for base in self.class_bases(cref):
            if isinstance(base, ClassRef):
                order.extend(c for c in self._mro(base, seen) if c not in order)
        return order

    def _class_member(self, cref: ClassRef, name: str) -> Any:
        for klass in self._mro(cref):
            namespace = self.class_namespace(klass)
            if name in namespace:
                return namespace[name]
        return None

    def class_defaults(self, cref: ClassRef) -> dict[str, Any]:
        """Field defaults of a (data)class, bases first so subclasses override (survey H5)."""
        defaults: dict[str, Any] = {}
        for klass in reversed(self._mro(cref)):
            for key, value in self.class_namespace(klass).items():
                if key.startswith("__") or isinstance(value, Func | ClassRef | Unknown | BoundMethod):
                    continue
                defaults[key] = value
        return defaults

    def _is_typed_dict(self, cref: ClassRef) -> bool:
        return any(
            isinstance(b, Ext) and b.short == "TypedDict"
            for k in self._mro(cref)
            for b in self.class_bases(k)
        )

    # ------------------------------------------------------------------ calls

    def _eval_call(self, node: ast.Call, frame: Frame) -> Any:
        func = self._callee(node.func, frame)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                items = self._iterable(self.eval(arg.value, frame))
                if items is None:
                    self.notes["args"] = f"`*{ast.unparse(arg.value)[:40]}` not known statically"
                    continue
                args.extend(items)
            else:
                args.append(self.eval(arg, frame))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, frame)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
                continue
            spread = self.resolve(value)
            if isinstance(spread, dict) and all(isinstance(k, str) for k in spread):
                kwargs.update(spread)
            else:
                self.notes["kwargs"] = f"`**{ast.unparse(keyword.value)[:40]}` not known statically"
        result = self.call(func, args, kwargs)
        if isinstance(func, Ext) and isinstance(result, Unknown) and self._passes_config(args, kwargs):
            self.notes[f"call:{func.short}"] = (
                f"{func.dotted}() is given the config and may change it; its effect is not modelled "
                f"({frame.module.relpath}:{node.lineno})"
            )
        return result

    def _passes_config(self, args: list[Any], kwargs: dict[str, Any]) -> bool:
        values = [self.resolve(v) for v in (*args, *kwargs.values())]
        return any(isinstance(v, Obj) and v.kind in {"config", "provider"} for v in values)

    def _callee(self, func_node: ast.expr, frame: Frame) -> Any:
        """`obj.method` on an attribute bag is a method call, not a read that would create the attribute."""
        if isinstance(func_node, ast.Attribute):
            receiver = self.resolve(self.eval(func_node.value, frame))
            if isinstance(receiver, Obj) and func_node.attr not in receiver.attrs:
                return BoundMethod(receiver, func_node.attr)
            return self.resolve(self.get_attr(receiver, func_node.attr))
        return self.resolve(self.eval(func_node, frame))

    def call(self, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        func = self.resolve(func)
        if isinstance(func, Func):
            return self.call_function(func, args, kwargs)
        if isinstance(func, Partial):
            return self.call(func.func, [*func.args, *args], {**func.kwargs, **kwargs})
        if isinstance(func, ClassRef):
            return self.instantiate(func, args, kwargs)
        if isinstance(func, BoundMethod):
            return self._call_method(func, args, kwargs)
        if isinstance(func, Builtin):
            return self._call_builtin(func.name, args, kwargs)
        if isinstance(func, Ext):
            return self._call_external(func, args, kwargs)
        if isinstance(func, Obj):
            return Unknown(f"call of a {func.cls} instance")
        return Unknown("call of a value not known statically")

    def call_function(self, func: Func, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.env is None and func.module.name in ENVIRONMENT_MODULES and not func.name.startswith("_"):
            return self._call_per_environment(func, args, kwargs)
        if self.depth >= self.limits.call_depth:
            return Unknown(f"call depth limit reached in {func.name}")
        local = self.bind(func, args, kwargs)
        frame = Frame(func.module, local, func.closure, func.name)
        self.depth += 1
        try:
            if isinstance(func.node, ast.Lambda):
                return self.eval(func.node.body, frame)
            self.exec_block(func.node.body, frame)
            return None
        except _Return as returned:
            return returned.value
        finally:
            self.depth -= 1

    def _call_per_environment(self, func: Func, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Run an environment-dependent helper once per environment on copies of its config arguments; write
        back each attribute it sets, as a plain value where every environment agrees, else EnvDependent."""
        receivers = [a for a in (self.resolve(a) for a in args) if isinstance(a, Obj)]
        # A helper module that never reads torch.cuda (cuda_graph helpers) gives the same result everywhere.
        envs = list(environments()) if self._reads_cuda(func.module) else [environments()[0]]
        model = receivers[0] if receivers else None
        experts_from_hf = (
            model is not None and model.kind == "provider" and "num_moe_experts" not in model.attrs
        )
        if experts_from_hf:
            envs.append(fake_provider_environment())
        outcomes: dict[str, list[dict[str, Any]] | str] = {}
        results: list[Any] = []
        for env in envs:
            memo: dict[int, Any] = {}
            copies = [clone(a, memo) for a in args]
            copied_kwargs = {k: clone(v, memo) for k, v in kwargs.items()}
            targets = [memo[id(r)] for r in receivers if id(r) in memo]
            if experts_from_hf and targets:
                # A recipe calls this helper for an MoE model only; a fake provider has no expert count.
                targets[0].attrs["num_moe_experts"] = 1 if env.moe_experts_known else None
            before = [dict(t.attrs) for t in targets]
            self.env = env
            try:
                results.append(self.call_function(func, copies, copied_kwargs))
            except RaiseSignal as error:
                outcomes[env.name] = str(error)
                continue
            finally:
                self.env = None
            outcomes[env.name] = [
                {k: v for k, v in t.attrs.items() if k not in old or old[k] is not v}
                for t, old in zip(targets, before, strict=True)
            ]
            if experts_from_hf and targets:
                outcomes[env.name][0].pop("num_moe_experts", None)  # type: ignore[index]
        source = f"{func.module.relpath}:{getattr(func.node, 'lineno', 0)}"
        rule = f"{func.name}()"
        for index, receiver in enumerate(receivers):
            self._merge_environments(
                receiver, index, outcomes, rule, source, func.name in PATCHED_OUT_IN_TESTS
            )
        if results and is_plain(results[0]) and all(_same(results[0], r) for r in results[1:]):
            return results[0]
        return Unknown(f"result of {rule} depends on the environment")

    def _reads_cuda(self, module: Module) -> bool:
        if module.name not in self._cuda_readers:
            text = self.tree.read_text(module.relpath) or ""
            self._cuda_readers[module.name] = "torch.cuda" in text or "from torch import cuda" in text
        return self._cuda_readers[module.name]

    def _merge_environments(
        self,
        receiver: Obj,
        index: int,
        outcomes: dict[str, Any],
        rule: str,
        source: str,
        patched_out_in_tests: bool = False,
    ) -> None:
        raises = {env: outcome for env, outcome in outcomes.items() if isinstance(outcome, str)}
        ran = {env: outcome[index] for env, outcome in outcomes.items() if not isinstance(outcome, str)}
        names = list(dict.fromkeys(name for written in ran.values() for name in written))
        missing = object()
        for name in names:
            original = receiver.attrs.get(name, missing)
            by_env = {env: written.get(name, original) for env, written in ran.items()}
            if patched_out_in_tests:
                by_env[HELPER_PATCHED_OUT] = original  # a unit test that replaces the helper with a no-op
            if any(v is missing for v in by_env.values()):
                unset = Unknown(f"not set by {rule}; an upstream default")
                by_env = {env: unset if v is missing else v for env, v in by_env.items()}
            values = list(by_env.values())
            if not raises and all(_same(values[0], v) for v in values[1:]):
                receiver.attrs[name] = self._write(values[0])
            else:
                receiver.attrs[name] = self._write(EnvDependent(by_env, raises, rule, source))

    def bind(self, func: Func, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Parameters -> values, with defaults evaluated in the defining module."""
        spec = func.node.args
        def_frame = Frame(func.module, None, func.closure, func.name)
        positional = [*spec.posonlyargs, *spec.args]
        defaults: dict[str, ast.expr] = {}
        for param, default in zip(
            positional[len(positional) - len(spec.defaults) :], spec.defaults, strict=True
        ):
            defaults[param.arg] = default
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if default is not None:
                defaults[param.arg] = default
        local: dict[str, Any] = {}
        remaining = dict(kwargs)
        for index, param in enumerate(positional):
            if index < len(args):
                local[param.arg] = args[index]
            elif param.arg in remaining:
                local[param.arg] = remaining.pop(param.arg)
        for param in [*positional, *spec.kwonlyargs]:
            if param.arg in local:
                continue
            if param.arg in remaining:
                local[param.arg] = remaining.pop(param.arg)
            elif param.arg in defaults:
                local[param.arg] = self.eval(defaults[param.arg], def_frame)
            else:
                local[param.arg] = Unknown(
                    f"required parameter `{param.arg}` of {func.name} has no static value"
                )
        if spec.vararg is not None:
            local[spec.vararg.arg] = tuple(args[len(positional) :])
        if spec.kwarg is not None:
            local[spec.kwarg.arg] = remaining
        return local

    def instantiate(self, cref: ClassRef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if cref.name in OPAQUE_NAMES:
            return Unknown(f"{cref.name} instance")
        if self._is_typed_dict(cref):
            return dict(kwargs)
        attrs = self.class_defaults(cref)
        fields = [
            s.target.id
            for k in reversed(self._mro(cref))
            for s in k.node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        for name, value in zip(fields, args, strict=False):
            attrs[name] = value
        attrs.update(kwargs)
        kind = "provider" if "Provider" in cref.name else "config"
        return Obj(cls=cref.name, kind=kind, attrs=attrs, class_ref=cref)

    def _call_method(self, method: BoundMethod, args: list[Any], kwargs: dict[str, Any]) -> Any:
        receiver, name = self.resolve(method.receiver), method.name
        if isinstance(receiver, Obj):
            return self._obj_method(receiver, name, args, kwargs)
        if isinstance(receiver, str):
            return self._str_method(receiver, name, args)
        if isinstance(receiver, dict):
            return self._dict_method(receiver, name, args)
        if isinstance(receiver, list):
            return self._list_method(receiver, name, args)
        if isinstance(receiver, tuple) and name in {"index", "count"} and args and is_plain(args[0]):
            return (
                getattr(receiver, name)(args[0])
                if name == "count" or args[0] in receiver
                else Unknown("no such item")
            )
        if isinstance(receiver, set) and name in {"add", "update"}:
            return None
        return Unknown(f"method {name} of a value not known statically")

    def _obj_method(self, receiver: Obj, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if receiver.class_ref is not None:
            member = self._class_member(receiver.class_ref, name)
            if isinstance(member, Func):
                return self.call_function(member, [receiver, *args], kwargs)
        if receiver.kind in {"hf", "provider"} and (name in PROVIDER_METHODS or "provider" in name):
            # e.g. "AutoBridge.from_hf_pretrained.to_megatron_provider": how the model was built
            return Obj(cls=f"{receiver.cls}.{name}", kind="provider", hf_model_id=receiver.hf_model_id)
        if receiver.cls in ARGPARSE_CLASSES:
            parser = receiver.attrs.get("_parser", receiver)
            if name == "add_argument":
                group, required = receiver.attrs.get("_group"), receiver.attrs.get("_required", False)
                parser.args.append((args, kwargs, group, required is True))
                return None
            if name == "add_argument_group":
                return Obj(cls="_ArgumentGroup", attrs={"_parser": parser})
            if name == "add_mutually_exclusive_group":
                group_id = f"group{sum(1 for _ in self.parsers) + len(parser.args)}"
                return Obj(
                    cls="_MutuallyExclusiveGroup",
                    attrs={"_parser": parser, "_group": group_id, "_required": kwargs.get("required")},
                )
            return Unknown(f"argparse {name}()")
        hf_source = next((a for a in args if isinstance(a, Obj) and a.kind == "hf"), None)
        if hf_source is not None and "provider" in name:
            return Obj(cls=f"{receiver.cls}.{name}", kind="provider", hf_model_id=hf_source.hf_model_id)
        return Unknown(f"result of {receiver.cls}.{name}()")

    def _str_method(self, receiver: str, name: str, args: list[Any]) -> Any:
        if name not in _STR_METHODS or not is_plain(args):
            return Unknown(f"str.{name} on values not known statically")
        if name == "join":
            items = self._iterable(args[0]) if args else None
            if items is None or not all(isinstance(i, str) for i in items):
                return Unknown("join of values not known statically")
            args = [items]
        if not self._small_string_result(receiver, name, args):
            return Unknown("string too large")
        try:
            result = getattr(receiver, name)(*args)
        except (TypeError, ValueError, IndexError, KeyError) as error:
            return Unknown(f"str.{name} failed: {type(error).__name__}")
        if isinstance(result, str) and len(result) > self.limits.string_size:
            return Unknown("string too large")
        return result

    def _small_string_result(self, receiver: str, name: str, args: list[Any]) -> bool:
        """Bound the size of a string method's result before computing it."""
        limit = self.limits.string_size
        if name == "join":
            return sum(len(i) for i in args[0]) + len(receiver) * len(args[0]) <= limit
        if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
            return len(receiver) + (len(receiver) + 1) * len(args[1]) <= limit
        if name == "format":
            return not _HUGE_FORMAT.search(receiver) and sum(len(str(a)) for a in args) <= limit
        return True

    def _dict_method(self, receiver: dict, name: str, args: list[Any]) -> Any:
        key = args[0] if args else None
        if name == "get":
            if not is_plain(key):
                return Unknown("dict.get with a key not known statically")
            return receiver.get(key, args[1] if len(args) > 1 else None)
        if name == "pop":
            if self.taint or not is_plain(key):
                return Unknown(self.taint[-1] if self.taint else "dict.pop with a key not known statically")
            return receiver.pop(key, args[1] if len(args) > 1 else None)
        if name == "setdefault" and is_plain(key):
            if self.taint:
                return Unknown(self.taint[-1])
            return receiver.setdefault(key, args[1] if len(args) > 1 else None)
        if name == "update" and args and isinstance(self.resolve(args[0]), dict):
            for k, v in self.resolve(args[0]).items():
                receiver[k] = self._write(v)
            return None
        if name in {"items", "keys", "values"}:
            return list(getattr(receiver, name)())
        if name == "copy":
            return dict(receiver)
        return Unknown(f"dict.{name}")

    def _list_method(self, receiver: list, name: str, args: list[Any]) -> Any:
        if name in {"append", "insert", "extend"} and len(receiver) >= self.limits.collection_size:
            return Unknown("collection too large")
        if name == "append" and args:
            receiver.append(self._write(args[0]))
            return None
        if name == "extend" and args:
            items = self._iterable(args[0])
            if items is not None:
                receiver.extend(self._write(i) for i in items)
            return None
        if name == "insert" and len(args) == 2 and isinstance(args[0], int):
            receiver.insert(args[0], self._write(args[1]))
            return None
        if name == "copy":
            return list(receiver)
        if name in {"index", "count"} and args and is_plain(args[0]) and is_plain(receiver):
            return (
                getattr(receiver, name)(args[0])
                if name == "count" or args[0] in receiver
                else Unknown("no item")
            )
        return Unknown(f"list.{name}")

    def _call_builtin(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        args = [self.resolve(a) for a in args]
        if name == "print":
            return None
        if name == "getattr" and len(args) in (2, 3) and isinstance(args[1], str):
            target, attr = args[0], args[1]
            if (
                isinstance(target, Obj)
                and attr not in target.attrs
                and target.class_ref is None
                and target.kind not in {"provider", "hf"}
            ):
                return Unknown(f"{attr} is not set statically")  # the real object may have a default
            return self.get_attr(target, attr)
        if name == "hasattr" and len(args) == 2 and isinstance(args[0], Obj) and isinstance(args[1], str):
            if self.env is not None and self.mcore is not None and args[0].kind in {"provider", "config"}:
                return args[1] in args[0].attrs or args[1] in self.mcore.transformer_fields
            return True if args[1] in args[0].attrs else Unknown("hasattr on an object not known statically")
        if name == "isinstance" and len(args) == 2:
            return self._isinstance(args[0], args[1])
        if name in {
            "list",
            "tuple",
            "set",
            "frozenset",
            "sorted",
            "reversed",
            "enumerate",
            "sum",
            "any",
            "all",
            "min",
            "max",
            "zip",
            "dict",
        }:
            return self._collection_builtin(name, args, kwargs)
        if name == "range":
            if all(isinstance(a, int) and not isinstance(a, bool) for a in args) and 1 <= len(args) <= 3:
                return range(*args)
            return Unknown("range bounds not known statically")
        if not is_plain(args) or kwargs:
            return Unknown(f"{name}() of values not known statically")
        if name == "str" and args and not isinstance(args[0], str | int | float):
            return Unknown("str() of a container")
        try:
            result = {
                "len": len,
                "int": int,
                "float": float,
                "str": str,
                "bool": bool,
                "abs": abs,
                "round": round,
            }[name](*args)
        except (TypeError, ValueError, KeyError, OverflowError) as error:
            return Unknown(f"{name}() failed: {type(error).__name__}")
        if isinstance(result, str) and len(result) > self.limits.string_size:
            return Unknown("string too large")
        return result

    def _collection_builtin(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if name == "dict":
            base = self.resolve(args[0]) if args else {}
            if isinstance(base, dict):
                return {**base, **kwargs}
            items = self._iterable(base)
            if items is not None and all(
                isinstance(i, tuple | list) and len(i) == 2 and is_plain(i[0]) for i in items
            ):
                return {**dict(items), **kwargs}
            return Unknown("dict() of values not known statically")
        if name in {"min", "max"} and len(args) > 1:
            seq: list[Any] | None = list(args)
        else:
            seq = self._iterable(args[0]) if args else []
        if seq is None:
            return Unknown(f"{name}() of values not known statically")
        if name == "list":
            return seq
        if name == "tuple":
            return tuple(seq)
        if name == "enumerate":
            return list(enumerate(seq))
        if name == "reversed":
            return list(reversed(seq))
        if name == "zip":
            others = [self._iterable(a) for a in args[1:]]
            if any(o is None for o in others):
                return Unknown("zip of values not known statically")
            return [tuple(t) for t in zip(seq, *others, strict=False)]
        if not is_plain(seq):
            return Unknown(f"{name}() of values not known statically")
        try:
            if name in {"set", "frozenset"}:
                return set(seq)
            if name == "sorted":
                return (
                    sorted(seq, reverse=bool(kwargs.get("reverse", False)))
                    if "key" not in kwargs
                    else Unknown("sorted with a key function")
                )
            return {"sum": sum, "any": any, "all": all, "min": min, "max": max}[name](seq)
        except (TypeError, ValueError) as error:
            return Unknown(f"{name}() failed: {type(error).__name__}")

    def _isinstance(self, value: Any, types: Any) -> Any:
        names = [
            t.short if isinstance(t, Ext) else getattr(t, "name", None)
            for t in (types if isinstance(types, tuple) else (types,))
        ]
        python_types = {
            "str": str,
            "int": int,
            "float": float,
            "bool": bool,
            "dict": dict,
            "list": list,
            "tuple": tuple,
        }
        if is_plain(value) and all(n in python_types for n in names):
            return isinstance(value, tuple(python_types[n] for n in names))
        if is_plain(value) and value is not None and all(n not in python_types for n in names):
            return False  # a literal is never an instance of a config class
        if isinstance(value, Obj) and value.kind != "vivified":
            if value.cls in names or self.class_ancestors.get(value.cls, set()) & set(names):
                return True
            if value.cls in self.class_ancestors and all(n in self.class_ancestors for n in names):
                return False
            if all(n in python_types for n in names):
                return False
        return Unknown("isinstance on a value not known statically")

    def _call_external(self, func: Ext, args: list[Any], kwargs: dict[str, Any]) -> Any:
        short, dotted = func.short, func.dotted
        if short == "replace" and args and isinstance(self.resolve(args[0]), Obj):
            original = self.resolve(args[0])
            return Obj(
                cls=original.cls,
                kind=original.kind,
                attrs={**original.attrs, **kwargs},
                hf_model_id=original.hf_model_id,
                class_ref=original.class_ref,
            )
        if short == "partial" and args:
            return Partial(args[0], list(args[1:]), dict(kwargs))
        if short == "cast" and len(args) == 2:
            return args[1]
        if short in {"deepcopy", "copy"} and len(args) == 1:
            return clone(self.resolve(args[0]))
        if short == "field" and not args:
            return kwargs["default"] if "default" in kwargs else Unknown("dataclass default_factory")
        if short in HF_CONSTRUCTORS or short.startswith("PreTrained"):
            label = ".".join(dotted.split(".")[-2:]) if short in HF_CONSTRUCTORS else short
            source = (
                self.resolve(args[0]) if args else self.resolve(kwargs.get("pretrained_model_name_or_path"))
            )
            if isinstance(source, Obj) and source.kind == "hf":
                return Obj(cls=label, kind="hf", hf_model_id=source.hf_model_id)
            model_id = source if isinstance(source, str) else None
            if model_id is None:
                self.notes["hf_model_id"] = "model id passed to the HF loader is not known statically"
            return Obj(cls=label, kind="hf", hf_model_id=model_id)
        if self.env is not None and dotted == "torch.cuda.is_available":
            return self.env.cuda
        if self.env is not None and dotted == "torch.cuda.get_device_properties":
            if not self.env.cuda:
                raise RaiseSignal("RuntimeError: no CUDA device")
            env = self.env
            return Obj(
                cls="_CudaDeviceProperties",
                attrs={"name": env.device_name, "major": env.major, "minor": env.minor},
            )
        if dotted == "re.compile" and args and isinstance(args[0], str):
            return args[0]  # the pattern text is what a catalog can use
        if short in MIXED_PRECISION_PRESETS or short.endswith(
            tuple(f"_{p}" for p in MIXED_PRECISION_PRESETS)
        ):
            return Obj(cls=short, kind="config")
        if short == "get_mixed_precision_config" and args and isinstance(args[0], str):
            return Obj(cls=args[0], kind="config")
        if dotted in {"os.environ.get", "os.getenv"} and args and isinstance(args[0], str):
            default = args[1] if len(args) > 1 else kwargs.get("default")
            self.notes[f"env:{args[0]}"] = "value can be overridden by this environment variable"
            return default if default is not None else Unknown(f"environment variable {args[0]}")
        if dotted == "os.path.join" and args and all(isinstance(a, str) for a in args):
            return "/".join(a.rstrip("/") for a in args)
        if CAMEL.match(short) and short not in OPAQUE_NAMES:
            kind = "provider" if "Provider" in short else "config"
            if short in ARGPARSE_CLASSES:
                parser = Obj(cls=short, kind="config")
                self.parsers.append(parser)
                return parser
            return Obj(cls=short, kind=kind, attrs=dict(kwargs), args=list(args))
        return Unknown(f"result of {dotted}()")


def _same(left: Any, right: Any) -> bool:
    """Plain values compare by value; anything else by identity."""
    if left is right:
        return True
    return is_plain(left) and is_plain(right) and left == right


def clone(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """Deep copy of interpreter values (for `copy.deepcopy` in recipes)."""
    memo = memo if memo is not None else {}
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, Obj):
        copied = Obj(
            cls=value.cls,
            kind=value.kind,
            hf_model_id=value.hf_model_id,
            class_ref=value.class_ref,
            args=list(value.args),
        )
        memo[id(value)] = copied
        copied.attrs = {k: clone(v, memo) for k, v in value.attrs.items()}
        return copied
    if isinstance(value, dict):
        return {k: clone(v, memo) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v, memo) for v in value]
    if isinstance(value, tuple):
        return tuple(clone(v, memo) for v in value)
    return value
