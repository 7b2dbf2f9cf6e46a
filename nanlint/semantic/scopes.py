"""What a scope binds: the data :class:`nanlint.semantic.resolve.Index` records for each name
of a file (a scope, its bindings, what its statements change in place)."""

from __future__ import annotations

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
    scope: "Scope | None" = None  # where the binding statement runs (set by the index)
    path: tuple[int, ...] = ()  # for UNPACK: the element's position in the target
    # for ``from M import n``: (level of the relative import, M, n); ``import M``: (0, M, None)
    source: tuple[int, str | None, str | None] | None = None


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
