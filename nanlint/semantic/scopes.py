"""What a scope binds: the data :class:`nanlint.semantic.resolve.Index` records for each name
of a file (a scope, its bindings, what its statements change in place).

A binding refers to the scope its statement runs in weakly: that scope (or the one the name
is bound in) holds the binding, and a reference back would be a cycle, which leaves the whole
file's model, its trees included, to the cyclic collector instead of reference counting
(``tests/test_collector.py``). The index keeps every scope alive as long as itself."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import libcst as cst

IMPORT, ASSIGN, OTHER = "import", "assign", "other"
UNPACK = "unpack"  # ``a, b = value``: element ``path`` of ``value``


@dataclass(eq=False)
class Binding:
    kind: str  # IMPORT | ASSIGN | OTHER
    node: cst.CSTNode  # the statement (or def/param) that binds
    qualname: str | None = None  # for IMPORT
    value: cst.BaseExpression | None = None  # for ASSIGN
    conditional: bool = False
    path: tuple[int, ...] = ()  # for UNPACK: the element's position in the target
    # for ``from M import n``: (level of the relative import, M, n); ``import M``: (0, M, None)
    source: tuple[int, str | None, str | None] | None = None
    _scope: "weakref.ref[Scope] | None" = field(default=None, repr=False)

    @property
    def scope(self) -> "Scope | None":
        """Where the binding statement runs (set by the index; held weakly, above)."""
        ref = self._scope
        return ref() if ref is not None else None

    @scope.setter
    def scope(self, scope: "Scope | None") -> None:
        self._scope = weakref.ref(scope) if scope is not None else None


@dataclass(eq=False)
class Scope:
    kind: str  # module | function | class | lambda | comprehension
    parent: "Scope | None"
    node: cst.CSTNode
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    # ``self.attr = value`` assignments made in this class's methods (class scopes only)
    attributes: dict[str, list[Binding]] = field(default_factory=dict)
    # function scopes: the ``return`` statements of this function (not of nested ones)
    returns: list[cst.Return] = field(default_factory=list)
    generator: bool = False  # the function yields
    # changed in place, by dotted name: ``m[m == 0] = 1`` (the Assign), ``m.clamp_(min=eps)`` (the Call)
    mutations: dict[str, list[cst.CSTNode]] = field(default_factory=dict)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def module(self) -> "Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def enclosing_class(self) -> "Scope | None":
        """The class scope whose method this scope is, if any."""
        s = self
        while s is not None and s.kind != "function":
            s = s.parent
        if s is not None and s.parent is not None and s.parent.kind == "class":
            return s.parent
        return None
