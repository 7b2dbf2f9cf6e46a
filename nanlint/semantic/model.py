"""The shape of the semantic model, for the modules the model itself is built from.

:class:`nanlint.semantic.context.FileContext` is the model a rule queries; the modules
it delegates to (``reach``, ``models``, ``handwritten``, ``modules``) ask it questions
back (the values of a name inside a returned expression, the op of a layer). They name
it through :class:`Model`, declared here, below all of them, so that no module of the
layer imports the one that imports it. :class:`OpCall`, a resolved framework call, lives
here for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import libcst as cst

from nanlint.semantic.resolve import Binding, Index, Scope
from nanlint.vocabulary.ops import Fn, Framework


@dataclass(eq=False)
class OpCall:
    """A call of a framework op: ``tf.math.log(p)``, ``F.softmax(z, dim=1)`` or ``x.softmax(-1)``."""

    op: str
    framework: Framework
    fn: Fn
    node: cst.Call
    scope: Scope
    qualname: str | None  # None for tensor methods
    receiver: cst.BaseExpression | None  # the tensor of a method call (role x)
    args: dict[str, cst.Arg]  # role -> the Arg that supplies it (not for the receiver)

    @property
    def is_method(self) -> bool:
        return self.receiver is not None

    def value(self, role: str) -> cst.BaseExpression | None:
        if role == "x" and self.receiver is not None:
            return self.receiver
        a = self.args.get(role)
        return a.value if a is not None else None

    @property
    def x(self) -> cst.BaseExpression | None:
        return self.value("x")

    def has(self, role: str) -> bool:
        return self.value(role) is not None


class Model(Protocol):
    """What the model's own modules ask of one file's model (FileContext implements it)."""

    module: cst.Module
    path: str
    settings: dict
    index: Index

    def code(self, node: cst.CSTNode) -> str: ...

    def op_call(self, node: cst.CSTNode, scope: Scope) -> OpCall | None: ...

    def op_of(self, expr: cst.BaseExpression | None, scope: Scope, *ops: str,
              follow: bool = True) -> tuple[OpCall, object] | None: ...

    def values(self, expr: cst.BaseExpression, scope: Scope, shape: bool = False,
               calls: bool = True) -> list: ...

    def resolve(self, expr: cst.BaseExpression, scope: Scope, depth: int = 4, functions: bool = False): ...

    def arithmetic(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression: ...

    def returns_of(self, call: cst.BaseExpression, scope: Scope) -> tuple[Scope, list[cst.Return]] | None: ...

    def reaching(self, name: cst.Name, scope: Scope) -> tuple[tuple[Binding, ...], Scope] | None: ...

    def same_values_at(self, use: cst.Name, expr: cst.BaseExpression, scope: Scope) -> bool: ...

    def call_sites(self, fscope: Scope) -> list[tuple[cst.Call, Scope]]: ...

    def line_of(self, node: cst.CSTNode) -> int: ...

    def file_line(self, node: cst.CSTNode) -> int: ...

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None: ...
