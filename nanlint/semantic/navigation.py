"""Finding one's way in a file's tree: the scope a node runs in, its enclosing
definitions, whether a name is read or stored, and every variable ``Name`` of the file
by identifier (collected once per file)."""

from __future__ import annotations

import libcst as cst

from nanlint.semantic.context import FileContext
from nanlint.semantic.resolve import Scope
from nanlint.source.walk import FastVisitor


def scope_at(ctx: FileContext, node: cst.CSTNode) -> Scope:
    n: cst.CSTNode | None = node
    while n is not None:
        scope = ctx.index.scopes.get(id(n))
        if scope is not None:
            return scope
        n = ctx.parent(n)
    return ctx.index.module_scope


def enclosing(ctx: FileContext, node: cst.CSTNode, kinds) -> cst.CSTNode | None:
    n = ctx.parent(node)
    while n is not None and not isinstance(n, kinds):
        n = ctx.parent(n)
    return n


def inside(ctx: FileContext, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    n: cst.CSTNode | None = node
    while n is not None:
        if n is ancestor:
            return True
        n = ctx.parent(n)
    return False


def precedes(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` comes before ``b`` in the file, neither inside the other (a node made by the
    index, not in the tree, precedes nothing)."""
    chain: list[cst.CSTNode] = []
    n: cst.CSTNode | None = a
    while n is not None:
        chain.append(n)
        n = ctx.parent(n)
    position = {id(x): i for i, x in enumerate(chain)}
    if id(b) in position:
        return False  # a is inside b
    below, n = b, ctx.parent(b)
    while n is not None and id(n) not in position:
        below, n = n, ctx.parent(n)
    if n is None or position[id(n)] == 0:
        return False
    above = chain[position[id(n)] - 1]
    for child in n.children:
        if child is above:
            return True
        if child is below:
            return False
    return False


def stored(ctx: FileContext, name: cst.Name) -> bool:
    """``name`` is a binding target (``x = ``, ``for x in``, ``as x``, ``del x``), not a read."""
    n: cst.CSTNode = name
    parent = ctx.parent(n)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        n, parent = parent, ctx.parent(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Del)):
        return True
    return isinstance(parent, (cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is n


def local_reads(ctx: FileContext, stmt: cst.CSTNode, name: str, flow: bool = False) -> list[cst.Name] | None:
    """The reads of the local ``name`` that ``stmt`` assigns, in its function (with ``flow``,
    only those the value flow gives ``stmt``'s binding); None where ``name`` is not a
    function's own (a module or class attribute, ``global``, ``nonlocal``: read from anywhere)."""
    fdef = enclosing(ctx, stmt, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not isinstance(fdef, cst.FunctionDef):
        return None
    scope = ctx.index.scopes.get(id(fdef))
    if scope is None or name in scope.globals or any(
            isinstance(b.node, cst.Nonlocal) for b in scope.bindings.get(name, ())):
        return None
    reads = [n for n in variable_names(ctx).get(name, ()) if not stored(ctx, n) and inside(ctx, n, fdef.body)]
    if flow:
        reads = [n for n in reads if _reached_by(ctx, n, stmt)]
    return reads


def _reached_by(ctx: FileContext, name: cst.Name, stmt: cst.CSTNode) -> bool:
    """This read may see the value ``stmt`` binds (a read in a nested function sees every binding)."""
    found = ctx.reaching(name, scope_at(ctx, name))
    return found is None or any(b.node is stmt for b in found[0])


def self_attributes(ctx: FileContext) -> dict[str, list[cst.Attribute]]:
    """Every ``self.<name>`` of the file, by name; computed once per file, on first use."""
    return ctx.memo("navigation.self_attributes", lambda: _collect_self_attributes(ctx))


def _collect_self_attributes(ctx: FileContext) -> dict[str, list[cst.Attribute]]:
    """In the order a right-to-left preorder walk meets them (the reverse of a left-to-right
    postorder's), as the first version's stack of ``children`` did: its users stop at the first
    read that decides.  libcst's ``children`` cost 7x the walk (issue 22: a second of the
    research corpus's ten, on tensor2tensor's 6,000-line ``common_attention.py``)."""
    found = _SelfAttributes()
    found.walk(ctx.module)
    for uses in found.out.values():
        uses.reverse()
    return found.out


class _SelfAttributes(FastVisitor):
    def __init__(self) -> None:
        self.out: dict[str, list[cst.Attribute]] = {}

    def leave_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.out.setdefault(node.attr.value, []).append(node)


def variable_names(ctx: FileContext) -> dict[str, list[cst.Name]]:
    """Every ``Name`` of the file that names a variable (not an attribute, keyword or
    definition), by identifier; computed once per file, on first use."""
    return ctx.memo("navigation.variable_names", lambda: _collectvariable_names(ctx))


def variable_names_in(ctx: FileContext, node: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """:func:`variable_names` of the subtree ``node`` only (a function's body), not memoised:
    for a question about one function, where the whole file's would cost a walk of the module."""
    found: dict[str, list[cst.Name]] = {}
    _NameCollector(found, ctx).walk(node)
    return found


def _collectvariable_names(ctx: FileContext) -> dict[str, list[cst.Name]]:
    found: dict[str, list[cst.Name]] = {}
    _NameCollector(found, ctx).walk(ctx.module)
    return found


class _NameCollector(FastVisitor):
    def __init__(self, out: dict[str, list[cst.Name]], ctx: FileContext) -> None:
        self.out, self.ctx = out, ctx

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, cst.NameItem) or (isinstance(parent, cst.Arg) and parent.keyword is node) or (
                isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)) and parent.name is node):
            return
        self.out.setdefault(node.value, []).append(node)

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False
