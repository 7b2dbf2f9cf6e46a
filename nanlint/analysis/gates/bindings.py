"""What a file's names may be given, read from CPython's tree for the gates that follow a
value through names (:mod:`nanlint.analysis.gates.root_sites`; NAN111's gate reads the same
facts in its own walk, with returns): an over-approximation of
:meth:`nanlint.semantic.context.FileContext.resolve`, which follows assignments (any target,
``for``, ``with``, ``:=``), parameters (the arguments at the function's call sites, by
position or keyword; a default) and names imported from the project's modules."""

from __future__ import annotations

import ast

from nanlint.semantic.modules import SKIP_ROOTS
from nanlint.source.ast_tree import nodes, statements

_ROUNDS = 12  # fixpoint rounds before the answer is "anything"
MODEL_ENTRIES = frozenset({"forward", "call", "__call__"})  # what a model object's call runs
_LAST: list = [None, None]  # the last tree, its Bindings
_BINDS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension,
                    ast.withitem, ast.ImportFrom, ast.Import, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
                    ast.Lambda, ast.Call})


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


class Bindings:
    """The flows of values into names of one file (one walk): ``closure(test)`` is every
    name some value passing ``test`` may reach."""

    def __init__(self, tree: ast.Module) -> None:
        self.flows: list[tuple[list[ast.expr], set[str]]] = []  # values -> the names they bind
        self.calls: list[tuple[str, ast.Call]] = []
        self.params: dict[str, list] = {}  # function (or class: its __init__) name -> signatures
        self.project: set[str] = set()  # names imported from the project's modules: anything
        for node in nodes(tree, *_BINDS):
            kind = type(node)
            if kind is ast.Call:
                f = node.func
                name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
                if name is not None:
                    self.calls.append((name, node))
            elif kind is ast.Assign:
                self.flows.append(([node.value], set().union(*map(targets, node.targets))))
            elif kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.NamedExpr:
                if node.value is not None:
                    self.flows.append(([node.value], targets(node.target)))
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                self.flows.append(([node.iter], targets(node.target)))
            elif kind is ast.withitem:
                if node.optional_vars is not None:
                    self.flows.append(([node.context_expr], targets(node.optional_vars)))
            elif kind is ast.ImportFrom:
                if project_module(node):
                    self.project.update(a.asname or a.name for a in node.names)
            elif kind is ast.Import:
                self.project.update(a.asname or a.name.split(".")[0] for a in node.names if project_module(a))
            elif kind is ast.ClassDef:
                for stmt in node.body:  # ``Norm(x.std())`` binds its __init__'s parameters
                    if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == "__init__":
                        self.params.setdefault(node.name, []).append(signature(stmt.args))
            else:  # a function or a lambda
                sig = signature(node.args)
                defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
                if defaults:
                    self.flows.append((defaults, sig[1] | {n for n in sig[2:] if n}))
                if kind is not ast.Lambda:
                    self.params.setdefault(node.name, []).append(sig)

    @staticmethod
    def of(tree: ast.Module) -> "Bindings":
        """The file's bindings, remembered for the last tree (several gates read them)."""
        if _LAST[0] is not tree:
            _LAST[:] = [tree, Bindings(tree)]
        return _LAST[1]

    def closure(self, test) -> set[str] | None:
        """The names a value passing ``test(value, known)`` may reach (with the project's
        names), to a fixpoint; None when it is not reached in ``_ROUNDS`` rounds."""
        known = set(self.project)
        for _ in range(_ROUNDS):
            before = len(known)
            for values, names in self.flows:
                if not names <= known and any(test(v, known) for v in values):
                    known |= names
            for name, call in self.calls:
                for sig in self.params.get(name, ()):
                    known |= bound_by(call, sig, lambda v: test(v, known))
            if len(known) == before:
                return known
        return None


def chain_root(node: ast.expr) -> str | None:
    """The name a dotted chain starts from (``a`` of ``a.b.c``), else None."""
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None


def named(e: ast.expr, known: set[str], test) -> bool:
    """Whether a name, an attribute or an index of a value may hold what ``known`` (a
    :meth:`Bindings.closure`) names: the name, the attribute's name or its chain's root; for
    ``v[i]``, ``test(v, known)``."""
    kind = type(e)
    if kind is ast.Name:
        return e.id in known
    if kind is ast.Attribute:
        return e.attr in known or chain_root(e) in known
    if kind is ast.Subscript:
        return test(e.value, known)
    return False
