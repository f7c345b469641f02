"""Abstract values of the recipe interpreter: what a name can hold when nothing is executed."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known statically, with the reason why."""

    reason: str


@dataclass(frozen=True)
class Ext:
    """A name imported from code we do not follow (torch, megatron.core, the bridge runtime)."""

    dotted: str

    @property
    def short(self) -> str:
        return self.dotted.rsplit(".", 1)[-1]


@dataclass(eq=False)
class Obj:
    """A mutable attribute bag: config containers, providers, dataclass instances.

    kind: "config" (built by a constructor), "hf" (an AutoBridge/AutoConfig handle), "provider"
    (a model provider), "vivified" (created by reading a missing attribute; holds writes only).
    """

    cls: str
    kind: str = "config"
    attrs: dict[str, Any] = field(default_factory=dict)
    hf_model_id: str | None = None
    class_ref: ClassRef | None = None
    args: list[Any] = field(default_factory=list)
    # (name, relpath, line) of the first module-level assignment that bound this object.
    origin: tuple[str, str, int] | None = None


@dataclass(eq=False)
class Module:
    name: str
    relpath: str
    is_package: bool
    namespace: dict[str, Any] = field(default_factory=dict)
    all_names: list[str] | None = None


@dataclass(eq=False)
class Func:
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    module: Module
    closure: list[dict[str, Any]] = field(default_factory=list)


@dataclass(eq=False)
class ClassRef:
    name: str
    node: ast.ClassDef
    module: Module
    body_ns: dict[str, Any] | None = None
    bases: list[Any] | None = None


@dataclass(eq=False)
class Partial:
    func: Any
    args: list[Any]
    kwargs: dict[str, Any]


@dataclass(eq=False)
class LazyImport:
    """`from module import name`, resolved on first use so unused imports cost nothing."""

    module: str
    attr: str


@dataclass(eq=False)
class BoundMethod:
    receiver: Any
    name: str


@dataclass(frozen=True)
class Builtin:
    name: str


@dataclass(eq=False)
class EnvDependent:
    """A value an upstream helper sets differently per run-time environment (the GPU, CUDA present or not).

    by_env maps an environment name ("h100", "gb200", "no_cuda", ...) to the value there; raises maps an
    environment to the error the helper raises in it. rule names the call, source is "relpath:line" of the
    helper's definition.
    """

    by_env: dict[str, Any]
    raises: dict[str, str]
    rule: str
    source: str
