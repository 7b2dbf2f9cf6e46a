"""Where the zero rules (NAN107, NAN108, NAN206) can start, read from CPython's tree: a
taint from the sources of 0 to the operands of their sinks, for the site filter
(``Rule.site``).

A source is a call spelled like a source op (a softmax, a relu, a clamp), a comparison or
a mask (its count), a matmul, a zero literal, or a call of a name imported from another
module.  Taint flows through the file's names, attribute names, the returns of its
functions and classes and the parameters their call sites bind, in any scope: an
over-approximation of what the value flow (:mod:`nanlint.reach`) can find, never less.
A name bound to a literal 0 is a source only when that is its one binding in the file
(the rules count a constant only as the one value reaching a sink).
"""

from __future__ import annotations

import ast

from nanlint.sites import statements
from nanlint.syntax_sites import callee, calls, literal


def _zero_literal(node: ast.expr) -> bool:
    """A constant at most 0, a list or tuple literal holding one, a tensor made of one."""
    if type(node) is ast.Call and node.args and type(node.args[0]) in (ast.List, ast.Tuple):
        node = node.args[0]  # torch.tensor([0., 1.])
    if type(node) in (ast.List, ast.Tuple):
        return any(_zero_literal(e) for e in node.elts if type(e) is not ast.Starred)
    value = literal(node)
    return value is not None and value <= 0


class _Uses:
    """What an expression reads: names, attribute names, called names, and whether it
    holds a source itself (a source op's call, a comparison, a matmul, a zero literal)."""

    __slots__ = ("names", "attrs", "calls", "root", "zero")

    def __init__(self, nodes, sources: frozenset[str]) -> None:
        self.names: set[str] = set()
        self.attrs: set[str] = set()
        self.calls: set[str] = set()
        self.root = False
        self.zero = False  # the value itself is a zero literal (an accumulator's start, a literal list)
        for node in nodes:
            if node is None:
                continue
            for n in ast.walk(node):
                kind = type(n)
                if kind is ast.Name:
                    self.names.add(n.id)
                elif kind is ast.Attribute:
                    self.attrs.add(n.attr)
                elif kind is ast.Call:
                    func = n.func
                    name = callee(func)
                    if name is not None:
                        if name in sources:
                            self.root = True
                        self.calls.add(name)
                elif (kind is ast.Compare or (kind is ast.BinOp and type(n.op) in (ast.MatMult, ast.BitAnd, ast.BitOr))
                        or (kind is ast.UnaryOp and type(n.op) is ast.Invert)):
                    self.root = True  # a mask (its count), an affine output
                elif kind is ast.Constant and type(n.value) is str and n.value in sources:
                    self.root = True  # activation="softmax"
            if _zero_literal(node):
                self.zero = True  # the value itself is 0 (or below), or a literal holding 0


def zero_sinks(tree: ast.Module, text: str, sinks: frozenset[str], sources: frozenset[str],
               divide: bool = False, power=None) -> bool:
    """Whether an operand of a sink (a call spelled with one of ``sinks``, a ``/`` when
    ``divide``, ``x ** p`` when ``power(p)``) may hold a value computed from a source: a
    call spelled with one of ``sources``, a comparison (a mask to count), a matmul, a
    literal 0, through the names, attributes, returns and parameters of the file (in any
    scope: a taint over names, not a flow): where the zero rules (NAN107/NAN108/NAN206)
    can report on values the file shows.

    Searched backwards from the sinks' operands, reading an expression only when the
    search needs it (most files have few sinks and many assignments)."""
    every = sinks | sources
    operands: list[ast.AST | None] = []
    for call, name in calls(tree, text, every):
        if name is None:
            return True  # a sink or source bound to another name: anything may be one
        if name in sinks:
            operands.extend([*call.args, *(k.value for k in call.keywords),
                             call.func.value if type(call.func) is ast.Attribute else None])
    flows: dict[tuple[str, str], list[ast.AST]] = {}  # target (kind, name) -> the values bound to it
    returns: dict[str, list[ast.AST]] = {}  # def or class name -> its returns' values
    params: dict[str, list[ast.arguments]] = {}  # def name -> the parameters of each def of it
    arguments: dict[str, list[tuple[int | str, ast.AST]]] = {}  # callee -> (position or keyword, -1: any; argument)
    methods: dict[str, list[str]] = {}  # class name -> its methods' names
    free: set[str] = set()  # a lambda's parameters: whatever it is applied to
    owners: list[tuple[str, ast.AST]] = [("", tree)]
    while owners:
        owner, scope = owners.pop()
        for n in _pruned(scope):
            k = type(n)
            if k in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                owners.append((n.name, n))
                if k is ast.ClassDef:
                    methods.setdefault(n.name, []).extend(
                        m.name for m in n.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef))
                else:
                    params.setdefault(n.name, []).append(n.args)
                continue
            if k is ast.Assign:
                for target in n.targets:
                    for t in _targets(target):
                        flows.setdefault(t, []).append(n.value)
            elif k in (ast.AugAssign, ast.AnnAssign, ast.NamedExpr) and n.value is not None:
                for t in _targets(n.target):
                    flows.setdefault(t, []).append(n.value)
                if k is ast.AugAssign and divide and type(n.op) is ast.Div:
                    operands.append(n.value)  # x /= n
            elif k in (ast.For, ast.AsyncFor, ast.comprehension):
                for t in _targets(n.target):
                    flows.setdefault(t, []).append(n.iter)
            elif k is ast.withitem and n.optional_vars is not None:
                for t in _targets(n.optional_vars):
                    flows.setdefault(t, []).append(n.context_expr)
            elif k in (ast.Return, ast.Yield) and n.value is not None and owner:
                returns.setdefault(owner, []).append(n.value)
            elif k is ast.Lambda:
                a = n.args
                free.update(p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if p)
            elif k is ast.Call:
                func = n.func
                name = callee(func)
                if name is not None:
                    shift = 1 if type(func) is ast.Attribute else 0  # a method's self
                    sites = arguments.setdefault(name, [])
                    sites.extend((-1 if type(arg) is ast.Starred else i + shift, arg) for i, arg in enumerate(n.args))
                    sites.extend((-1 if kw.arg is None else kw.arg, kw.value) for kw in n.keywords)
            elif k is ast.BinOp and ((divide and type(n.op) is ast.Div) or
                                     (power is not None and type(n.op) is ast.Pow and power(n.right))):
                operands.append(n.right if type(n.op) is ast.Div else n.left)
    operands = [o for o in operands if o is not None]
    if not operands:
        return False
    # a name imported from a module (``from .features import activations``): its value may be
    # a source there, so calling it (or constructing it: a model) is one
    imported = {a.asname or a.name for n in statements(tree.body) if type(n) is ast.ImportFrom
                for a in n.names if a.name != "*"}
    parameters: dict[str, list[tuple[str, int | str]]] = {}  # parameter name -> (its def, positions binding it)
    for name, defs in params.items():
        for where in {w for w, _ in arguments.get(name, ())}:
            for p in _parameters(defs, where) - {"self", "cls"}:  # objects: their attributes flow
                parameters.setdefault(p, []).append((name, where))

    seen: set = set()
    work: list[tuple[ast.AST, bool]] = [(o, True) for o in operands]  # (expression, may its zero literal count)
    while work:
        node, zero = work.pop()
        uses = _Uses([node], sources)
        if uses.root or (zero and uses.zero) or not uses.names.isdisjoint(free) \
                or not uses.calls.isdisjoint(imported):
            return True
        for key in [("name", n) for n in uses.names] + [("attr", a) for a in uses.attrs] + \
                [("call", c) for c in uses.calls]:
            if key in seen:
                continue
            seen.add(key)
            kind, name = key
            if kind == "call":
                for owner in [name, *methods.get(name, ())]:  # a class returns what its methods return
                    work.extend((v, True) for v in returns.get(owner, ()))
                continue
            values = flows.get(key, ())
            # a name bound to a literal 0 is a source only when that is its one binding in the file
            work.extend((v, len(values) == 1) for v in values)
            if kind == "name":
                for owner, where in parameters.get(name, ()):
                    work.extend((arg, True) for w, arg in arguments.get(owner, ()) if w == where)
    return False


def _parameters(defs: list[ast.arguments], where: int | str) -> set[str]:
    """The parameters an argument at position ``where`` (an index counting a method's
    self, a keyword, or -1: any) can bind, in any of the defs of that name."""
    out: set[str] = set()
    for a in defs:
        positional = [*a.posonlyargs, *a.args]
        every = [p.arg for p in [*positional, *a.kwonlyargs, a.vararg, a.kwarg] if p]
        if where == -1:
            out.update(every)
        elif isinstance(where, int):
            for i in (where, where - 1):  # a method called through its class, or a function
                if 0 <= i < len(positional):
                    out.add(positional[i].arg)
            if a.vararg is not None:
                out.add(a.vararg.arg)
        else:
            out.add(where if where in every else a.kwarg.arg if a.kwarg else where)
    return out


def _pruned(scope: ast.AST):
    """The nodes under ``scope``, not descending into the functions and classes defined
    there (they are yielded, to be walked as scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        yield n
        if type(n) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(n))


def _targets(node: ast.expr) -> list[tuple[str, str]]:
    out = []
    for n in ast.walk(node):
        if type(n) is ast.Name:
            out.append(("name", n.id))
        elif type(n) is ast.Attribute:
            out.append(("attr", n.attr))
    return out
