"""What a file's names may be given, read from CPython's tree for the gates that follow a
value through names (NAN111's, :mod:`nanlint.analysis.gates.statistic_sites`, in its own
walk, with returns): pieces of an over-approximation of
:meth:`nanlint.semantic.context.FileContext.resolve`, which follows assignments (any target,
``for``, ``with``, ``:=``), parameters (the arguments at the function's call sites, by
position or keyword; a default) and names imported from the project's modules."""

from __future__ import annotations

import ast

from nanlint.semantic.modules import SKIP_ROOTS
from nanlint.source.ast_tree import statements

MODEL_ENTRIES = frozenset({"forward", "call", "__call__"})  # what a model object's call runs
def targets(node: ast.AST) -> set[str]:
    """The names and attribute names a target binds (``a``, ``self.s``, ``(m, v)``, ``x[i]``:
    ``x``, which then holds the value).  ``self.s = v`` binds ``s``, not ``self``: the object
    whose attribute is set is read, and its value (what reach gives a use of ``self``) is
    unchanged; counting it made every ``self.x`` of a pipeline that sets one attribute to
    ``len(...) - 1`` a possible statistic."""
    kind = type(node)
    if kind is ast.Name:
        return {node.id}
    if kind is ast.Attribute:
        return {node.attr}
    if kind is ast.Subscript or kind is ast.Starred:
        return targets(node.value)
    if kind is ast.Tuple or kind is ast.List:
        return set().union(*map(targets, node.elts)) if node.elts else set()
    out = set()  # any other expression (a with-item's target is one of the above)
    for n in ast.walk(node):
        if type(n) is ast.Name:
            out.add(n.id)
        elif type(n) is ast.Attribute:
            out.add(n.attr)
    return out


def returned(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The values ``func`` returns (a nested function's too: more, never fewer)."""
    return [r.value for r in statements(func.body) if type(r) is ast.Return and r.value is not None]


def project_module(node: ast.ImportFrom | ast.alias) -> bool:
    """An import of the project's own code (relative, or not a library's: the roots the
    checks never follow into, :data:`nanlint.semantic.modules.SKIP_ROOTS`)."""
    if type(node) is ast.ImportFrom:
        return bool(node.level) or (node.module or "").split(".")[0] not in SKIP_ROOTS
    return node.name.split(".")[0] not in SKIP_ROOTS


def signature(args: ast.arguments) -> tuple[list[str], set[str], str | None, str | None]:
    """(positional parameters, after ``self``/``cls``; every named one; ``*args``; ``**kwargs``)."""
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    named = set(positional) | {a.arg for a in args.kwonlyargs}
    return positional, named, args.vararg.arg if args.vararg else None, args.kwarg.arg if args.kwarg else None


def bound_by(call: ast.Call, sig, test) -> set[str]:
    """The parameters of ``sig`` that an argument of ``call`` passing ``test`` binds."""
    positional, named, vararg, kwarg = sig
    out: set[str] = set()
    everything = named | {n for n in (vararg, kwarg) if n}
    for i, a in enumerate(call.args):
        if type(a) is ast.Starred:
            if test(a.value):
                return everything
        elif test(a):
            target = positional[i] if i < len(positional) else vararg
            if target:
                out.add(target)
    for k in call.keywords:
        if test(k.value):
            if k.arg is None:
                return everything
            target = k.arg if k.arg in named else kwarg
            if target:
                out.add(target)
    return out


def chain_root(node: ast.expr) -> str | None:
    """The name a dotted chain starts from (``a`` of ``a.b.c``), else None."""
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None
